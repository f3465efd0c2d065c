package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The arrival schedule of a ramped stage: where each request is due, and what is refused. */
class RampScheduleTest {

    private static final long NANOS = 1_000_000_000L;

    private static RampUp linear(double start, double end) {
        return new RampUp(RampUp.Strategy.LINEAR, start, end);
    }

    private static RampUp exponential(double start, double end) {
        return new RampUp(RampUp.Strategy.EXPONENTIAL, start, end);
    }

    private static ArrivalSchedule overTime(RampUp ramp, Duration span, ArrivalKind kind, long s) {
        return new ArrivalSchedule(ramp, span, 0, kind, 1.0, s);
    }

    /** The first {@code n} offsets of constant arrivals ramped over {@code seconds}. */
    private static long[] constant(RampUp ramp, long seconds, int n) {
        return offsets(overTime(ramp, Duration.ofSeconds(seconds), ArrivalKind.CONSTANT, 1), n);
    }

    private static long[] offsets(ArrivalSchedule schedule, int n) {
        long[] offsets = new long[n];
        for (int i = 0; i < n; i++) {
            offsets[i] = schedule.nextOffsetNanos();
        }
        return offsets;
    }

    @Test
    void aLinearRampFromZeroPutsConstantArrivalKAtTheSquareRootOfK() {
        // r(t) = 50 t over 2 s (0 -> 100 req/s): Λ(t) = 25 t², so arrival k is due at sqrt(k) / 5
        long[] due = constant(linear(0, 100), 2, 101);
        for (int k = 0; k <= 100; k++) {
            assertThat(due[k])
                    .as("arrival %d", k)
                    .isCloseTo(Math.round(Math.sqrt(k) / 5 * NANOS), within(1L));
        }
        assertThat(due[100]).isEqualTo(2 * NANOS);
    }

    @Test
    void aLinearRampPutsConstantArrivalKWhereTheIntegratedRateReachesK() {
        // 5 -> 50 req/s over 4 s: Λ(t) = 5 t + 45 t² / 8, 110 requests in all; arrival k at the
        // positive root of 45/8 t² + 5 t - k = 0
        long[] due = constant(linear(5, 50), 4, 111);
        double a = 45.0 / 8;
        for (int k = 0; k <= 110; k++) {
            double t = (-5 + Math.sqrt(25 + 4 * a * k)) / (2 * a);
            assertThat(due[k]).as("arrival %d", k).isCloseTo(Math.round(t * NANOS), within(2L));
        }
        assertThat(due[110]).isEqualTo(4 * NANOS);
        // beyond the ramp the rate stays at its end: the next one 1/50 s later
        assertThat(
                        overTime(linear(5, 50), Duration.ofSeconds(4), ArrivalKind.CONSTANT, 1)
                                .due(112, Long.MAX_VALUE)
                                .lastOffsetNanos())
                .isCloseTo(4 * NANOS + NANOS / 50, within(2L));
    }

    @Test
    void anExponentialRampPutsConstantArrivalKAtTheLogOfOnePlusKOverTheStartRate() {
        // r(t) = 10 e^t over 1 s (10 -> 10e req/s): Λ(t) = 10 (e^t - 1), arrival k at ln(1 + k/10)
        long[] due = constant(exponential(10, 10 * Math.E), 1, 17);
        for (int k = 0; k < due.length; k++) {
            assertThat(due[k])
                    .as("arrival %d", k)
                    .isCloseTo(Math.round(Math.log1p(k / 10.0) * NANOS), within(2L));
        }
    }

    @Test
    void constantArrivalsOfARisingRampComeCloserAndCloser() {
        for (RampUp ramp : new RampUp[] {linear(1, 200), exponential(1, 200)}) {
            long[] due = constant(ramp, 5, (int) Math.floor(ramp.integral(5, 5)));
            for (int k = 2; k < due.length; k++) {
                assertThat(due[k] - due[k - 1])
                        .as("%s gap %d", ramp.strategy(), k)
                        .isPositive()
                        .isLessThanOrEqualTo(due[k - 1] - due[k - 2]);
            }
        }
    }

