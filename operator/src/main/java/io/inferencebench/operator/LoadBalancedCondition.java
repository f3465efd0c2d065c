package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.StageSummary;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The run's {@code LoadBalanced} condition from its stages' replica shares ({@link
 * io.inferencebench.profile.lpg.ReplicaBalance}, decided per stage when the profile is assembled):
 * {@code False} naming every uneven stage, {@code True} when every judged stage was even, {@code
 * Unknown} when none could be judged. No condition when no stage was scraped on two or more
 * replicas (one replica, a URL target, server metrics off): there is nothing to balance.
 *
 * @param status {@code True}, {@code False} or {@code Unknown}
 * @param reason {@code Even}, {@code Uneven} or {@code TooFewRequests}
 * @param message the stages and figures
 */
public record LoadBalancedCondition(String status, String reason, String message) {

    /** The condition of a run's assembled stages, or {@code null} when it has none. */
    public static LoadBalancedCondition of(List<StageSummary> results) {
        List<StageSummary> spread =
                results == null
                        ? List.of()
                        : results.stream().filter(r -> r.getReplicaShares() != null).toList();
        if (spread.isEmpty()) {
            return null;
        }
        List<StageSummary> uneven =
                spread.stream().filter(r -> Boolean.FALSE.equals(r.getLoadBalanced())).toList();
        if (!uneven.isEmpty()) {
            return new LoadBalancedCondition(
                    "False",
                    "Uneven",
                    describe(uneven)
                            + "; the replicas did not share the load evenly, so the results"
                            + " measure the busiest replica more than the deployment (try"
                            + " spec.target.balance: endpoints, or"
                            + " spec.target.requestsPerConnection through the Service)");
        }
        List<StageSummary> judged =
                spread.stream().filter(r -> Boolean.TRUE.equals(r.getLoadBalanced())).toList();
        if (judged.isEmpty()) {
            return new LoadBalancedCondition("Unknown", "TooFewRequests", describe(spread));
        }
        return new LoadBalancedCondition(
                "True",
                "Even",
                judged.size() == spread.size()
                        ? "every stage's replicas served even shares"
                        : judged.size()
                                + " of "
                                + spread.size()
                                + " stages judged even; "
                                + describe(
                                        spread.stream()
                                                .filter(r -> r.getLoadBalanced() == null)
                                                .toList()));
    }

    private static String describe(List<StageSummary> stages) {
        return stages.stream()
                .map(
                        r ->
                                "stage "
                                        + r.getStage()
                                        + " ("
                                        + r.getReplicaShares()
                                        + ")"
                                        + (r.getLoadBalancedMessage() == null
                                                ? ""
                                                : ": " + r.getLoadBalancedMessage()))
                .collect(Collectors.joining("; "));
    }
}
