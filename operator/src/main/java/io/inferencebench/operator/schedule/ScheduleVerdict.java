package io.inferencebench.operator.schedule;

import io.fabric8.kubernetes.api.model.Condition;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.RunComparison;
import java.util.Optional;

/**
 * What a schedule reports about its last finished run: the verdict and the Regressing condition.
 *
 * @param run the run's name
 * @param verdict the comparison's verdict (Regression, Improvement, NoSignificantChange,
 *     Inconclusive: Regressing Unknown), NoBaseline, Pending (compared once the baseline has
 *     finished), NotCompared, or the run's phase when it did not succeed
 * @param regressingStatus True, False or Unknown
 * @param message for the condition and the Event
 */
public record ScheduleVerdict(String run, String verdict, String regressingStatus, String message) {

    /** No baseline was set, so the run was not compared. */
    public static final String NO_BASELINE = "NoBaseline";

    /** A baseline is set but the comparison has not been made yet. */
    public static final String PENDING = "Pending";

    /** A baseline is set but could not be compared (missing, invalid, no profiles). */
    public static final String NOT_COMPARED = "NotCompared";

    /**
     * Reads the verdict of a finished run.
     *
     * @param run a run in a terminal phase
     * @return the verdict
     */
    public static ScheduleVerdict of(BenchmarkRun run) {
        String name = run.getMetadata().getName();
        BenchmarkRunStatus status = run.getStatus();
        Phase phase =
                status == null || status.getPhase() == null ? Phase.PENDING : status.getPhase();
        if (phase != Phase.SUCCEEDED) {
            return new ScheduleVerdict(
                    name,
                    phase.wireName(),
                    "Unknown",
                    "last finished run " + name + " did not succeed (" + phase.wireName() + ")");
        }
        Optional<Condition> regressed = status.condition(ConditionTypes.REGRESSED);
        RunComparison comparison = status.getComparison();
        String worst =
                comparison == null || comparison.getWorstMetric() == null
                        ? ""
                        : ": " + comparison.getWorstMetric();
        String against =
                comparison == null || comparison.getBaseline() == null
                        ? ""
                        : " against " + comparison.getBaseline();
        String compared =
                comparison == null || comparison.getVerdict() == null
                        ? null
                        : comparison.getVerdict();
        if (regressed.isPresent() && "True".equals(regressed.get().getStatus())) {
            return new ScheduleVerdict(
                    name,
                    compared == null ? RunComparison.REGRESSION : compared,
                    "True",
                    "run " + name + " regressed" + against + worst);
        }
        if (regressed.isPresent() && "False".equals(regressed.get().getStatus())) {
            return new ScheduleVerdict(
                    name,
                    compared == null ? RunComparison.NO_SIGNIFICANT_CHANGE : compared,
                    "False",
                    "run " + name + " did not regress" + against + worst);
        }
        if (RunComparison.INCONCLUSIVE.equals(compared)) {
            return new ScheduleVerdict(
                    name,
                    compared,
                    "Unknown",
                    "run "
                            + name
                            + " is inconclusive"
                            + against
                            + ": the noise between repeats (or between the baseline's runs)"
                            + " could hide a change of a threshold"
                            + worst);
        }
        if (run.getSpec() == null || run.getSpec().getBaseline() == null) {
            return new ScheduleVerdict(
                    name, NO_BASELINE, "Unknown", "run " + name + " has no baseline");
        }
        boolean gaveUp =
                regressed.isPresent()
                        && !BASELINE_PENDING_REASONS.contains(regressed.get().getReason());
        return new ScheduleVerdict(
                name,
                gaveUp ? NOT_COMPARED : PENDING,
                "Unknown",
                "run "
                        + name
                        + (gaveUp ? " could not be compared" : " not compared yet")
                        + regressed.map(c -> ": " + c.getMessage()).orElse(""));
    }

    /** Regressed-condition reasons under which the comparison is still to come. */
    private static final java.util.Set<String> BASELINE_PENDING_REASONS =
            java.util.Set.of(
                    io.inferencebench.operator.baseline.BaselineProfiles.NOT_FOUND,
                    io.inferencebench.operator.baseline.BaselineProfiles.NOT_FINISHED);

    /** Whether this verdict is a regression. */
    public boolean regressed() {
        return RunComparison.REGRESSION.equals(verdict);
    }

    /** CamelCase reason for the Regressing condition. */
    public String reason() {
        return verdict;
    }

    /** Condition reason when no run has finished yet. */
    static final String NO_FINISHED_RUN = "NoFinishedRun";
}
