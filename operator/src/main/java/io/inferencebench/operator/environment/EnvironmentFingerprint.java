package io.inferencebench.operator.environment;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.ReadyReplicas;
import io.inferencebench.crds.v1alpha1.ServiceTarget;
import io.inferencebench.crds.v1alpha1.TargetImage;
import io.inferencebench.operator.Labels;
import io.inferencebench.operator.TargetProbe;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The environment a run measured, for {@code status.environment} and every profile: observed once
 * when the runners launch (pods, images, server version and arguments, GPUs), and the ready
 * replicas sampled at every reconcile until the last stage ends.
 */
public final class EnvironmentFingerprint {

    private static final org.jboss.logging.Logger LOG =
            org.jboss.logging.Logger.getLogger(EnvironmentFingerprint.class);

    private final KubernetesClient client;
    private final TargetPods pods;
    private final ServerVersion versions = new ServerVersion();

    public EnvironmentFingerprint(KubernetesClient client) {
        this.client = client;
        this.pods = new TargetPods(client);
    }

    /**
     * Observes the target when runners launch.
     *
     * @param run the run
     * @param now the reconcile instant (first ready-replica sample)
     * @return the environment; empty apart from the version for a URL target
     */
    public EnvironmentStatus observe(BenchmarkRun run, Instant now) {
        EnvironmentStatus environment = new EnvironmentStatus();
        try {
            observe(run, now, environment);
        } catch (RuntimeException e) {
            // Best effort: what was seen so far is kept, a run never fails for its fingerprint.
            LOG.warnf(
                    "%s/%s: environment only partly recorded: %s",
                    run.getMetadata().getNamespace(), run.getMetadata().getName(), e.toString());
        }
        return environment;
    }

    private void observe(BenchmarkRun run, Instant now, EnvironmentStatus environment) {
        ServiceTarget target = run.getSpec().getTarget().getService();
        if (target == null) {
            String url = run.getSpec().getTarget().getUrl();
            if (url != null && url.startsWith("http://")) {
                versions.ask(stripSlash(url)).ifPresent(environment::setServerVersion);
            }
            return;
        }
        String namespace = run.getMetadata().getNamespace();
        List<EndpointSlice> slices = slices(namespace, target.getName());
        EndpointPort port = endpointPort(namespace, target, slices);
        pods.observe(namespace, slices, port == null ? null : port.getPort(), environment);
        firstReadyAddress(slices)
                .filter(a -> port != null && port.getPort() != null)
                .flatMap(a -> versions.ask("http://" + hostPort(a, port.getPort())))
                .ifPresent(environment::setServerVersion);
        environment.setReadyReplicas(sample(null, (int) TargetProbe.readyEndpoints(slices), now));
    }

    /**
     * Samples the ready endpoints of a Service target.
     *
     * @param run the run
     * @param environment its current environment (may be {@code null})
     * @param now the reconcile instant
     * @return the environment with the sample, or the same one for a URL target
     */
    public EnvironmentStatus sampleReady(
            BenchmarkRun run, EnvironmentStatus environment, Instant now) {
        ServiceTarget target = run.getSpec().getTarget().getService();
        if (target == null || environment == null) {
            return environment;
        }
        List<EndpointSlice> slices;
        try {
            slices = slices(run.getMetadata().getNamespace(), target.getName());
        } catch (RuntimeException e) {
            return environment;
        }
        ReadyReplicas next =
                sample(
                        environment.getReadyReplicas(),
                        (int) TargetProbe.readyEndpoints(slices),
                        now);
        if (Objects.equals(changes(environment.getReadyReplicas()), changes(next))) {
            return environment;
        }
        environment.setReadyReplicas(next);
        return environment;
    }

    /**
     * A sample's time to the millisecond: stage starts are whole seconds, and a replica that became
     * ready in the second after a stage started must not count as ready at its start.
     */
    private static String sampleTime(Instant instant) {
        return DateTimeFormatter.ISO_INSTANT.format(instant.truncatedTo(ChronoUnit.MILLIS));
    }

    private static List<String> changes(ReadyReplicas r) {
        return r == null ? null : r.getChanges();
    }

    /**
     * Adds one sample: the series keeps the first count and every change.
     *
     * @param current the series so far, or {@code null}
     * @param ready ready endpoints now
     * @param now the sample instant
     * @return the new series (a copy)
     */
    public static ReadyReplicas sample(ReadyReplicas current, int ready, Instant now) {
        ReadyReplicas next = new ReadyReplicas();
        List<String> changes =
                current == null || current.getChanges() == null
                        ? new ArrayList<>()
                        : new ArrayList<>(current.getChanges());
        Integer last = changes.isEmpty() ? null : count(changes.getLast());
        if (last == null || last != ready) {
            changes.add(sampleTime(now) + "=" + ready);
        }
        next.setChanges(changes);
        next.setMin(
                current == null || current.getMin() == null
                        ? ready
                        : Math.min(current.getMin(), ready));
        next.setMax(
                current == null || current.getMax() == null
                        ? ready
                        : Math.max(current.getMax(), ready));
        return next;
    }

