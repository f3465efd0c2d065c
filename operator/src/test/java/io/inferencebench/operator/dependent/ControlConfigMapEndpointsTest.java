package io.inferencebench.operator.dependent;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.Balance;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.operator.TestRuns;
import org.junit.jupiter.api.Test;

/** The control ConfigMap carries the Service's endpoints while an endpoints-balanced run runs. */
class ControlConfigMapEndpointsTest {

    private static BenchmarkRun run(Balance balance, Phase phase) {
        BenchmarkRun run = TestRuns.sweep();
        run.getSpec().getTarget().setBalance(balance);
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(phase);
        run.setStatus(status);
        return run;
    }

    @Test
    void endpointsAreFollowedOnlyWhileAnEndpointsRunIsUnderWay() {
        assertThat(
                        ControlConfigMapDependent.followsEndpoints(
                                run(Balance.ENDPOINTS, Phase.RUNNING)))
                .isTrue();
        assertThat(
                        ControlConfigMapDependent.followsEndpoints(
                                run(Balance.ENDPOINTS, Phase.INITIALIZING)))
                .isTrue();
        assertThat(
                        ControlConfigMapDependent.followsEndpoints(
                                run(Balance.ENDPOINTS, Phase.SUCCEEDED)))
                .isFalse();
        assertThat(ControlConfigMapDependent.followsEndpoints(run(Balance.SERVICE, Phase.RUNNING)))
                .isFalse();
        assertThat(ControlConfigMapDependent.followsEndpoints(run(null, Phase.RUNNING))).isFalse();
    }

    @Test
    void theListIsAKeyBesideTheOthersAndAbsentWhenEmpty() {
        BenchmarkRun run = run(Balance.ENDPOINTS, Phase.RUNNING);
        assertThat(ControlConfigMapDependent.desired(run, "10.0.0.1:8000,10.0.0.2:8000").getData())
                .containsEntry(RunnerWorkOrder.ENDPOINTS_KEY, "10.0.0.1:8000,10.0.0.2:8000")
                .containsEntry(RunnerWorkOrder.CANCEL_KEY, "false");
        assertThat(ControlConfigMapDependent.desired(run, "").getData())
                .doesNotContainKey(RunnerWorkOrder.ENDPOINTS_KEY);
        assertThat(ControlConfigMapDependent.desired(run).getData())
                .doesNotContainKey(RunnerWorkOrder.ENDPOINTS_KEY);
    }
}
