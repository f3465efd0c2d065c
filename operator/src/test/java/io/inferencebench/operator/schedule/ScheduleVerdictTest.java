package io.inferencebench.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.inferencebench.crds.v1alpha1.BaselineSpec;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.RunComparison;
import io.inferencebench.operator.TestRuns;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A scheduled run whose comparison could not tell leaves Regressing Unknown, saying why. */
class ScheduleVerdictTest {

    private static BenchmarkRun compared(String status, String reason, String verdict) {
        BenchmarkRun run = TestRuns.sweep();
        BaselineSpec baseline = new BaselineSpec();
        baseline.setRunName("nightly-1");
        run.getSpec().setBaseline(baseline);
        BenchmarkRunStatus s = new BenchmarkRunStatus();
        s.setPhase(Phase.SUCCEEDED);
        Condition regressed = new Condition();
        regressed.setType(ConditionTypes.REGRESSED);
        regressed.setStatus(status);
        regressed.setReason(reason);
        regressed.setMessage("from the run");
        s.setConditions(List.of(regressed));
        RunComparison comparison = new RunComparison();
        comparison.setBaseline("run/nightly-1");
        comparison.setVerdict(verdict);
        s.setComparison(comparison);
        run.setStatus(s);
        return run;
    }

    @Test
    void anInconclusiveRunIsNeitherARegressionNorAClean() {
        ScheduleVerdict v =
                ScheduleVerdict.of(
                        compared(
                                "Unknown", RunComparison.INCONCLUSIVE, RunComparison.INCONCLUSIVE));
        assertThat(v.verdict()).isEqualTo(RunComparison.INCONCLUSIVE);
        assertThat(v.regressingStatus()).isEqualTo("Unknown");
        assertThat(v.regressed()).isFalse();
        assertThat(v.message())
                .isEqualTo(
                        "run sweep is inconclusive against run/nightly-1: the noise between"
                                + " repeats (or between the baseline's runs) could hide a change of"
                                + " a threshold");
    }

    @Test
    void aRegressionAndAnAbsenceOfOneAreAsBefore() {
        assertThat(
                        ScheduleVerdict.of(
                                        compared(
                                                "True",
                                                RunComparison.REGRESSION,
                                                RunComparison.REGRESSION))
                                .regressingStatus())
                .isEqualTo("True");
        assertThat(
                        ScheduleVerdict.of(
                                        compared(
                                                "False",
                                                RunComparison.NO_SIGNIFICANT_CHANGE,
                                                RunComparison.NO_SIGNIFICANT_CHANGE))
                                .regressingStatus())
                .isEqualTo("False");
    }
}