    static int count(String change) {
        return Integer.parseInt(change.substring(change.lastIndexOf('=') + 1));
    }

    static Instant time(String change) {
        return Instant.parse(change.substring(0, change.lastIndexOf('=')));
    }

    /**
     * Adds the environment to a stage profile, under additive keys: {@code
     * dimensions.server_version}, {@code dimensions.gpu_product}, {@code dimensions.gpu_count},
     * {@code config.target_images}, {@code config.server_args}, {@code config.gpu_requests_per_pod}
     * and {@code config.ready_replicas} ({@code min}, {@code max} and {@code series} within the
     * stage window).
     *
     * @param profile the LPG document
     * @param environment the run's environment, or {@code null}
     * @param stageStart the stage's start barrier
     * @param stageEnd when the stage's results were assembled
     */
    public static void annotate(
            ObjectNode profile,
            EnvironmentStatus environment,
            Instant stageStart,
            Instant stageEnd) {
        if (environment == null) {
            return;
        }
        ObjectNode dimensions = profile.with("dimensions");
        ObjectNode config = profile.with("config");
        if (environment.getServerVersion() != null) {
            dimensions.put("server_version", environment.getServerVersion());
        }
        if (environment.getGpuProduct() != null) {
            dimensions.put("gpu_product", environment.getGpuProduct());
        }
        if (environment.getGpuCount() != null) {
            dimensions.put("gpu_count", environment.getGpuCount());
        }
        if (environment.getGpuRequestsPerPod() != null) {
            config.put("gpu_requests_per_pod", environment.getGpuRequestsPerPod());
        }
        if (environment.getImages() != null) {
            ArrayNode images = config.putArray("target_images");
            for (TargetImage image : environment.getImages()) {
                ObjectNode node = images.addObject();
                node.put("pod", image.getPod());
                node.put("container", image.getContainer());
                node.put("image", image.getImage());
                if (image.getImageID() != null) {
                    node.put("image_id", image.getImageID());
                }
            }
        }
        if (environment.getServerArgs() != null) {
            ArrayNode args = config.putArray("server_args");
            environment.getServerArgs().forEach(args::add);
        }
        ReadyReplicas ready = environment.getReadyReplicas();
        if (ready != null && ready.getChanges() != null && !ready.getChanges().isEmpty()) {
            // The count in force at the stage start, then every change until its end.
            List<String> window = new ArrayList<>();
            String atStart = null;
            for (String change : ready.getChanges()) {
                Instant t = time(change);
                if (!t.isAfter(stageStart)) {
                    atStart = change;
                } else if (!t.isAfter(stageEnd)) {
                    window.add(change);
                }
            }
            if (atStart != null) {
                window.addFirst(atStart);
            }
            if (!window.isEmpty()) {
                ObjectNode node = config.putObject("ready_replicas");
                node.put(
                        "min",
                        window.stream().mapToInt(EnvironmentFingerprint::count).min().getAsInt());
                node.put(
                        "max",
                        window.stream().mapToInt(EnvironmentFingerprint::count).max().getAsInt());
                ArrayNode series = node.putArray("series");
                for (String change : window) {
                    ObjectNode point = series.addObject();
                    point.put("time", sampleTime(time(change)));
                    point.put("ready", count(change));
                }
            }
        }
    }

    private List<EndpointSlice> slices(String namespace, String service) {
        return client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(namespace)
                .withLabel(Labels.ENDPOINT_SLICE_SERVICE, service)
                .list()
                .getItems();
    }

    /** The EndpointSlice port of the Service port the run targets (matched by port name). */
    private EndpointPort endpointPort(
            String namespace, ServiceTarget target, List<EndpointSlice> slices) {
        String portName = null;
        try {
            Service service =
                    client.services().inNamespace(namespace).withName(target.getName()).get();
            if (service != null && service.getSpec().getPorts() != null) {
                portName =
                        service.getSpec().getPorts().stream()
                                .filter(p -> target.getPort().equals(p.getPort()))
                                .findFirst()
                                .map(ServicePort::getName)
                                .orElse(null);
            }
        } catch (KubernetesClientException e) {
            return null;
        }
        for (EndpointSlice slice : slices) {
            if (slice.getPorts() == null) {
                continue;
            }
            for (EndpointPort p : slice.getPorts()) {
                if (Objects.equals(emptyToNull(p.getName()), emptyToNull(portName))) {
                    return p;
                }
            }
        }
        return null;
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static java.util.Optional<String> firstReadyAddress(List<EndpointSlice> slices) {
        for (EndpointSlice slice : slices) {
            if (slice.getEndpoints() == null) {
                continue;
            }
            for (Endpoint e : slice.getEndpoints()) {
                boolean ready =
                        e.getConditions() == null
                                || !Boolean.FALSE.equals(e.getConditions().getReady());
                if (ready && e.getAddresses() != null && !e.getAddresses().isEmpty()) {
                    return java.util.Optional.of(e.getAddresses().getFirst());
                }
            }
        }
        return java.util.Optional.empty();
    }

    private static String hostPort(String address, int port) {
        return (address.contains(":") ? "[" + address + "]" : address) + ":" + port;
    }

    private static String stripSlash(String url) {
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }
}
