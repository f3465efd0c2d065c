package io.inferencebench.operator.metrics;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.MetricsSpec;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.operator.Labels;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.jboss.logging.Logger;

/**
 * Where a run's server metrics are scraped: every ready endpoint of the target Service (its
 * EndpointSlices) on the pod-side port of {@code spec.target.service.port}, or {@code
 * spec.metrics.port} by number or by name (a Service port name, else a container port name of the
 * endpoint's pod), or the target URL. A replica whose endpoint cannot be found gets the reason
 * instead, naming the field, for its coverage errors.
 */
public final class MetricsEndpoints {

    private static final Logger LOG = Logger.getLogger(MetricsEndpoints.class);

    private final KubernetesClient client;

    public MetricsEndpoints(KubernetesClient client) {
        this.client = client;
    }

    /**
     * Where one replica's metrics are: a URL, or why there is none (for its coverage errors).
     *
     * @param uri the metrics URL, or {@code null}
     * @param problem what is wrong, naming the field, or {@code null}
     */
    record MetricsEndpoint(URI uri, String problem) {}

    /** Replica name to metrics endpoint of every ready endpoint (or the target URL). */
    Map<String, MetricsEndpoint> resolve(BenchmarkRun run) {
        TargetSpec target = run.getSpec().getTarget();
        MetricsSpec metrics = run.getSpec().getMetrics();
        IntOrString port = metrics.getPort();
        String portName = port == null ? null : port.getStrVal();
        Map<String, MetricsEndpoint> endpoints = new java.util.TreeMap<>();
        if (target.getUrl() != null) {
            URI base = URI.create(target.getUrl());
            if (portName != null) {
                endpoints.put(
                        base.getHost(),
                        new MetricsEndpoint(
                                null,
                                "spec.metrics.port: the port name '"
                                        + portName
                                        + "' needs spec.target.service (a URL target has no"
                                        + " port names); give a number"));
                return endpoints;
            }
            int number = port != null ? port.getIntVal() : base.getPort();
            endpoints.put(
                    base.getHost(),
                    new MetricsEndpoint(
                            URI.create(
                                    base.getScheme()
                                            + "://"
                                            + base.getHost()
                                            + (number > 0 ? ":" + number : "")
                                            + metrics.getPath()),
                            null));
            return endpoints;
        }
        String scheme = target.getService().getScheme();
        String namespace = run.getMetadata().getNamespace();
        String servicePortName = portName == null && port == null ? servicePortName(run) : null;
        for (ReadyEndpoint ready : readyEndpoints(run)) {
            EndpointSlice slice = ready.slice();
            Endpoint endpoint = ready.endpoint();
            int defaultPort =
                    port != null && portName == null
                            ? port.getIntVal()
                            : podSidePort(slice, servicePortName, target.getService().getPort());
            String address = endpoint.getAddresses().getFirst();
            String replica =
                    endpoint.getTargetRef() != null && endpoint.getTargetRef().getName() != null
                            ? endpoint.getTargetRef().getName()
                            : address;
            PortLookup lookup =
                    portName == null
                            ? new PortLookup(defaultPort, null)
                            : portByName(portName, target, namespace, slice, endpoint);
            if (lookup.problem() != null) {
                endpoints.put(replica, new MetricsEndpoint(null, lookup.problem()));
                continue;
            }
            String host = address.contains(":") ? "[" + address + "]" : address;
            endpoints.put(
                    replica,
                    new MetricsEndpoint(
                            URI.create(
                                    scheme
                                            + "://"
                                            + host
                                            + ":"
                                            + lookup.port()
                                            + metrics.getPath()),
                            null));
        }
        return endpoints;
    }

    private record PortLookup(int port, String problem) {}

    private record ReadyEndpoint(EndpointSlice slice, Endpoint endpoint) {}

    /** The ready endpoints with an address in the target Service's EndpointSlices. */
    private List<ReadyEndpoint> readyEndpoints(BenchmarkRun run) {
        List<EndpointSlice> slices =
                client.discovery()
                        .v1()
                        .endpointSlices()
                        .inNamespace(run.getMetadata().getNamespace())
                        .withLabel(
                                Labels.ENDPOINT_SLICE_SERVICE,
                                run.getSpec().getTarget().getService().getName())
                        .list()
                        .getItems();
        List<ReadyEndpoint> ready = new ArrayList<>();
        for (EndpointSlice slice : slices) {
            for (Endpoint endpoint :
                    slice.getEndpoints() == null ? List.<Endpoint>of() : slice.getEndpoints()) {
                if (endpoint.getConditions() != null
                        && Boolean.FALSE.equals(endpoint.getConditions().getReady())) {
                    continue;
                }
                if (endpoint.getAddresses() == null || endpoint.getAddresses().isEmpty()) {
                    continue;
                }
                ready.add(new ReadyEndpoint(slice, endpoint));
            }
        }
        return ready;
    }

