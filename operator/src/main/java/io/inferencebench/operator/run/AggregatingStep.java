package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.CacheStateCondition;
import io.inferencebench.operator.LoadBalancedCondition;
import io.inferencebench.operator.LoadDeliveredCondition;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.metrics.ServerMetricsCondition;
import java.time.Duration;
import java.util.List;

/**
 * Aggregating: every stage's profile is in; the run's verdicts are decided from them
 * (LoadDelivered, LoadBalanced, SloMet, ServerMetricsCollected) and it Succeeded.
 */
public final class AggregatingStep implements RunStep {

    private final StageAssembly assembly;

    public AggregatingStep(StageAssembly assembly) {
        this.assembly = assembly;
    }

    @Override
    public Duration step(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        List<StageSummary> results = status.view().getResults();
        LoadDeliveredCondition load = LoadDeliveredCondition.of(results);
        status.condition(
                ConditionTypes.LOAD_DELIVERED, load.status(), load.reason(), load.message());
        LoadBalancedCondition balance = LoadBalancedCondition.of(results);
        if (balance != null) {
            status.condition(
                    ConditionTypes.LOAD_BALANCED,
                    balance.status(),
                    balance.reason(),
                    balance.message());
        }
        CacheStateCondition cache = CacheStateCondition.of(results);
        if (cache != null) {
            status.condition(
                    ConditionTypes.CACHE_STATE_VERIFIED,
                    cache.status(),
                    cache.reason(),
                    cache.message());
        }
        if (run.getSpec().getSlo() != null && results != null) {
            boolean met = results.stream().allMatch(r -> Boolean.TRUE.equals(r.getSloMet()));
            status.condition(
                    ConditionTypes.SLO_MET,
                    met,
                    met ? "Met" : "Missed",
                    met ? "every stage met spec.slo" : "some stage missed spec.slo");
            status.apply(s -> LiveView.summary(s).setSlo(met ? "Met" : "Missed"));
        }
        serverMetricsCondition(turn, results == null ? 0 : results.size());
        turn.finish(
                Phase.SUCCEEDED,
                "Succeeded",
                (results == null ? 0 : results.size())
                        + " stage profile(s) written to ConfigMap "
                        + (status.view().getProfileConfigMaps() == null
                                ? ResourceNames.profile(run)
                                : String.join(", ", status.view().getProfileConfigMaps())));
        return null;
    }

    private void serverMetricsCondition(RunTurn turn, int stages) {
        ServerMetricsCondition.Decision decision =
                ServerMetricsCondition.decide(
                        turn.spec().getMetrics(), assembly.profiles(turn), stages);
        turn.status()
                .condition(
                        ConditionTypes.SERVER_METRICS_COLLECTED,
                        decision.status(),
                        decision.reason(),
                        decision.message());
    }
}
