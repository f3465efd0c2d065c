package io.inferencebench.operator.baseline;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.crds.v1alpha1.MetricComparison;
import io.inferencebench.crds.v1alpha1.RunComparison;
import io.inferencebench.crds.v1alpha1.StageComparison;
import io.inferencebench.profile.compare.Comparison;
import io.inferencebench.profile.compare.ComparisonOptions;
import io.inferencebench.profile.compare.ProfileComparison;
import io.inferencebench.profile.compare.Side;
import io.inferencebench.profile.compare.Verdict;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * A finished run's profiles against its baseline's, through the {@code profile} module's
 * comparison, as {@code status.comparison} and the Regressed condition.
 */
public final class BaselineComparison {

    /** The condition when compared: True with the worst regression, else False. */
    public record Outcome(
            RunComparison comparison, boolean regressed, String reason, String message) {

        /**
         * Whether the comparison could not tell: nothing changed significantly, but the noise
         * between repeats could hide a change of a threshold (the condition is then Unknown).
         */
        public boolean inconclusive() {
            return RunComparison.INCONCLUSIVE.equals(reason);
        }
    }

    private BaselineComparison() {}

    /**
     * Compares.
     *
     * @param label the baseline, e.g. run/NAME
     * @param baseline the baseline's profiles
     * @param candidate this run's profiles
     * @return the status and condition
     * @throws IllegalArgumentException when a document is not an LPG profile (the message says
     *     which)
     */
    public static Outcome compare(String label, List<JsonNode> baseline, List<JsonNode> candidate) {
        Comparison result =
                ProfileComparison.compare(baseline, candidate, ComparisonOptions.defaults());
        RunComparison status = new RunComparison();
        status.setBaseline(label);
        status.setVerdict(verdict(result.verdict()));
        status.setNotes(result.notes().isEmpty() ? null : List.copyOf(result.notes()));
        status.setStages(
                result.stages().stream()
                        .map(
                                s -> {
                                    StageComparison stage = new StageComparison();
                                    stage.setStage(s.stage());
                                    stage.setBaselineRequestRate(finite(s.baselineRate()));
                                    stage.setCandidateRequestRate(finite(s.candidateRate()));
                                    stage.setMetrics(
                                            s.metrics().stream()
                                                    .map(BaselineComparison::metric)
                                                    .toList());
                                    return stage;
                                })
                        .toList());
        Optional<Worst> worst = worst(result);
        status.setWorstMetric(worst.map(Worst::text).orElse(null));
        boolean regressed = result.verdict() == Verdict.REGRESSION;
        String message =
                (regressed
                                ? "regressed against "
                                : result.verdict() == Verdict.INCONCLUSIVE
                                        ? "inconclusive against "
                                        : "no regression against ")
                        + label
                        + worst.map(w -> "; worst: " + w.text()).orElse("");
        return new Outcome(status, regressed, status.getVerdict(), message);
    }

    private static String verdict(Verdict verdict) {
        return switch (verdict) {
            case REGRESSION -> RunComparison.REGRESSION;
            case IMPROVEMENT -> RunComparison.IMPROVEMENT;
            case NO_SIGNIFICANT_CHANGE -> RunComparison.NO_SIGNIFICANT_CHANGE;
            case INCONCLUSIVE -> RunComparison.INCONCLUSIVE;
        };
    }

    private static MetricComparison metric(io.inferencebench.profile.compare.MetricComparison m) {
        MetricComparison metric = new MetricComparison();
        metric.setMetric(m.name());
        metric.setBaseline(m.baseline());
        metric.setCandidate(m.candidate());
        metric.setChange(m.change());
        metric.setSignificant(m.significant());
        metric.setWorse(m.worse() == Side.CANDIDATE);
        return metric;
    }

    private static Double finite(double value) {
        return Double.isFinite(value) ? value : null;
    }

    private record Worst(int stage, io.inferencebench.profile.compare.MetricComparison metric) {
        String text() {
            return String.format(
                    Locale.ROOT,
                    "stage %d %s %+.1f %%%s",
                    stage,
                    metric.name(),
                    100 * metric.change(),
                    metric.significant() ? "" : " (not significant)");
        }
    }

    /**
     * The metric worse in this run by the largest relative change: among the significant ones when
     * any is, else among all that got worse.
     */
    private static Optional<Worst> worst(Comparison result) {
        Comparator<Worst> bySize = Comparator.comparingDouble(w -> Math.abs(w.metric().change()));
        List<Worst> worse =
                result.stages().stream()
                        .flatMap(
                                s ->
                                        s.metrics().stream()
                                                .filter(m -> m.worse() == Side.CANDIDATE)
                                                .filter(m -> m.change() != null)
                                                .map(m -> new Worst(s.stage(), m)))
                        .toList();
        Optional<Worst> significant =
                worse.stream().filter(w -> w.metric().significant()).max(bySize);
        return significant.isPresent() ? significant : worse.stream().max(bySize);
    }
}
