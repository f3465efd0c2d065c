package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.CapacityStatus;
import io.inferencebench.crds.v1alpha1.StageResult;
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

    private static StageResult stage(
            int n, double rate, long sent, double attainment, boolean delivered, String reason) {
        StageResult r = new StageResult();
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
        List<StageResult> results =
                List.of(
                        stage(1, 2, 100, 1.0, true, LoadVerdict.DELIVERED),
                        stage(2, 4, 100, 0.5, false, LoadVerdict.TOO_MANY_FAILURES),
                        stage(3, 2.828, 100, 1.0, false, "ScheduleLagged"));
        CapacitySearch.Step step = CapacityProgress.next(run, results.subList(0, 1));
        assertThat(step.nextRate()).isEqualTo(4.0);
        step = CapacityProgress.next(run, results.subList(0, 2));
        // 4 req/s failed (the server's failures count against it): bisect between 2 and 4
        assertThat(step.nextRate()).isEqualTo(2.828);
        step = CapacityProgress.next(run, results);
        CapacityStatus status = CapacityProgress.status(run, results, step);
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
    void aServerFasterThanTheMaxRateIsShownAsAtLeastIt() {
        BenchmarkRun run = searchRun();
        List<StageResult> results =
                List.of(
                        stage(1, 2, 100, 1, true, null),
                        stage(2, 4, 100, 1, true, null),
                        stage(3, 8, 100, 1, true, null),
                        stage(4, 16, 100, 1, true, null),
                        stage(5, 32, 100, 1, true, null),
                        stage(6, 64, 100, 1, true, null));
        CapacitySearch.Step step = CapacityProgress.next(run, results);
        assertThat(step.done()).isTrue();
        CapacityStatus status = CapacityProgress.status(run, results, step);
        assertThat(status.getOutcome()).isEqualTo("MaxRatePassed");
        assertThat(status.getMaxRequestRate()).isEqualTo(64.0);
        assertThat(status.getFailingRate()).isNull();
        assertThat(status.getDisplay()).isEqualTo(">= 64.0 req/s");
        assertThat(status.getProbes()).hasSize(6);
    }

    private static io.inferencebench.crds.v1alpha1.BenchmarkRunStatus statusWith(
            CapacityStatus capacity) {
        var status = new io.inferencebench.crds.v1alpha1.BenchmarkRunStatus();
        status.setCapacity(capacity);
        return status;
    }
}
