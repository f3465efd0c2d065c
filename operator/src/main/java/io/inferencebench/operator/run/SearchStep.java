package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.CapacityStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.CapacityProgress;
import java.util.Comparator;
import java.util.List;

/**
 * {@code spec.search} within Initializing and Running: a capacity search whose probes are stages
 * decided at run time. The search itself (the next rate, the verdict of a probe, the bracket) is
 * {@link CapacityProgress}'s; this step puts its decisions into status.capacity and ends the stages
 * when the search is done.
 */
public final class SearchStep {

    /** Whether the run is a capacity search. */
    public boolean searching(BenchmarkRun run) {
        return CapacityProgress.searching(run);
    }

    /** With the first barrier: the first probe's rate (no-op for a run that does not search). */
    public void firstProbe(RunTurn turn) {
        BenchmarkRun run = turn.run();
        if (!searching(run)) {
            return;
        }
        CapacityStatus capacity =
                CapacityProgress.status(
                        run, null, List.of(), CapacityProgress.next(run, null, List.of()));
        turn.status().apply(s -> s.setCapacity(capacity));
    }

    /**
     * After a probe stage was assembled: the next probe's rate follows from the merged results of
     * the probes so far; when the search is done, the run is Aggregating.
     *
     * @return whether the search is done
     */
    public boolean probed(RunTurn turn) {
        BenchmarkRun run = turn.run();
        List<StageSummary> probed = turn.results();
        probed.sort(Comparator.comparingInt(StageSummary::getStage));
        var step = CapacityProgress.next(run, turn.status().view(), probed);
        CapacityStatus capacity = CapacityProgress.status(run, turn.status().view(), probed, step);
        turn.status().apply(s -> s.setCapacity(capacity));
        if (!step.done()) {
            return false;
        }
        turn.status()
                .phase(
                        Phase.AGGREGATING,
                        "search finished after "
                                + probed.size()
                                + " probe(s): "
                                + step.result().message()
                                + "; writing profiles");
        return true;
    }
}
