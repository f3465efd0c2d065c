package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.UID;

import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.operator.RunParts;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.profile.lpg.StageResult;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The two-stage sweep of {@link Turns#sweep()} while it runs, as the Running-phase tests see it:
 * its status during a stage and what its two runner pods write when they finish one.
 */
final class SweepStages {

    private SweepStages() {}

    /** Running stage {@code starts.length} of the sweep since each barrier in {@code starts}. */
    static BenchmarkRunStatus running(Instant... starts) {
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(Phase.RUNNING);
        status.setModel("google/gemma-7b");
        status.setStartTime(StatusAggregator.format(starts[0]));
        List<String> times = new ArrayList<>();
        for (Instant start : starts) {
            times.add(StatusAggregator.format(start));
        }
        status.setStageStartTimes(times);
        status.setStage(starts.length + "/2");
        return status;
    }

    /** What runner {@code index} writes when it finished {@code stage} (10 requests). */
    static Map<String, String> stageDone(int stage, int index, double rateShare) {
        StageResult result =
                RunParts.completedStage(
                        stage,
                        rateShare,
                        10,
                        RunParts.epochNanos(NOW.minusSeconds(25)),
                        3_600_000_000L,
                        4_000_000_000L);
        RunParts.recordSteadyRequests(result, index);
        return RunParts.report(PartReport.STATE_RUNNING, stage, UID, result);
    }

    /** Runner {@code index} after both stages of the sweep. */
    static Map<String, String> bothDone(int index) {
        Map<String, String> data = new LinkedHashMap<>(stageDone(1, index, 2.5));
        data.putAll(stageDone(2, index, 5));
        data.put(PartReport.STATE, PartReport.STATE_DONE);
        return data;
    }

    /**
     * A turn of {@code turns} in {@code status} where both runner pods finished stage 1 at 2.5
     * req/s each.
     */
    static RunTurn firstStageFinished(Turns turns, BenchmarkRunStatus status) {
        return turns.status(status)
                .part(0, stageDone(1, 0, 2.5))
                .part(1, stageDone(1, 1, 2.5))
                .build();
    }
}
