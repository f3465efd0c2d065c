package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.StageResult;
import io.inferencebench.operator.ServerMetricsCondition;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.profile.lpg.LoadVerdict;
import java.time.Duration;
import java.util.List;

/**
 * Aggregating: every stage's profile is in; the run's verdicts are decided from them
 * (LoadDelivered, SloMet, ServerMetricsCollected) and it Succeeded.
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
        List<StageResult> results = status.view().getResults();
        boolean delivered =
                results != null
                        && results.stream()
                                .allMatch(r -> Boolean.TRUE.equals(r.getLoadDelivered()));
        List<StageResult> undelivered =
                results == null
                        ? List.of()
                        : results.stream()
                                .filter(r -> !Boolean.TRUE.equals(r.getLoadDelivered()))
                                .toList();
        String reason = delivered ? LoadVerdict.DELIVERED : undeliveredReason(undelivered);
        String message =
                delivered
                        ? "every stage achieved its requested load"
                        : undelivered.stream()
                                        .map(
                                                r ->
                                                        "stage "
                                                                + r.getStage()
                                                                + ": "
                                                                + (r.getLoadDeliveredMessage()
                                                                                == null
                                                                        ? "load not delivered"
                                                                        : r
                                                                                .getLoadDeliveredMessage()))
                                        .collect(java.util.stream.Collectors.joining("; "))
                                + "; results are not a valid measurement of the requested load";
        status.condition(ConditionTypes.LOAD_DELIVERED, delivered, reason, message);
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

    /**
     * The run's reason: TooManyFailures when any stage had them (the gate a pipeline reads most
     * often), else the first undelivered stage's reason.
     */
    private static String undeliveredReason(List<StageResult> undelivered) {
        List<String> reasons =
                undelivered.stream()
                        .map(
                                r ->
                                        r.getLoadDeliveredReason() == null
                                                ? LoadVerdict.RATE_NOT_ACHIEVED
                                                : r.getLoadDeliveredReason())
                        .toList();
        if (reasons.contains(LoadVerdict.TOO_MANY_FAILURES)) {
            return LoadVerdict.TOO_MANY_FAILURES;
        }
        return reasons.isEmpty() ? LoadVerdict.RATE_NOT_ACHIEVED : reasons.get(0);
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
