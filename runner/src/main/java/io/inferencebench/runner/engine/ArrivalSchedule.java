package io.inferencebench.runner.engine;

import java.util.SplittableRandom;

/**
 * Seeded generator of absolute arrival offsets: request i is due at stage start + t_i, with t_0 = 0
 * and t_i the sum of the first i gaps. Offsets are accumulated in double seconds and never re-based
 * on when a request was actually sent, so dispatch delays cannot drift the rate.
 *
 * <p>A {@link RampUp ramped} schedule draws the same gaps at rate 1 and rescales time: over a stage
 * of length T, arrival i of the unit-rate process (its position {@code u_i}) is due when the ramp's
 * integrated rate reaches {@code u_i} (constant arrivals: request k when it reaches k; Poisson: an
 * inhomogeneous Poisson process of the ramp's rate). A ramp over the requests (no length) spaces
 * request k from the next by a gap drawn at the rate of request k, as vLLM does.
 *
 * <p>A {@link StagePlan.Replay replayed} schedule draws nothing: it walks a trace's recorded
 * offsets, and after the last one every offset is beyond any stage's bounds.
 */
public final class ArrivalSchedule {

    private final double rate;
    private final ArrivalKind kind;
    private final double burstiness;
    private final SplittableRandom random;
    private final RampUp ramp;
    private final double rampSeconds;
    private final long rampRequests;
    private double nextOffsetSeconds;

    /** Ramped over time: the unit-rate process's position of the next request. */
    private double nextUnitDue;

    /** Ramped over the requests: the index of the next request. */
    private long nextIndex;

    /** A replayed trace's offsets, nanoseconds, or {@code null}. */
    private final long[] recorded;

    public ArrivalSchedule(double rate, ArrivalKind kind, double burstiness, long seed) {
        if (!(rate > 0)) {
            throw new IllegalArgumentException("request rate must be > 0, got " + rate);
        }
        if (!(burstiness > 0) || !Double.isFinite(burstiness)) {
            throw new IllegalArgumentException("burstiness must be > 0, got " + burstiness);
        }
        this.rate = rate;
        this.kind = kind;
        this.burstiness = burstiness;
        this.random = new SplittableRandom(seed);
        this.ramp = null;
        this.rampSeconds = Double.NaN;
        this.rampRequests = 0;
        this.recorded = null;
    }

    /** The schedule of a replayed trace: its recorded (scaled) offsets in order, nanoseconds. */
    public ArrivalSchedule(long[] recordedOffsetsNanos) {
        this.rate = Double.NaN;
        this.kind = ArrivalKind.CONSTANT;
        this.burstiness = 1;
        this.random = null;
        this.ramp = null;
        this.rampSeconds = Double.NaN;
        this.rampRequests = 0;
        this.recorded = recordedOffsetsNanos.clone();
    }

    /**
     * A ramped schedule.
     *
     * @param ramp the rate's ramp
     * @param span the stage's length, over which the rate ramps, or {@code null} to ramp over the
     *     requests
     * @param requests the stage's number of prompts, over which the rate ramps without a {@code
     *     span} (at least 1)
     */
    public ArrivalSchedule(
            RampUp ramp,
            java.time.Duration span,
            long requests,
            ArrivalKind kind,
            double burstiness,
            long seed) {
        if (!(burstiness > 0) || !Double.isFinite(burstiness)) {
            throw new IllegalArgumentException("burstiness must be > 0, got " + burstiness);
        }
        if (span == null && requests < 1) {
            throw new IllegalArgumentException("a ramp needs a duration or a number of prompts");
        }
        if (span == null && !(ramp.startRate() > 0)) {
            throw new IllegalArgumentException(
                    "a ramp over the requests (no duration) needs a start rate > 0");
        }
        if (span != null && (span.isZero() || span.isNegative())) {
            throw new IllegalArgumentException("a ramp needs a positive duration, got " + span);
        }
        this.rate = ramp.endRate();
        this.kind = kind;
        this.burstiness = burstiness;
        this.random = new SplittableRandom(seed);
        this.ramp = ramp;
        this.rampSeconds = span == null ? Double.NaN : span.toNanos() / 1e9;
        this.rampRequests = requests;
        this.recorded = null;
    }

