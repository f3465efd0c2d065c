package io.inferencebench.operator;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ServiceTarget;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/** Is the target ready for load: a Service with ready endpoints, or a URL that answers HTTP. */
public class TargetProbe {

    /**
     * The outcome of a probe.
     *
     * @param ready whether runners may start
     * @param reason CamelCase reason for the TargetReady condition
     * @param message details
     */
    public record Result(boolean ready, String reason, String message) {}

    private final KubernetesClient client;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    public TargetProbe(KubernetesClient client) {
        this.client = client;
    }

    /**
     * Probes the run's target.
     *
     * @param run the run
     * @return the result
     */
    public Result probe(BenchmarkRun run) {
        TargetSpec target = run.getSpec().getTarget();
        return target.getService() != null
                ? probeService(run.getMetadata().getNamespace(), target.getService())
                : probeUrl(target.getUrl());
    }

    private Result probeService(String namespace, ServiceTarget target) {
        Service service = client.services().inNamespace(namespace).withName(target.getName()).get();
        if (service == null) {
            return new Result(
                    false,
                    "ServiceNotFound",
                    "Service " + target.getName() + " not found in namespace " + namespace);
        }
        boolean hasPort =
                service.getSpec().getPorts() != null
                        && service.getSpec().getPorts().stream()
                                .anyMatch(
                                        p ->
                                                p.getPort() != null
                                                        && p.getPort().equals(target.getPort()));
        if (!hasPort) {
            return new Result(
                    false,
                    "ServicePortNotFound",
                    "Service " + target.getName() + " has no port " + target.getPort());
        }
        List<EndpointSlice> slices =
                client.discovery()
                        .v1()
                        .endpointSlices()
                        .inNamespace(namespace)
                        .withLabel(Labels.ENDPOINT_SLICE_SERVICE, target.getName())
                        .list()
                        .getItems();
        long ready = readyEndpoints(slices);
        if (ready == 0) {
            return new Result(
                    false,
                    "NoReadyEndpoints",
                    "Service " + target.getName() + " has no ready endpoints");
        }
        return new Result(
                true,
                "EndpointsReady",
                "Service " + target.getName() + " has " + ready + " ready endpoint(s)");
    }

    /**
     * Counts ready endpoint addresses (an endpoint without a ready condition counts as ready, as
     * Kubernetes documents).
     *
     * @param slices the Service's EndpointSlices
     * @return the number of ready endpoints
     */
    public static long readyEndpoints(List<EndpointSlice> slices) {
        long ready = 0;
        for (EndpointSlice slice : slices) {
            if (slice.getEndpoints() == null) {
                continue;
            }
            for (Endpoint endpoint : slice.getEndpoints()) {
                if (endpoint.getConditions() == null
                        || !Boolean.FALSE.equals(endpoint.getConditions().getReady())) {
                    ready++;
                }
            }
        }
        return ready;
    }

    private Result probeUrl(String url) {
        try {
            HttpResponse<Void> response =
                    http.send(
                            HttpRequest.newBuilder(URI.create(url + "/"))
                                    .timeout(Duration.ofSeconds(3))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.discarding());
            return new Result(true, "UrlAnswers", url + " answered HTTP " + response.statusCode());
        } catch (Exception e) {
            return new Result(
                    false,
                    "TargetUnreachable",
                    url + " did not answer: " + e.getClass().getSimpleName());
        }
    }
}
