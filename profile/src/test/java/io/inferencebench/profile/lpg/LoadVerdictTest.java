package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoadVerdictTest {

    private static final String LIMIT = "spec.load.maxFailureRatio";

    private static RunnerCpu cpu(double cpuSeconds, double wall, double cpus, Double wait) {
        RunnerCpu c = new RunnerCpu();
        c.cpuSeconds = cpuSeconds;
        c.wallSeconds = wall;
        c.availableCpus = cpus;
        c.runQueueWaitSeconds = wait;
        return c;
    }

    private static LoadVerdict judge(
            Double requested, Double achieved, Double lag, Double failures, RunnerCpu cpu) {
        return LoadVerdict.judge(
                new LoadVerdict.Figures(requested, achieved, lag, failures, null, cpu), 0.1, LIMIT);
    }

    @Test
    void aStageWithinEveryLimitIsDelivered() {
        LoadVerdict v = judge(10.0, 9.6, 3.0, 0.02, cpu(1.0, 10, 2, 0.3));
        assertThat(v.delivered()).isTrue();
        assertThat(v.reason()).isEqualTo("Delivered");
    }

    @Test
    void achievedRateMoreThanFivePercentShortIsNotDelivered() {
        assertThat(judge(10.0, 9.5, 1.0, 0.0, null).delivered()).isTrue();
        LoadVerdict v = judge(10.0, 9.4, 1.0, 0.0, null);
        assertThat(v.delivered()).isFalse();
        assertThat(v.reason()).isEqualTo("RateNotAchieved");
        assertThat(v.message())
                .isEqualTo("achieved 9.40 req/s of the requested 10.00 (more than 5 % short)");
    }

    @Test
    void scheduleLagAboveTheBoundIsNotDelivered() {
        assertThat(judge(10.0, 10.0, 100.0, 0.0, null).delivered()).isTrue();
        LoadVerdict v = judge(10.0, 10.0, 100.5, 0.0, null);
        assertThat(v.reason()).isEqualTo("ScheduleLagged");
        assertThat(v.message()).isEqualTo("p99 schedule lag 100.5 ms, above 100 ms");
    }

    @Test
    void failuresAboveTheLimitNameTheLimitAndComeFirst() {
        assertThat(judge(10.0, 10.0, 1.0, 0.1, null).delivered()).isTrue();
        LoadVerdict v =
                LoadVerdict.judge(
                        new LoadVerdict.Figures(10.0, 5.0, 1.0, 0.5, "http_429 9", null),
                        0.1,
                        LIMIT);
        assertThat(v.reason()).isEqualTo("TooManyFailures");
        assertThat(v.message())
                .isEqualTo(
                        "50.0 % of requests failed (http_429 9), above spec.load.maxFailureRatio"
                                + " 0.10; achieved 5.00 req/s of the requested 10.00 (more than 5 %"
                                + " short)");
    }

    @Test
    void aRunnerThatUsedItsWholeCpuBudgetIsSaturated() {
        // 1.8 CPU-s in 2 s on one CPU: 90 %
        LoadVerdict v = judge(1000.0, 990.0, 2.0, 0.0, cpu(1.8, 2, 1, 0.01));
        assertThat(v.delivered()).isFalse();
        assertThat(v.reason()).isEqualTo("RunnerSaturated");
        assertThat(v.message())
                .isEqualTo(
                        "the runner ran out of CPU: used 90 % of its 1 CPU (1.80 CPU-s in 2.00 s)");
        assertThat(judge(1000.0, 990.0, 2.0, 0.0, cpu(1.7, 2, 1, 0.01)).delivered()).isTrue();
        // the same CPU seconds on two CPUs are 45 %
        assertThat(judge(1000.0, 990.0, 2.0, 0.0, cpu(1.8, 2, 2, 0.01)).delivered()).isTrue();
    }

    @Test
    void aRunnerWaitingForItsCpuIsStarvedEvenWithCpuLeftOnPaper() {
        RunnerCpu starved = cpu(0.5, 2, 1, 1.2);
        starved.runner = 3;
        LoadVerdict v = judge(null, null, null, 0.0, starved);
        assertThat(v.reason()).isEqualTo("RunnerSaturated");
        assertThat(v.message())
                .isEqualTo(
                        "runner 3 ran out of CPU: its threads waited 1.20 s for a CPU in 2.00 s"
                                + " (other processes on its CPUs)");
    }

    @Test
    void cgroupThrottlingIsSaturation() {
        RunnerCpu throttled = cpu(0.2, 2, 0.25, null);
        throttled.throttledSeconds = 0.5;
        LoadVerdict v = judge(5.0, 5.0, 1.0, 0.0, throttled);
        assertThat(v.reason()).isEqualTo("RunnerSaturated");
        // 0.2 CPU-s of 0.5 allowed is 40 %: only the throttling counts here
        assertThat(v.message())
                .isEqualTo(
                        "the runner ran out of CPU: its cgroup CPU quota throttled it 0.50 s in 2.00 s");
    }

    @Test
    void closedLoopStagesHaveNoScheduleToMiss() {
        LoadVerdict v = judge(null, 3.0, 5000.0, 0.0, null);
        assertThat(v.delivered()).isTrue();
        assertThat(judge(Double.POSITIVE_INFINITY, 3.0, 5000.0, 0.0, null).delivered()).isTrue();
    }

    @Test
    void figuresOfAStageResultCarryItsMeasurements() {
        StageResult r = new StageResult();
        r.requestedRate = 10;
        r.sent = 20;
        r.completed = 19;
        r.countFailure("timeout");
        r.firstDispatchEpochNanos = 1_000_000_000L;
        r.lastDispatchEpochNanos = 1_000_000_000L + 3_800_000_000L; // 19 gaps in 3.8 s: 5 req/s
        LoadVerdict v = LoadVerdict.judge(LoadVerdict.Figures.of(r), 0.1, "--max-failure-ratio");
        assertThat(v.reason()).isEqualTo("RateNotAchieved");
        assertThat(v.message()).startsWith("achieved 5.00 req/s of the requested 10.00");
    }

    @Test
    void mergeKeepsTheMostStarvedRunner() {
        RunnerCpu fine = cpu(0.2, 2, 1, 0.1);
        RunnerCpu busy = cpu(1.9, 2, 1, 0.1);
        busy.runner = 7;
        RunnerCpu waiting = cpu(0.6, 2, 1, 0.8);
        assertThat(RunnerCpu.worst(Arrays.asList(fine, null, busy, waiting))).isSameAs(busy);
        assertThat(RunnerCpu.worst(Arrays.asList(null, null))).isNull();

        StageResult a = new StageResult();
        a.runnerCpu = fine;
        StageResult b = new StageResult();
        b.runnerCpu = busy;
        assertThat(StageResult.merge(List.of(a, b)).runnerCpu).isSameAs(busy);
    }
}
