package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ScheduleTest {

    @BeforeAll
    static void warmJit() throws Exception {
        JitWarmup.ensure();
    }

    private static double[] gaps(ArrivalSchedule s, int n) {
        double[] gaps = new double[n];
        long previous = s.nextOffsetNanos();
        assertThat(previous).isZero();
        for (int i = 0; i < n; i++) {
            long next = s.nextOffsetNanos();
            gaps[i] = (next - previous) / 1e9;
            previous = next;
        }
        return gaps;
    }

    private static double mean(double[] v) {
        double sum = 0;
        for (double x : v) {
            sum += x;
        }
        return sum / v.length;
    }

    private static double variance(double[] v) {
        double m = mean(v);
        double sum = 0;
        for (double x : v) {
            sum += (x - m) * (x - m);
        }
        return sum / v.length;
    }

    @Test
    void constantArrivalsAreEvenlySpaced() {
        double[] g = gaps(new ArrivalSchedule(250, ArrivalKind.CONSTANT, 1, 1), 1000);
        for (double gap : g) {
            assertThat(gap).isCloseTo(0.004, within(1e-9));
        }
    }

    @Test
    void poissonGapsAreExponentialWithTheRequestedMean() {
        double[] g = gaps(new ArrivalSchedule(50, ArrivalKind.POISSON, 1, 11), 40_000);
        assertThat(mean(g)).isCloseTo(0.02, within(0.0005));
        // Exponential: coefficient of variation 1.
        assertThat(variance(g) / (mean(g) * mean(g))).isCloseTo(1.0, within(0.05));
    }

    @Test
    void gammaBurstinessFollowsVllmsDefinition() {
        // shape = burstiness, scale = 1 / (rate * burstiness): mean 1/rate, CV^2 = 1/burstiness.
        for (double burstiness : new double[] {0.25, 0.5, 2.0, 4.0}) {
            double[] g = gaps(new ArrivalSchedule(20, ArrivalKind.GAMMA, burstiness, 5), 60_000);
            assertThat(mean(g))
                    .as("mean, burstiness %s", burstiness)
                    .isCloseTo(0.05, within(0.0015));
            assertThat(variance(g) / (mean(g) * mean(g)))
                    .as("CV^2, burstiness %s", burstiness)
                    .isCloseTo(1.0 / burstiness, within(0.08 / burstiness));
        }
    }

    @Test
    void schedulesAreReproducibleFromTheSeed() {
        ArrivalSchedule a = new ArrivalSchedule(100, ArrivalKind.GAMMA, 0.5, 42);
        ArrivalSchedule b = new ArrivalSchedule(100, ArrivalKind.GAMMA, 0.5, 42);
        ArrivalSchedule c = new ArrivalSchedule(100, ArrivalKind.GAMMA, 0.5, 43);
        boolean differs = false;
        for (int i = 0; i < 100; i++) {
            long x = a.nextOffsetNanos();
            assertThat(b.nextOffsetNanos()).isEqualTo(x);
            differs |= c.nextOffsetNanos() != x;
        }
        assertThat(differs).isTrue();
    }

    @Test
    void openLoopDeliversTheRequestedRateWithSmallLag() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(2, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, Duration.ofSeconds(10))) {
            StageResult r = f.engine.runStage(EngineFixture.open(200, 600, ArrivalKind.CONSTANT));
            assertThat(r.completed).isEqualTo(600);
            double achieved = LpgProfileWriter.achievedRate(r);
            assertThat(achieved).isCloseTo(200, within(200 * 0.01));
            assertThat(r.scheduleLagMs.count()).isEqualTo(600);
            // Test machines are shared and often overloaded, so only the typical lag is held to a
            // millisecond here; the p99 <= 2 ms target is measured by the benchmark on a quiet
            // machine. The absolute schedule keeps the achieved rate exact regardless.
            assertThat(r.scheduleLagMs.median()).isLessThan(1.0);
            assertThat(r.scheduleLagMs.percentile(90)).isLessThan(20.0);
            assertThat(r.slotWaitMs.count()).isZero();
            double windowSeconds = (r.lastDispatchEpochNanos - r.firstDispatchEpochNanos) / 1e9;
            assertThat(windowSeconds).isCloseTo(599 / 200.0, within(0.05));
        }
    }

    @Test
    void durationBoundsAStage() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(1, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 2, Duration.ofSeconds(10))) {
            long start = System.nanoTime();
            StageResult r =
                    f.engine.runStage(
                            new StagePlan(
                                    0,
                                    100,
                                    null,
                                    0,
                                    Duration.ofMillis(500),
                                    null,
                                    ArrivalKind.CONSTANT,
                                    1));
            assertThat((System.nanoTime() - start) / 1e6).isLessThan(2000);
            assertThat(r.sent).isEqualTo(50);
            assertThat(r.completed).isEqualTo(50);
            assertThat(r.numPromptsRequested).isZero();
        }
    }

    @Test
    void maxConcurrencyCapsInFlightAndReportsSlotWaitAsLag() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(60, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 2, Duration.ofSeconds(10))) {
            StageResult r =
                    f.engine.runStage(
                            new StagePlan(
                                    0,
                                    Double.POSITIVE_INFINITY,
                                    null,
                                    6,
                                    null,
                                    2,
                                    ArrivalKind.POISSON,
                                    1));
            assertThat(r.completed).isEqualTo(6);
            assertThat(r.inFlightPeak).isEqualTo(2);
            assertThat(r.concurrency).isEqualTo(2);
            assertThat(r.slotWaitMs.count()).isEqualTo(6);
            // Requests 3..6 waited for a slot: about one and two response times.
            assertThat(r.slotWaitMs.max()).isGreaterThan(100);
            assertThat(r.slotWaitMs.min()).isLessThan(1);
            assertThat(r.scheduleLagMs.max()).isGreaterThanOrEqualTo(r.slotWaitMs.max());
        }
    }

    @Test
    void warmUpRequestsAreNotCounted() throws Exception {
        OpenAiStub stub = new OpenAiStub(1, 1, true);
        try (StubServer server = new StubServer(stub);
                EngineFixture f = new EngineFixture(server.baseUrl(), 2, Duration.ofSeconds(10))) {
            assertThat(f.engine.warmUp(5, 2)).isEqualTo(5);
            StageResult r =
                    f.engine.runStage(
                            EngineFixture.open(Double.POSITIVE_INFINITY, 3, ArrivalKind.POISSON));
            assertThat(r.sent).isEqualTo(3);
            assertThat(r.completed).isEqualTo(3);
            assertThat(server.requests()).isEqualTo(8);
            assertThat(f.finished).hasSize(3);
        }
    }
}