    /**
     * The schedule of an open-loop stage at a finite rate, constant or ramped.
     *
     * @param seed the stage's seed: every draw with it walks the same offsets
     */
    public static ArrivalSchedule of(StagePlan plan, long seed) {
        if (plan.replayed()) {
            return new ArrivalSchedule(plan.replay().offsetsNanos());
        }
        if (plan.ramped()) {
            return new ArrivalSchedule(
                    plan.rampUp(),
                    plan.duration(),
                    plan.numPrompts(),
                    plan.arrival(),
                    plan.burstiness(),
                    seed);
        }
        return new ArrivalSchedule(plan.requestRate(), plan.arrival(), plan.burstiness(), seed);
    }

    /**
     * Largest offset returned, nanoseconds (about 146 years): far beyond any stage's bounds, and
     * small enough that a start instant plus it never overflows.
     */
    static final long MAX_OFFSET_NANOS = Long.MAX_VALUE / 2;

    /**
     * Offset of the next request from the stage start, nanoseconds; 0 for every request at +Inf.
     */
    public long nextOffsetNanos() {
        if (recorded != null) {
            return nextIndex < recorded.length ? recorded[(int) nextIndex++] : MAX_OFFSET_NANOS;
        }
        if (Double.isInfinite(rate)) {
            return 0;
        }
        double seconds =
                ramp == null || Double.isNaN(rampSeconds)
                        ? nextOffsetSeconds
                        : ramp.timeAt(nextUnitDue, rampSeconds);
        double nanos = seconds * 1e9;
        long offset = nanos >= MAX_OFFSET_NANOS ? MAX_OFFSET_NANOS : Math.round(nanos);
        if (ramp == null) {
            nextOffsetSeconds += gapSeconds();
        } else if (Double.isNaN(rampSeconds)) {
            nextOffsetSeconds += unitGap() / ramp.rateOfRequest(nextIndex++, rampRequests);
        } else {
            nextUnitDue += unitGap();
        }
        return offset;
    }

    /**
     * The part of a schedule a stage had due: how many requests and the offset of the last one.
     *
     * @param count requests due
     * @param lastOffsetNanos offset of the last due request from the stage start ({@code 0} when
     *     one or none)
     */
    public record Due(long count, long lastOffsetNanos) {}

    /**
     * Draws the schedule again (same rate, kind, burstiness and seed, so the same offsets the
     * stage's loops walked) and counts the requests due before {@code windowNanos} and within
     * {@code limit}: what the stage asked the client to send, whatever it managed.
     *
     * @param limit the stage's number of prompts, {@link Long#MAX_VALUE} for a duration stage
     * @param windowNanos the stage's window from its start (its duration, or until it was
     *     cancelled), {@link Long#MAX_VALUE} for none
     * @return the requests due
     */
    public Due due(long limit, long windowNanos) {
        long count = 0;
        long last = 0;
        while (count < limit) {
            long offset = nextOffsetNanos();
            if (offset >= windowNanos) {
                break;
            }
            last = offset;
            count++;
        }
        return new Due(count, last);
    }

    private double gapSeconds() {
        return switch (kind) {
            case CONSTANT -> 1.0 / rate;
            case POISSON -> exponential() / rate;
            case GAMMA -> gamma(burstiness) / (rate * burstiness);
        };
    }

    /** A gap of the kind at rate 1 (mean 1). */
    private double unitGap() {
        return switch (kind) {
            case CONSTANT -> 1.0;
            case POISSON -> exponential();
            case GAMMA -> gamma(burstiness) / burstiness;
        };
    }

    private double exponential() {
        return -Math.log(1.0 - random.nextDouble());
    }

    /** Gamma(shape, 1) by Marsaglia and Tsang; shape < 1 via the boost U^(1/shape). */
    private double gamma(double shape) {
        if (shape == 1.0) {
            return exponential();
        }
        if (shape < 1.0) {
            double u = random.nextDouble();
            return gamma(shape + 1.0) * Math.pow(u, 1.0 / shape);
        }
        double d = shape - 1.0 / 3.0;
        double c = 1.0 / Math.sqrt(9.0 * d);
        while (true) {
            double x;
            double v;
            do {
                x = normal();
                v = 1.0 + c * x;
            } while (v <= 0);
            v = v * v * v;
            double u = random.nextDouble();
            if (u < 1.0 - 0.0331 * x * x * x * x) {
                return d * v;
            }
            if (Math.log(u) < 0.5 * x * x + d * (1.0 - v + Math.log(v))) {
                return d * v;
            }
        }
    }

    private double normal() {
        double u1 = 1.0 - random.nextDouble();
        double u2 = random.nextDouble();
        return Math.sqrt(-2.0 * Math.log(u1)) * Math.cos(2.0 * Math.PI * u2);
    }
}
