package io.inferencebench.operator.dependent;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.CleanupPolicy;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.operator.TestRuns;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class LaunchedTest {

    private static BenchmarkRun run(boolean targetReady, Phase phase, CleanupPolicy policy) {
        BenchmarkRun run = TestRuns.sweep();
        run.getSpec().getRunner().setCleanupPolicy(policy);
        run.setStatus(
                new StatusAggregator(null, 1, Instant.EPOCH)
                        .condition(ConditionTypes.TARGET_READY, targetReady, "X", "")
                        .phase(phase, "")
                        .build());
        return run;
    }

    @Test
    void nothingIsLaunchedBeforeTheTargetIsReady() {
        BenchmarkRun fresh = TestRuns.sweep();
        assertThat(Launched.holds(fresh)).isFalse();
        assertThat(Launched.holds(run(false, Phase.PENDING, CleanupPolicy.NEVER))).isFalse();
        assertThat(Launched.holds(run(false, Phase.FAILED, CleanupPolicy.NEVER))).isFalse();
    }

    @Test
    void runnersExistWhileTheRunIsActive() {
        for (Phase phase : new Phase[] {Phase.INITIALIZING, Phase.RUNNING, Phase.AGGREGATING}) {
            assertThat(Launched.holds(run(true, phase, CleanupPolicy.ALWAYS))).isTrue();
        }
    }

    @Test
    void cleanupPolicyDecidesAfterTheEnd() {
        assertThat(Launched.holds(run(true, Phase.SUCCEEDED, CleanupPolicy.ALWAYS))).isFalse();
        assertThat(Launched.holds(run(true, Phase.FAILED, CleanupPolicy.ALWAYS))).isFalse();
        assertThat(Launched.holds(run(true, Phase.SUCCEEDED, CleanupPolicy.ON_SUCCESS))).isFalse();
        assertThat(Launched.holds(run(true, Phase.FAILED, CleanupPolicy.ON_SUCCESS))).isTrue();
        assertThat(Launched.holds(run(true, Phase.CANCELLED, CleanupPolicy.ON_SUCCESS))).isTrue();
        assertThat(Launched.holds(run(true, Phase.SUCCEEDED, CleanupPolicy.NEVER))).isTrue();
    }
}