    @Test
    void poissonArrivalsDueInTheRampMatchItsIntegralOverSeveralSeeds() {
        // 10 -> 200 req/s linear over 6 s: Λ(6) = 630 requests, 10 -> 200 exponential: 190 * 6 /
        // ln 20. A Poisson count has standard deviation sqrt(Λ): every seed within 4 of them
        // (false alarm about 6e-5 per draw), the mean of 20 seeds within 4 of its own.
        for (RampUp ramp : new RampUp[] {linear(10, 200), exponential(10, 200)}) {
            Duration span = Duration.ofSeconds(6);
            double expected = ramp.integral(6, 6);
            double expectedFirstHalf = ramp.integral(3, 6);
            double sum = 0;
            double sumFirstHalf = 0;
            int seeds = 20;
            for (long seed = 1; seed <= seeds; seed++) {
                long count =
                        overTime(ramp, span, ArrivalKind.POISSON, seed)
                                .due(Long.MAX_VALUE, span.toNanos())
                                .count();
                long firstHalf =
                        overTime(ramp, span, ArrivalKind.POISSON, seed)
                                .due(Long.MAX_VALUE, span.toNanos() / 2)
                                .count();
                assertThat((double) count)
                        .as("%s seed %d", ramp.strategy(), seed)
                        .isCloseTo(expected, within(4 * Math.sqrt(expected)));
                sum += count;
                sumFirstHalf += firstHalf;
            }
            assertThat(sum / seeds)
                    .as("%s mean of %d seeds", ramp.strategy(), seeds)
                    .isCloseTo(expected, within(4 * Math.sqrt(expected / seeds)));
            // the rate rises: the first half holds what the integral gives it, not half
            assertThat(sumFirstHalf / seeds)
                    .isCloseTo(expectedFirstHalf, within(4 * Math.sqrt(expectedFirstHalf / seeds)))
                    .isLessThan(expected / 2 * 0.7);
        }
    }

    @Test
    void aPoissonRampIsReproducibleFromItsSeedAndNeverGoesBack() {
        RampUp ramp = linear(5, 80);
        long[] a = offsets(overTime(ramp, Duration.ofSeconds(3), ArrivalKind.POISSON, 7), 200);
        long[] b = offsets(overTime(ramp, Duration.ofSeconds(3), ArrivalKind.POISSON, 7), 200);
        long[] other = offsets(overTime(ramp, Duration.ofSeconds(3), ArrivalKind.POISSON, 8), 200);
        assertThat(a).isEqualTo(b).isNotEqualTo(other);
        assertThat(a[0]).isZero();
        for (int k = 1; k < a.length; k++) {
            assertThat(a[k]).isGreaterThanOrEqualTo(a[k - 1]);
        }
    }

    @Test
    void aRampOverTheRequestsSpacesEachByTheRateOfItsIndexAsVllmDoes() {
        // 11 requests, 10 -> 110 req/s: request k at rate 10 + 10 k, the gap after it 1 / that
        RampUp ramp = linear(10, 110);
        long[] due = offsets(new ArrivalSchedule(ramp, null, 11, ArrivalKind.CONSTANT, 1.0, 1), 11);
        double t = 0;
        for (int k = 0; k < 11; k++) {
            assertThat(due[k]).as("request %d", k).isCloseTo(Math.round(t * NANOS), within(2L));
            t += 1 / (10.0 + 10 * k);
        }
        // its mean rate: 10 gaps over their summed lengths
        double span = 0;
        for (int k = 0; k < 10; k++) {
            span += 1 / (10.0 + 10 * k);
        }
        assertThat(StagePlan.rampMeanRate(ramp, 11, null)).isCloseTo(10 / span, within(1e-9));
    }

    @Test
    void aRampsMeanRateOverItsDurationIsItsIntegralOverTheDuration() {
        assertThat(StagePlan.rampMeanRate(linear(5, 50), 0, Duration.ofSeconds(4)))
                .isCloseTo(27.5, within(1e-9));
        assertThat(StagePlan.rampMeanRate(exponential(10, 10 * Math.E), 0, Duration.ofSeconds(1)))
                .isCloseTo(10 * (Math.E - 1), within(1e-9));
        StagePlan plan =
                StagePlan.ramped(
                        0,
                        linear(5, 50),
                        0,
                        Duration.ofSeconds(4),
                        null,
                        ArrivalKind.CONSTANT,
                        1.0);
        assertThat(plan.requestRate()).isCloseTo(27.5, within(1e-9));
        assertThat(plan.ramped()).isTrue();
    }

    @Test
    void aRampThatCannotBeDrawnIsRefusedSayingWhy() {
        assertThatThrownBy(() -> exponential(0, 10))
                .hasMessageContaining("exponential ramp-up needs a start rate > 0");
        assertThatThrownBy(() -> linear(-1, 10)).hasMessageContaining("start rate must be >= 0");
        assertThatThrownBy(() -> linear(5, 0)).hasMessageContaining("end rate must be > 0");
        assertThatThrownBy(() -> linear(50, 5))
                .hasMessageContaining("start rate 50.0 is above its end rate 5.0");
        assertThatThrownBy(() -> linear(1, Double.POSITIVE_INFINITY))
                .hasMessageContaining("end rate must be > 0");
        assertThatThrownBy(() -> RampUp.Strategy.parse("cubic"))
                .hasMessageContaining("must be linear or exponential, got 'cubic'");
        assertThatThrownBy(
                        () ->
                                StagePlan.ramped(
                                        2, linear(0, 10), 100, null, null, ArrivalKind.POISSON, 1))
                .hasMessageContaining("stage 3: a ramp from 0 needs a duration");
        assertThatThrownBy(
                        () ->
                                new StagePlan(
                                        0,
                                        10,
                                        4,
                                        100,
                                        null,
                                        null,
                                        ArrivalKind.POISSON,
                                        1,
                                        linear(1, 10)))
                .hasMessageContaining("a ramp-up ramps a rate, not a concurrency");
    }
}
