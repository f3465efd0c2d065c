package io.inferencebench.operator.schedule;

import io.inferencebench.crds.v1alpha1.BaselineSpec;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ScheduleBaseline;
import java.util.Comparator;
import java.util.List;

/**
 * The {@code spec.baseline} a schedule writes into a run it creates: the pinned run, the most
 * recent succeeded run, or, with {@code noiseFloorRuns}, the most recent succeeded runs pooled (at
 * least {@link ScheduleBaseline#MIN_NOISE_FLOOR_RUNS}; fewer, and the most recent one alone).
 */
final class ScheduleBaselineChoice {

    private ScheduleBaselineChoice() {}

    /**
     * Chooses.
     *
     * @param policy the schedule's {@code spec.baseline}, or {@code null}
     * @param runs the schedule's runs, in any order
     * @return the baseline, or {@code null} (no policy, or nothing has succeeded yet: the
     *     template's own baseline, if any, then stays)
     */
    static BaselineSpec choose(ScheduleBaseline policy, List<BenchmarkRun> runs) {
        if (policy == null) {
            return null;
        }
        if (policy.getRunName() != null) {
            return BaselineSpec.run(policy.getRunName());
        }
        List<String> newestFirst =
                runs.stream()
                        .filter(ScheduleBaselineChoice::succeeded)
                        .sorted(
                                Comparator.comparing(ScheduledRun::scheduledAt)
                                        .thenComparing(r -> r.getMetadata().getName())
                                        .reversed())
                        .map(r -> r.getMetadata().getName())
                        .toList();
        if (newestFirst.isEmpty()) {
            return null;
        }
        Integer floor = policy.getNoiseFloorRuns();
        if (floor == null || newestFirst.size() < ScheduleBaseline.MIN_NOISE_FLOOR_RUNS) {
            return BaselineSpec.run(newestFirst.getFirst());
        }
        return BaselineSpec.runs(newestFirst.subList(0, Math.min(floor, newestFirst.size())));
    }

    private static boolean succeeded(BenchmarkRun run) {
        return run.getStatus() != null && run.getStatus().getPhase() == Phase.SUCCEEDED;
    }
}
