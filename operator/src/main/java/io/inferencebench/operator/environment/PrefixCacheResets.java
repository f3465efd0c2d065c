package io.inferencebench.operator.environment;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.operator.dependent.RunnerWorkOrderDependent;
import io.inferencebench.operator.metrics.MetricsEndpoints;
import io.inferencebench.profile.cache.PrefixCacheReset;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Empties the prefix cache of every ready endpoint behind a run's target before a stage ({@code
 * spec.workload.prefixCache: {state: cold}}): each endpoint of the Service on its pod-side port,
 * the endpoints load would reach, or the target URL. Only what the operator can reach with the
 * JVM's default trust: a target with {@code spec.target.tls} (a private CA, a skipped check) is not
 * reset, and the stage says so rather than claim a state it did not establish.
 */
public final class PrefixCacheResets {

    /** The limit on each reset request; a stage waits at most a few of these. */
    static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final MetricsEndpoints endpoints;

    public PrefixCacheResets(KubernetesClient client) {
        this.endpoints = new MetricsEndpoints(client);
    }

    /** Resets every endpoint of the run's target, one after the other. */
    public PrefixCacheReset.Round reset(BenchmarkRun run) throws InterruptedException {
        PrefixCacheReset.Round endpoints = endpoints(run);
        if (!endpoints.failures().isEmpty()) {
            return endpoints;
        }
        List<String> targets =
                endpoints.outcomes().stream().map(PrefixCacheReset.Outcome::target).toList();
        String backend = run.getSpec().getTarget().getBackend().wireName();
        return new PrefixCacheReset(targets, backend, Map.of(), null, TIMEOUT).resetAll();
    }

    /**
     * The endpoints a reset would go to, none of them reset ({@code prefixCache.reset: false}):
     * each as an outcome without a path, or one failure saying why there are none.
     */
    public PrefixCacheReset.Round endpoints(BenchmarkRun run) {
        TargetSpec target = run.getSpec().getTarget();
        if (target.getTls() != null) {
            return refused(
                    RunnerWorkOrderDependent.baseUrl(run),
                    "spec.target.tls is set: the operator resets only targets the JVM's default"
                            + " trust accepts");
        }
        List<String> targets;
        if (target.getUrl() != null) {
            targets = List.of(target.getUrl().replaceAll("/+$", ""));
        } else {
            String scheme = target.getService().getScheme();
            targets =
                    endpoints.trafficAddresses(run).stream()
                            .map(address -> scheme + "://" + address)
                            .toList();
            if (targets.isEmpty()) {
                return refused(
                        RunnerWorkOrderDependent.baseUrl(run),
                        "the Service has no ready endpoint to reset");
            }
        }
        return new PrefixCacheReset.Round(
                targets.stream().map(t -> new PrefixCacheReset.Outcome(t, null, null)).toList());
    }

    private static PrefixCacheReset.Round refused(String target, String why) {
        return new PrefixCacheReset.Round(List.of(new PrefixCacheReset.Outcome(target, null, why)));
    }
}
