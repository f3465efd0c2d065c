package io.inferencebench.operator.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.RunProgress;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.v1alpha1.StageSummary;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The printer columns: Stage, Done, RPS, TTFT P50, Latency P99. */
class LiveViewTest {

    private static List<StageSpec> stages(String specBody) {
        return Turns.run(specBody).theRun().getSpec().getLoad().resolvedStages();
    }

    @Test
    void millisecondsReadAsKubectlShowsThem() {
        assertThat(LiveView.millis(112.4)).isEqualTo("112ms");
        assertThat(LiveView.millis(999.4)).isEqualTo("999ms");
        assertThat(LiveView.millis(1840.0)).isEqualTo("1.84s");
        assertThat(LiveView.millis(null)).isNull();
    }

    @Test
    void doneCountsAgainstEveryStagesPromptsOrAnUnknownTotal() {
        List<StageSpec> counted =
                stages(
                        """
                        target: {url: "http://x:1", model: m}
                        load: {requestRates: [5, 10], numPrompts: 100}
                        """);
        RunProgress progress = LiveView.progress(2, counted, 120, 3);
        assertThat(progress.getCurrentStage()).isEqualTo(2);
        assertThat(progress.getStages()).isEqualTo(2);
        assertThat(progress.getTotal()).isEqualTo(200L);
        assertThat(progress.getFailed()).isEqualTo(3);
        assertThat(progress.getDone()).isEqualTo("120/200");

        List<StageSpec> timed =
                stages(
                        """
                        target: {url: "http://x:1", model: m}
                        load:
                          stages:
                            - {requestRate: 5, duration: 60s}
                        """);
        assertThat(LiveView.progress(1, timed, 7, 0).getDone()).isEqualTo("7/?");
        assertThat(LiveView.progress(1, timed, 7, 0).getTotal()).isNull();
    }

    @Test
    void aFinishedStagesProgressAddsUpTheResultsSoFar() {
        StageSummary one = new StageSummary();
        one.setCompleted(20L);
        one.setFailed(1L);
        StageSummary two = new StageSummary();
        two.setCompleted(18L);
        StageSummary empty = new StageSummary();
        List<StageSpec> counted =
                stages(
                        """
                        target: {url: "http://x:1", model: m}
                        load: {requestRates: [5, 10, 20], numPrompts: 20}
                        """);
        RunProgress progress = LiveView.finished(2, counted, List.of(one, two, empty));
        assertThat(progress.getCompleted()).isEqualTo(38);
        assertThat(progress.getFailed()).isEqualTo(1);
        assertThat(progress.getDone()).isEqualTo("38/60");
    }

    @Test
    void theSummaryIsMadeWhenAStatusHasNone() {
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        assertThat(status.getSummary()).isNull();
        LiveView.summary(status).setRps("1.00");
        assertThat(status.getSummary().getRps()).isEqualTo("1.00");
        assertThat(LiveView.summary(status)).isSameAs(status.getSummary());
    }
}
