package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.CapacityStatus;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.profile.lpg.LoadVerdict;
import io.inferencebench.profile.search.CapacitySearch;
import java.util.List;
import org.junit.jupiter.api.Test;

class CapacityProgressTest {

    private static BenchmarkRun searchRun() {
        return io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: s, namespace: ns}
                spec:
                  target: {url: "http://x:1"}
                  load: {numPrompts: 100}
                  slo: {ttft: 500ms, minAttainment: 0.9}
                  search: {minRate: 2, maxRate: 64}
                """,
                BenchmarkRun.class);
    }

    private static StageSummary stage(
            int n, double rate, long sent, double attainment, boolean delivered, String reason) {
        StageSummary r = new StageSummary();
        r.setStage(n);
        r.setRequestRate(rate);
        r.setAchievedRate(rate);
        r.setSent(sent);
        r.setSloAttainment(attainment);
        r.setLoadDelivered(delivered);
        r.setLoadDeliveredReason(reason);
        r.setProfileKey("p" + n + ".json");
        return r;
    }

    @Test
    void aServerThatFailsRequestsMissesTheSloButALaggingClientSaysNothing() {
        BenchmarkRun run = searchRun();
        List<StageSummary> results =
                List.of(
                        stage(1, 2, 100, 1.0, true, LoadVerdict.DELIVERED),
                        stage(2, 4, 100, 0.5, false, LoadVerdict.TOO_MANY_FAILURES),
                        stage(3, 2.828, 100, 1.0, false, "ScheduleLagged"));
        CapacitySearch.Step step = CapacityProgress.next(run, null, results.subList(0, 1));
        assertThat(step.nextRate()).isEqualTo(4.0);
        step = CapacityProgress.next(run, null, results.subList(0, 2));
        // 4 req/s failed (the server's failures count against it): bisect between 2 and 4
        assertThat(step.nextRate()).isEqualTo(2.828);
        step = CapacityProgress.next(run, null, results);
        CapacityStatus status = CapacityProgress.status(run, null, results, step);
        assertThat(status.getProbes())
                .extracting(CapacityStatus.Probe::getPassed)
                .startsWith(true, false, null);
        assertThat(status.getProbes().get(1).getGoodRequests()).isEqualTo(50);
        assertThat(status.getProbes().get(1).getLoadDelivered()).isTrue();
        assertThat(status.getProbes().get(2).getLoadDelivered()).isFalse();
        assertThat(status.getProbes().get(0).getProfile()).isEqualTo("p1.json");
        // the undelivered 2.828 is no pass: the search goes on below it
        assertThat(step.done()).isFalse();
        assertThat(step.nextRate()).isBetween(2.0, 2.828);
        // the next probe is listed with its rate only; the control ConfigMap publishes it
        CapacityStatus.Probe next = status.getProbes().getLast();
        assertThat(next.getRequestRate()).isEqualTo(step.nextRate());
        assertThat(next.getPassed()).isNull();
        assertThat(status.getOutcome()).isNull();
        assertThat(CapacityProgress.stages(run, statusWith(status)))
                .extracting(s -> s.getRequestRate())
                .containsExactly(2.0, 4.0, 2.828, step.nextRate());
    }

    @Test
    void aProbeWithinTheNoiseOfTheMinimumIsIndeterminateAndItsRateIsProbedAgain() {
        BenchmarkRun run = searchRun();
        run.getSpec().getSearch().setMaxRate(4.0);
        // 90 of 100 against a minimum of 90 %: the 95 % interval is 82.6-94.5 %
        List<StageSummary> results =
                List.of(
                        stage(1, 2, 100, 1.0, true, null),
                        stage(2, 4, 100, 0.9, true, null),
                        stage(3, 4, 100, 0.9, true, null),
                        stage(4, 4, 100, 0.9, true, null));
        for (int done = 2; done <= 3; done++) {
            CapacitySearch.Step step = CapacityProgress.next(run, null, results.subList(0, done));
            assertThat(step.nextRate()).as("after %d probes", done).isEqualTo(4.0);
        }
        CapacitySearch.Step step = CapacityProgress.next(run, null, results);
        assertThat(step.done()).isTrue();
        CapacityStatus status = CapacityProgress.status(run, null, results, step);
        CapacityStatus.Probe second = status.getProbes().get(1);
        assertThat(second.getVerdict()).isEqualTo("Indeterminate");
        assertThat(second.getPassed()).isNull();
        assertThat(second.getSloAttainmentLow()).isBetween(0.825, 0.827);
        assertThat(second.getSloAttainmentHigh()).isBetween(0.944, 0.946);
        assertThat(status.getProbes().get(0).getVerdict()).isEqualTo("Pass");
        // 270 of 300 pooled still straddles 90 %, and a fourth probe all good (370 of 400) could
        // not show it: judged on the measurement, and said so
        assertThat(status.getOutcome()).isEqualTo("MaxRatePassed");
        assertThat(status.getUndecided()).isTrue();
        assertThat(status.getConfidence())
                .isEqualTo(
                        "undecided at 95 % confidence: 4.00 req/s attains 90.0 % (86.1–92.9 %, 300"
                                + " requests in 3 probes), within the noise of the minimum 90.0 %;"
                                + " larger probes (more requests or a longer duration) would"
                                + " decide it");
        assertThat(status.getMessage()).contains("undecided at 95 % confidence");
    }

    @Test
    void aServerFasterThanTheMaxRateIsShownAsAtLeastIt() {
        BenchmarkRun run = searchRun();
        List<StageSummary> results =
                List.of(
                        stage(1, 2, 100, 1, true, null),
                        stage(2, 4, 100, 1, true, null),
                        stage(3, 8, 100, 1, true, null),
                        stage(4, 16, 100, 1, true, null),
                        stage(5, 32, 100, 1, true, null),
                        stage(6, 64, 100, 1, true, null));
        CapacitySearch.Step step = CapacityProgress.next(run, null, results);
        assertThat(step.done()).isTrue();
        CapacityStatus status = CapacityProgress.status(run, null, results, step);
        assertThat(status.getOutcome()).isEqualTo("MaxRatePassed");
        assertThat(status.getMaxRequestRate()).isEqualTo(64.0);
        assertThat(status.getFailingRate()).isNull();
        assertThat(status.getDisplay()).isEqualTo(">= 64.0 req/s");
        assertThat(status.getProbes()).hasSize(6);
    }

    @Test
    void aProbeTooShortToJudgeRunsAgainLargerAndThePodsAreToldTheSize() {
        BenchmarkRun run = searchRun();
        StageSummary tooShort = stage(1, 2, 100, 1.0, true, null);
        tooShort.setLoadDelivered(null);
        tooShort.setLoadDeliveredReason(LoadVerdict.SCHEDULE_TOO_SHORT);
        tooShort.setLoadDeliveredReasons(List.of(LoadVerdict.SCHEDULE_TOO_SHORT));
        CapacitySearch.Step step = CapacityProgress.next(run, null, List.of(tooShort));
        assertThat(step.nextRate()).isEqualTo(2.0);
        assertThat(step.nextSize()).isEqualTo(4);
        CapacityStatus status = CapacityProgress.status(run, null, List.of(tooShort), step);
        assertThat(status.getProbes().get(0).getVerdict()).isEqualTo("Indeterminate");
        assertThat(status.getProbes().get(0).getPassed()).isNull();
        assertThat(status.getProbes().get(1).getSize()).isEqualTo(4);
        assertThat(status.getMessage()).contains("4 times the probe size");
        var withNext = statusWith(status);
        assertThat(CapacityProgress.stages(run, withNext))
                .extracting(s -> s.getRequestRate(), s -> s.getNumPrompts())
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(2.0, 100),
                        org.assertj.core.groups.Tuple.tuple(2.0, 400));
        assertThat(
                        io.inferencebench.operator.dependent.ControlConfigMapDependent.desired(
                                        withRunStatus(run, withNext))
                                .getData())
                .containsEntry("stage-2-rate", "2.0")
                .containsEntry("stage-2-size", "4")
                .doesNotContainKey("stage-1-size");
        // the grown probe, judged: the search goes on from it at the grown size's verdict
        StageSummary grown = stage(2, 2, 400, 1.0, true, null);
        step = CapacityProgress.next(run, withNext, List.of(tooShort, grown));
        assertThat(step.nextRate()).isEqualTo(4.0);
        assertThat(step.nextSize()).isEqualTo(1);
    }

    @Test
    void aServerThatFailsEveryRequestIsNamedInTheOutcome() {
        BenchmarkRun run = searchRun();
        StageSummary failing = stage(1, 2, 100, 0.0, false, LoadVerdict.TOO_MANY_FAILURES);
        failing.setFailed(100L);
        failing.setErrorsByClass(java.util.Map.of("http_5xx", 100L));
        failing.setLoadDeliveredReasons(List.of(LoadVerdict.TOO_MANY_FAILURES));
        CapacitySearch.Step step = CapacityProgress.next(run, null, List.of(failing));
        assertThat(step.done()).isTrue();
        CapacityStatus status = CapacityProgress.status(run, null, List.of(failing), step);
        assertThat(status.getOutcome()).isEqualTo("MinRateFailed");
        assertThat(status.getMessage()).contains("100 of 100 requests failed (http_5xx: 100)");
        assertThat(status.getProbes().get(0).getFailedRequests()).isEqualTo(100);
        assertThat(status.getProbes().get(0).getVerdict()).isEqualTo("Fail");
        assertThat(status.getProbes().get(0).getLoadDeliveredReason())
                .isEqualTo(LoadVerdict.TOO_MANY_FAILURES);
    }

    private static BenchmarkRun withRunStatus(
            BenchmarkRun run, io.inferencebench.crds.v1alpha1.BenchmarkRunStatus status) {
        run.setStatus(status);
        return run;
    }

    private static io.inferencebench.crds.v1alpha1.BenchmarkRunStatus statusWith(
            CapacityStatus capacity) {
        var status = new io.inferencebench.crds.v1alpha1.BenchmarkRunStatus();
        status.setCapacity(capacity);
        return status;
    }
}
