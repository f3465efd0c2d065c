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

    /**
     * A stage at {@code requested} req/s whose drawn schedule had {@code due} requests over {@code
     * span} s, and which sent {@code sent} over {@code sendSpan} s.
     */
    private static LoadVerdict.Figures figures(
            Double requested,
            long due,
            double span,
            long sent,
            double sendSpan,
            Double lag,
            Double failures,
            RunnerCpu cpu) {
        return new LoadVerdict.Figures(
                requested, due, span, sent, sendSpan, lag, null, failures, null, cpu, false);
    }

    private static LoadVerdict judge(LoadVerdict.Figures figures) {
        return LoadVerdict.judge(figures, 0.1, LIMIT);
    }

    /** A constant schedule: 101 requests over 10 s at 10 req/s, sent over {@code sendSpan}. */
    private static LoadVerdict constant(double sendSpan, Double lag, Double failures, RunnerCpu c) {
        return judge(figures(10.0, 101, 10.0, 101, sendSpan, lag, failures, c));
    }

    @Test
    void aStageWithinEveryLimitIsDelivered() {
        LoadVerdict v = constant(10.3, 3.0, 0.02, cpu(1.0, 10, 2, 0.3));
        assertThat(v.delivered()).isTrue();
        assertThat(v.delivery()).isEqualTo(LoadVerdict.Delivery.DELIVERED);
        assertThat(v.reason()).isEqualTo("Delivered");
        assertThat(v.reasons()).isEmpty();
    }

    @Test
    void achievedRateMoreThanFivePercentShortOfTheDrawnScheduleIsNotDelivered() {
        // 100 gaps in 10.52 s: 9.51 req/s of 10
        assertThat(constant(10.52, 1.0, 0.0, null).delivered()).isTrue();
        LoadVerdict v = constant(10.6, 1.0, 0.0, null);
        assertThat(v.delivered()).isFalse();
        assertThat(v.reason()).isEqualTo("RateNotAchieved");
        assertThat(v.message())
                .isEqualTo(
                        "achieved 9.43 req/s (101 requests in 10.60 s) while the schedule it drew"
                                + " asked for 10.0 req/s (101 requests in 10.00 s; requested"
                                + " 10.0), more than 5 % short");
    }

    @Test
    void aPoissonDrawBelowTheNominalRateIsNotTheClientsFault() {
        // The seeds of the report: 37 arrivals in 10 s at a nominal 4 req/s, every one sent on
        // time. Its achieved rate reads 3.6-3.9 req/s, "short" of 4, but it is the draw's own.
        LoadVerdict v = judge(figures(4.0, 37, 9.7, 37, 9.7003, 0.2, 0.0, null));
        assertThat(v.delivered()).isTrue();
        assertThat(figures(4.0, 37, 9.7, 37, 9.7003, 0.2, 0.0, null).scheduledRate())
                .isCloseTo(3.71, org.assertj.core.data.Offset.offset(0.01));
    }

    @Test
    void requestsDueButNeverSentAreNotDelivered() {
        LoadVerdict v = judge(figures(4.0, 40, 9.8, 31, 9.9, 2.0, 0.0, null));
        assertThat(v.delivered()).isFalse();
        assertThat(v.reason()).isEqualTo("RateNotAchieved");
        assertThat(v.message())
                .isEqualTo("sent 31 of the 40 requests due in its schedule by the stage's end");
    }

    @Test
    void aScheduleTooShortToTellJitterFromAShortfallIsIndeterminate() {
        // 10 requests due in 2.2 ms (4096 req/s), sent in 2.6 ms: 15 % short but only 0.4 ms
        LoadVerdict v = judge(figures(4096.0, 10, 0.0022, 10, 0.0026, 0.5, 0.0, null));
        assertThat(v.delivery()).isEqualTo(LoadVerdict.Delivery.INDETERMINATE);
        assertThat(v.indeterminate()).isTrue();
        assertThat(v.delivered()).isFalse();
        assertThat(v.reason()).isEqualTo("ScheduleTooShort");
        assertThat(v.clientDelivery()).isEqualTo(LoadVerdict.Delivery.INDETERMINATE);
        assertThat(v.message()).contains("too short to judge").contains("0.40 ms");
        // the same shortfall over milliseconds more is a failure of the client
        LoadVerdict late = judge(figures(31380.0, 10, 0.00029, 10, 0.0045, 3.0, 0.0, null));
        assertThat(late.delivery()).isEqualTo(LoadVerdict.Delivery.NOT_DELIVERED);
        assertThat(late.reason()).isEqualTo("RateNotAchieved");
        assertThat(late.message()).startsWith("achieved 2000.0 req/s (10 requests in 4.50 ms)");
    }

    @Test
    void scheduleLagAboveTheBoundIsNotDelivered() {
        assertThat(constant(10.0, 100.0, 0.0, null).delivered()).isTrue();
        LoadVerdict v = constant(10.0, 100.5, 0.0, null);
        assertThat(v.reason()).isEqualTo("ScheduleLagged");
        assertThat(v.message()).isEqualTo("p99 schedule lag 100.5 ms, above 100 ms");
    }

    @Test
    void slotWaitsOfAConcurrencyCapAreTheServersSlownessNotTheClients() {
        LoadVerdict.Figures capped =
                new LoadVerdict.Figures(
                        10.0, 101L, 10.0, 101, 14.0, 900.0, 880.0, 0.0, null, null, false);
        LoadVerdict v = LoadVerdict.judge(capped, 0.1, LIMIT);
        assertThat(v.delivered()).isFalse();
        assertThat(v.reason()).isEqualTo("ConcurrencyLimited");
        assertThat(v.clientDelivery()).isEqualTo(LoadVerdict.Delivery.DELIVERED);
        assertThat(v.message()).contains("max-concurrency slot (p99 880.0 ms)");
    }

    @Test
    void failuresAboveTheLimitNameTheLimitAndComeFirst() {
        assertThat(constant(10.0, 1.0, 0.1, null).delivered()).isTrue();
        LoadVerdict v =
                LoadVerdict.judge(
                        new LoadVerdict.Figures(
                                10.0,
                                101L,
                                10.0,
                                101,
                                20.0,
                                1.0,
                                null,
                                0.5,
                                "http_429 9",
                                null,
                                false),
                        0.1,
                        LIMIT);
        assertThat(v.reason()).isEqualTo("TooManyFailures");
        assertThat(v.reasons()).containsExactly("TooManyFailures", "RateNotAchieved");
        assertThat(v.clientDelivery()).isEqualTo(LoadVerdict.Delivery.NOT_DELIVERED);
        assertThat(v.message())
                .startsWith(
                        "50.0 % of requests failed (http_429 9), above spec.load.maxFailureRatio"
                                + " 0.10; achieved 5.00 req/s");
        // failures alone: the server's verdict, the client kept its schedule
        LoadVerdict failedOnly = constant(10.0, 1.0, 1.0, null);
        assertThat(failedOnly.delivered()).isFalse();
        assertThat(failedOnly.clientDelivery()).isEqualTo(LoadVerdict.Delivery.DELIVERED);
    }

    @Test
    void aRunnerThatUsedItsWholeCpuBudgetIsSaturated() {
        // 1.8 CPU-s in 2 s on one CPU: 90 %
        LoadVerdict.Figures busy = figures(1000.0, 2000, 2.0, 2000, 2.0, 2.0, 0.0, null);
        LoadVerdict v = judge(withCpu(busy, cpu(1.8, 2, 1, 0.01)));
        assertThat(v.delivered()).isFalse();
        assertThat(v.reason()).isEqualTo("RunnerSaturated");
        assertThat(v.message())
                .isEqualTo(
                        "the runner ran out of its 1 CPU: used 90 % of it (1.80 CPU-s in 2.00 s)");
        assertThat(judge(withCpu(busy, cpu(1.7, 2, 1, 0.01))).delivered()).isTrue();
        // the same CPU seconds on two CPUs are 45 %
        assertThat(judge(withCpu(busy, cpu(1.8, 2, 2, 0.01))).delivered()).isTrue();
    }

    private static LoadVerdict.Figures withCpu(LoadVerdict.Figures f, RunnerCpu cpu) {
        return new LoadVerdict.Figures(
                f.requestedRate(),
                f.due(),
                f.scheduleSpanSeconds(),
                f.sent(),
                f.dispatchSpanSeconds(),
                f.scheduleLagP99Ms(),
                f.slotWaitP99Ms(),
                f.failureRatio(),
                f.failureClasses(),
                cpu,
                f.partial());
    }

    @Test
    void aRunnerWaitingForItsCpuIsStarvedEvenWithCpuLeftOnPaper() {
        RunnerCpu starved = cpu(0.5, 2, 1, 1.2);
        starved.runner = 3;
        LoadVerdict v =
                judge(
                        new LoadVerdict.Figures(
                                null, null, null, 50, 2.0, null, null, 0.0, null, starved, false));
        assertThat(v.reason()).isEqualTo("RunnerSaturated");
        assertThat(v.message())
                .isEqualTo(
                        "runner 3 ran out of its 1 CPU: its threads waited 1.20 s for a CPU in 2.00 s"
                                + " (other processes on its CPUs)");
    }

    @Test
    void cgroupThrottlingIsSaturation() {
        RunnerCpu throttled = cpu(0.2, 2, 0.25, null);
        throttled.throttledSeconds = 0.5;
        LoadVerdict v = judge(withCpu(figures(5.0, 11, 2.0, 11, 2.0, 1.0, 0.0, null), throttled));
        assertThat(v.reason()).isEqualTo("RunnerSaturated");
        // 0.2 CPU-s of 0.5 allowed is 40 %: only the throttling counts here
        assertThat(v.message())
                .isEqualTo(
                        "the runner ran out of its 0.25 CPU: its cgroup CPU quota throttled it 0.50 s in 2.00 s");
    }

    @Test
    void closedLoopStagesHaveNoScheduleToMiss() {
        LoadVerdict v =
                judge(
                        new LoadVerdict.Figures(
                                null, null, null, 30, 10.0, 5000.0, null, 0.0, null, null, false));
        assertThat(v.delivered()).isTrue();
        assertThat(
                        judge(
                                        new LoadVerdict.Figures(
                                                Double.POSITIVE_INFINITY,
                                                null,
                                                null,
                                                30,
                                                10.0,
                                                5000.0,
                                                null,
                                                0.0,
                                                null,
                                                null,
                                                false))
                                .delivered())
                .isTrue();
    }

    @Test
    void figuresOfAStageResultCarryItsSchedule() {
        StageResult r = new StageResult();
        r.requestedRate = 10;
        r.sent = 20;
        r.due = 20;
        r.completed = 19;
        r.countFailure("timeout");
        r.firstDueEpochNanos = 1_000_000_000L;
        r.lastDueEpochNanos = 1_000_000_000L + 1_900_000_000L; // 19 gaps in 1.9 s: 10 req/s
        r.firstDispatchEpochNanos = 1_000_000_000L;
        r.lastDispatchEpochNanos = 1_000_000_000L + 3_800_000_000L; // 19 gaps in 3.8 s: 5 req/s
        LoadVerdict.Figures f = LoadVerdict.Figures.of(r);
        assertThat(f.scheduledRate()).isEqualTo(10.0);
        assertThat(f.achievedRate()).isEqualTo(5.0);
        LoadVerdict v = LoadVerdict.judge(f, 0.1, "--max-failure-ratio");
        assertThat(v.reason()).isEqualTo("RateNotAchieved");
        assertThat(v.message()).startsWith("achieved 5.00 req/s (20 requests in 3.80 s)");
    }

    @Test
    void theScheduleMergesAcrossRunners() {
        StageResult a = new StageResult();
        a.due = 10;
        a.firstDueEpochNanos = 5_000;
        a.lastDueEpochNanos = 9_000;
        StageResult b = new StageResult();
        b.due = 12;
        b.firstDueEpochNanos = 4_000;
        b.lastDueEpochNanos = 8_000;
        StageResult empty = new StageResult();
        StageResult m = StageResult.merge(List.of(a, b, empty));
        assertThat(m.due).isEqualTo(22);
        assertThat(m.firstDueEpochNanos).isEqualTo(4_000);
        assertThat(m.lastDueEpochNanos).isEqualTo(9_000);
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
