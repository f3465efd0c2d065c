package io.inferencebench.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.inferencebench.crds.v1alpha1.BaselinePolicy;
import io.inferencebench.crds.v1alpha1.BaselineSpec;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ScheduleBaseline;
import io.inferencebench.operator.Labels;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScheduleBaselineChoiceTest {

    private static final Instant T0 = Instant.parse("2026-12-07T03:00:00Z");

    /** Run {@code s-<minute>} fired at T0 + minute, in {@code phase}. */
    private static BenchmarkRun run(int minute, Phase phase) {
        BenchmarkRun run = new BenchmarkRun();
        run.setMetadata(
                new ObjectMetaBuilder()
                        .withName("s-" + minute)
                        .addToAnnotations(
                                Labels.SCHEDULED_AT, T0.plusSeconds(60L * minute).toString())
                        .withCreationTimestamp(T0.toString())
                        .build());
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(phase);
        run.setStatus(status);
        return run;
    }

    private static ScheduleBaseline previousSucceeded(Integer noiseFloorRuns) {
        ScheduleBaseline policy = new ScheduleBaseline();
        policy.setPolicy(BaselinePolicy.PREVIOUS_SUCCEEDED);
        policy.setNoiseFloorRuns(noiseFloorRuns);
        return policy;
    }

    /** Succeeded runs at minutes 1..n, with a failed and a running one, shuffled. */
    private static List<BenchmarkRun> history(int succeeded) {
        List<BenchmarkRun> runs = new ArrayList<>();
        for (int minute = 1; minute <= succeeded; minute++) {
            runs.add(run(minute, Phase.SUCCEEDED));
        }
        runs.add(run(succeeded + 1, Phase.FAILED));
        runs.add(run(succeeded + 2, Phase.RUNNING));
        Collections.shuffle(runs, new java.util.Random(7));
        return runs;
    }

    @Test
    void withoutAPolicyTheTemplateKeepsItsOwnBaseline() {
        assertThat(ScheduleBaselineChoice.choose(null, history(3))).isNull();
    }

    @Test
    void aPinnedRunIsEveryRunsBaseline() {
        ScheduleBaseline pinned = new ScheduleBaseline();
        pinned.setRunName("release-1");
        assertThat(ScheduleBaselineChoice.choose(pinned, history(5)))
                .isEqualTo(BaselineSpec.run("release-1"));
    }

    @Test
    void previousSucceededIsTheMostRecentSucceededRunNotTheLastFinished() {
        assertThat(ScheduleBaselineChoice.choose(previousSucceeded(null), history(4)))
                .isEqualTo(BaselineSpec.run("s-4"));
        assertThat(ScheduleBaselineChoice.choose(previousSucceeded(null), history(0))).isNull();
    }

    @Test
    void aNoiseFloorPoolsTheMostRecentSucceededRunsNewestFirst() {
        assertThat(ScheduleBaselineChoice.choose(previousSucceeded(3), history(5)))
                .isEqualTo(BaselineSpec.runs(List.of("s-5", "s-4", "s-3")));
        assertThat(ScheduleBaselineChoice.choose(previousSucceeded(10), history(4)))
                .as("all there are, once there are at least 3")
                .isEqualTo(BaselineSpec.runs(List.of("s-4", "s-3", "s-2", "s-1")));
    }

    @Test
    void untilThreeRunsHaveSucceededANoiseFloorScheduleComparesWithTheMostRecentOne() {
        assertThat(ScheduleBaselineChoice.choose(previousSucceeded(5), history(2)))
                .isEqualTo(BaselineSpec.run("s-2"));
        assertThat(ScheduleBaselineChoice.choose(previousSucceeded(5), history(1)))
                .isEqualTo(BaselineSpec.run("s-1"));
        assertThat(ScheduleBaselineChoice.choose(previousSucceeded(5), history(0))).isNull();
    }
}
