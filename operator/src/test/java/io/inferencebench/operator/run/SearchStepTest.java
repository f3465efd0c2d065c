package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.decided;
import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.CapacityStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.profile.lpg.LoadVerdict;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** spec.search inside Running: probes decided at run time until the search is done. */
class SearchStepTest {

    private static final String SEARCH =
            """
            target: {url: "http://x:1", model: m}
            load: {numPrompts: 100}
            slo: {ttft: 500ms, minAttainment: 0.9}
            search: {minRate: 2, maxRate: 8}
            """;

    private final SearchStep search = new SearchStep();

    private static StageSummary probe(int stage, double rate, double attainment) {
        StageSummary r = new StageSummary();
        r.setStage(stage);
        r.setRequestRate(rate);
        r.setAchievedRate(rate);
        r.setSent(100L);
        r.setSloAttainment(attainment);
        r.setLoadDelivered(true);
        r.setLoadDeliveredReason(LoadVerdict.DELIVERED);
        r.setProfileKey("p" + stage + ".json");
        return r;
    }

    /** Running a search whose probes so far are {@code results} (in any order). */
    private static BenchmarkRunStatus probed(StageSummary... results) {
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(Phase.RUNNING);
        status.setResults(new ArrayList<>(List.of(results)));
        status.setStageStartTimes(
                new ArrayList<>(
                        java.util.Collections.nCopies(
                                results.length, StatusAggregator.format(NOW))));
        return status;
    }

    @Test
    void onlyARunWithSpecSearchSearches() {
        assertThat(search.searching(Turns.run(SEARCH).theRun())).isTrue();
        assertThat(search.searching(Turns.sweep().theRun())).isFalse();
    }

    @Test
    void theFirstProbeIsTheMinimumRate() {
        RunTurn turn = Turns.run(SEARCH).build();
        search.firstProbe(turn);
        assertThat(decided(turn).getCapacity().getProbes())
                .extracting(CapacityStatus.Probe::getRequestRate)
                .containsExactly(2.0);

        RunTurn sweep = Turns.sweep().build();
        search.firstProbe(sweep);
        assertThat(decided(sweep).getCapacity()).isNull();
    }

    @Test
    void aPassingProbeLeadsToTheNextRateAndTheSearchGoesOn() {
        RunTurn turn = Turns.run(SEARCH).status(probed(probe(1, 2, 1.0))).build();

        assertThat(search.probed(turn)).isFalse();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.RUNNING);
        assertThat(status.getCapacity().getProbes())
                .extracting(CapacityStatus.Probe::getRequestRate)
                .containsExactly(2.0, 4.0);
        assertThat(status.getCapacity().getProbes().getFirst().getPassed()).isTrue();
        assertThat(status.getCapacity().getOutcome()).isNull();
    }

    @Test
    void whenTheSearchIsDoneTheRunIsAggregatingWithItsResult() {
        // listed out of order: the probes are judged in stage order
        RunTurn turn =
                Turns.run(SEARCH)
                        .status(probed(probe(3, 8, 1.0), probe(1, 2, 1.0), probe(2, 4, 1.0)))
                        .build();

        assertThat(search.probed(turn)).isTrue();

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getPhase()).isEqualTo(Phase.AGGREGATING);
        assertThat(status.getMessage())
                .startsWith("search finished after 3 probe(s): ")
                .endsWith("; writing profiles");
        assertThat(status.getCapacity().getOutcome()).isEqualTo("MaxRatePassed");
        assertThat(status.getCapacity().getProbes())
                .extracting(CapacityStatus.Probe::getRequestRate)
                .containsExactly(2.0, 4.0, 8.0);
    }
}