    /**
     * Where the load goes with {@code spec.target.balance: endpoints}: every ready endpoint of the
     * target Service on the pod-side port of {@code spec.target.service.port} ({@code ip:port},
     * IPv6 in brackets), sorted, each once.
     */
    public List<String> trafficAddresses(BenchmarkRun run) {
        String servicePortName = servicePortName(run);
        int servicePort = run.getSpec().getTarget().getService().getPort();
        TreeSet<String> addresses = new TreeSet<>();
        for (ReadyEndpoint ready : readyEndpoints(run)) {
            String address = ready.endpoint().getAddresses().getFirst();
            addresses.add(
                    (address.contains(":") ? "[" + address + "]" : address)
                            + ":"
                            + podSidePort(ready.slice(), servicePortName, servicePort));
        }
        return List.copyOf(addresses);
    }

    /**
     * The name of the Service port that {@code spec.target.service.port} selects ("" for an unnamed
     * one), or {@code null} when the Service cannot be read or has no such port.
     */
    private String servicePortName(BenchmarkRun run) {
        try {
            Service service =
                    client.services()
                            .inNamespace(run.getMetadata().getNamespace())
                            .withName(run.getSpec().getTarget().getService().getName())
                            .get();
            if (service == null
                    || service.getSpec() == null
                    || service.getSpec().getPorts() == null) {
                return null;
            }
            int wanted = run.getSpec().getTarget().getService().getPort();
            for (ServicePort p : service.getSpec().getPorts()) {
                if (p.getPort() != null && p.getPort() == wanted) {
                    return p.getName() == null ? "" : p.getName();
                }
            }
        } catch (KubernetesClientException e) {
            LOG.debugf("cannot read Service for %s: HTTP %d", key(run), e.getCode());
        }
        return null;
    }

    /**
     * The pod-side number of a Service port: pods are scraped by IP, so a Service port 80 that
     * forwards to targetPort 8000 must be scraped on 8000. EndpointSlice ports carry the Service
     * port's name with the resolved target number; the Service port number is the fallback when the
     * Service or the slice does not say.
     */
    static int podSidePort(EndpointSlice slice, String servicePortName, int servicePort) {
        if (servicePortName == null || slice.getPorts() == null) {
            return servicePort;
        }
        for (EndpointPort p : slice.getPorts()) {
            String name = p.getName() == null ? "" : p.getName();
            if (name.equals(servicePortName) && p.getPort() != null) {
                return p.getPort();
            }
        }
        return servicePort;
    }

    /**
     * A port name as a Service targetPort resolves it: the Service's port of that name (its
     * EndpointSlice ports carry the Service port names with the pod-side numbers), else a container
     * port of that name on the endpoint's pod.
     */
    private PortLookup portByName(
            String name,
            TargetSpec target,
            String namespace,
            EndpointSlice slice,
            Endpoint endpoint) {
        Map<String, Integer> servicePorts = new HashMap<>();
        for (EndpointPort p :
                slice.getPorts() == null ? List.<EndpointPort>of() : slice.getPorts()) {
            if (p.getName() != null && p.getPort() != null) {
                servicePorts.put(p.getName(), p.getPort());
            }
        }
        if (servicePorts.containsKey(name)) {
            return new PortLookup(servicePorts.get(name), null);
        }
        String service = target.getService().getName();
        String known =
                servicePorts.isEmpty()
                        ? "Service " + service + " has no named ports"
                        : "Service " + service + " has " + new TreeSet<>(servicePorts.keySet());
        var ref = endpoint.getTargetRef();
        if (ref == null || !"Pod".equals(ref.getKind()) || ref.getName() == null) {
            return new PortLookup(
                    0,
                    "spec.metrics.port: no port named '"
                            + name
                            + "': "
                            + known
                            + " and the endpoint names no pod");
        }
        Pod pod;
        try {
            pod = client.pods().inNamespace(namespace).withName(ref.getName()).get();
        } catch (KubernetesClientException e) {
            return new PortLookup(
                    0,
                    "spec.metrics.port: no port named '"
                            + name
                            + "': "
                            + known
                            + ", and pod "
                            + ref.getName()
                            + " cannot be read to look up its container ports (HTTP "
                            + e.getCode()
                            + (e.getCode() == 403 ? ": the operator may not get pods" : "")
                            + ")");
        }
        Map<String, Integer> containerPorts = new HashMap<>();
        if (pod != null && pod.getSpec() != null && pod.getSpec().getContainers() != null) {
            for (Container c : pod.getSpec().getContainers()) {
                for (ContainerPort p :
                        c.getPorts() == null ? List.<ContainerPort>of() : c.getPorts()) {
                    if (p.getName() != null && p.getContainerPort() != null) {
                        containerPorts.putIfAbsent(p.getName(), p.getContainerPort());
                    }
                }
            }
        }
        if (containerPorts.containsKey(name)) {
            return new PortLookup(containerPorts.get(name), null);
        }
        return new PortLookup(
                0,
                "spec.metrics.port: no port named '"
                        + name
                        + "': "
                        + known
                        + (pod == null
                                ? " and pod " + ref.getName() + " is gone"
                                : containerPorts.isEmpty()
                                        ? " and pod " + ref.getName() + " has no named ports"
                                        : " and pod "
                                                + ref.getName()
                                                + " has container ports "
                                                + new TreeSet<>(containerPorts.keySet())));
    }

    private static String key(BenchmarkRun run) {
        return run.getMetadata().getNamespace() + "/" + run.getMetadata().getName();
    }
}
