package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.profile.lpg.LoadVerdict;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The run's {@code LoadDelivered} condition from its stages' verdicts ({@link LoadVerdict}, judged
 * per stage by {@link ProfileAssembly#verdict}): {@code False} when any stage did not deliver its
 * load, {@code Unknown} when none failed but some stage was too short to judge, else {@code True}.
 *
 * @param status {@code True}, {@code False} or {@code Unknown}
 * @param reason the condition's reason
 * @param message the condition's message
 */
public record LoadDeliveredCondition(String status, String reason, String message) {

    /**
     * The condition of a run's assembled stages.
     *
     * @param results the stage results (may be {@code null} when none was assembled)
     * @return the condition
     */
    public static LoadDeliveredCondition of(List<StageSummary> results) {
        List<StageSummary> stages = results == null ? List.of() : results;
        List<StageSummary> undelivered =
                stages.stream().filter(r -> Boolean.FALSE.equals(r.getLoadDelivered())).toList();
        List<StageSummary> undecided =
                stages.stream().filter(r -> r.getLoadDelivered() == null).toList();
        if (!undelivered.isEmpty()) {
            return new LoadDeliveredCondition(
                    "False",
                    undeliveredReason(undelivered),
                    describe(undelivered, "load not delivered")
                            + "; results are not a valid measurement of the requested load");
        }
        if (stages.isEmpty() || !undecided.isEmpty()) {
            return new LoadDeliveredCondition(
                    "Unknown",
                    LoadVerdict.SCHEDULE_TOO_SHORT,
                    stages.isEmpty()
                            ? "no stage was assembled"
                            : describe(undecided, "too short to judge")
                                    + "; a longer stage (more requests or a duration) decides"
                                    + " whether the runners kept their schedule");
        }
        return new LoadDeliveredCondition(
                "True", LoadVerdict.DELIVERED, "every stage delivered its schedule");
    }

    /**
     * TooManyFailures when any stage had them (the gate a pipeline reads most often), else the
     * first undelivered stage's reason.
     */
    private static String undeliveredReason(List<StageSummary> undelivered) {
        List<String> reasons =
                undelivered.stream()
                        .map(
                                r ->
                                        r.getLoadDeliveredReason() == null
                                                ? LoadVerdict.RATE_NOT_ACHIEVED
                                                : r.getLoadDeliveredReason())
                        .toList();
        return reasons.contains(LoadVerdict.TOO_MANY_FAILURES)
                ? LoadVerdict.TOO_MANY_FAILURES
                : reasons.get(0);
    }

    private static String describe(List<StageSummary> stages, String fallback) {
        return stages.stream()
                .map(
                        r ->
                                "stage "
                                        + r.getStage()
                                        + ": "
                                        + (r.getLoadDeliveredMessage() == null
                                                ? fallback
                                                : r.getLoadDeliveredMessage()))
                .collect(Collectors.joining("; "));
    }
}
