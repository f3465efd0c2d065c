package io.inferencebench.runner.engine;

import java.time.Duration;

/**
 * One load stage.
 *
 * @param requestRate open-loop rate in req/s, {@link Double#POSITIVE_INFINITY} for all at once;
 *     ignored when {@code concurrency} is set
 * @param concurrency closed loop: this many requests always in flight; null for open loop
 * @param numPrompts requests to send; 0 when bounded by {@code duration} only
 * @param duration stop dispatching after this long; null when bounded by {@code numPrompts}
 * @param maxConcurrency cap on requests in flight in an open-loop stage; null for none
 * @param rampUp the open-loop rate's ramp, or null for a constant rate; with a ramp, {@code
 *     requestRate} is the ramp's mean rate over the stage ({@link #rampMeanRate})
 */
public record StagePlan(
        int index,
        double requestRate,
        Integer concurrency,
        long numPrompts,
        Duration duration,
        Integer maxConcurrency,
        ArrivalKind arrival,
        double burstiness,
        RampUp rampUp) {

    /**
     * A ramped open-loop stage; its {@code requestRate} is the ramp's mean rate.
     *
     * @throws IllegalArgumentException when the ramp does not fit the stage's bounds
     */
    public static StagePlan ramped(
            int index,
            RampUp rampUp,
            long numPrompts,
            Duration duration,
            Integer maxConcurrency,
            ArrivalKind arrival,
            double burstiness) {
        if (duration == null && rampUp.startRate() <= 0) {
            throw new IllegalArgumentException(
                    "stage "
                            + (index + 1)
                            + ": a ramp from 0 needs a duration (without one the ramp runs over"
                            + " the requests, and the first would never be followed)");
        }
        return new StagePlan(
                index,
                rampMeanRate(rampUp, numPrompts, duration),
                null,
                numPrompts,
                duration,
                maxConcurrency,
                arrival,
                burstiness,
                rampUp);
    }

    /**
     * The mean rate of a ramp over a stage, req/s: the requests its rate has due over the stage's
     * length divided by that length, or, ramped over {@code numPrompts} requests, their {@code n -
     * 1} gaps over the sum of the gaps' mean lengths.
     */
    public static double rampMeanRate(RampUp rampUp, long numPrompts, Duration duration) {
        if (duration != null) {
            double seconds = duration.toNanos() / 1e9;
            return rampUp.integral(seconds, seconds) / seconds;
        }
        if (numPrompts < 2) {
            return rampUp.startRate();
        }
        double span = 0;
        for (long k = 0; k < numPrompts - 1; k++) {
            span += 1 / rampUp.rateOfRequest(k, numPrompts);
        }
        return (numPrompts - 1) / span;
    }

    public StagePlan {
        if (rampUp != null && concurrency != null) {
            throw new IllegalArgumentException(
                    "stage " + (index + 1) + ": a ramp-up ramps a rate, not a concurrency");
        }
        if (numPrompts <= 0 && duration == null) {
            throw new IllegalArgumentException(
                    "stage " + (index + 1) + " needs a number of prompts or a duration");
        }
        if (concurrency != null && concurrency <= 0) {
            throw new IllegalArgumentException(
                    "stage " + (index + 1) + ": concurrency must be > 0, got " + concurrency);
        }
        if (maxConcurrency != null && maxConcurrency <= 0) {
            throw new IllegalArgumentException(
                    "stage "
                            + (index + 1)
                            + ": max concurrency must be > 0, got "
                            + maxConcurrency);
        }
        if (concurrency == null && !(requestRate > 0)) {
            throw new IllegalArgumentException(
                    "stage "
                            + (index + 1)
                            + ": request rate must be > 0 or inf, got "
                            + requestRate);
        }
        if (concurrency == null
                && Double.isInfinite(requestRate)
                && duration != null
                && numPrompts <= 0
                && maxConcurrency == null) {
            throw new IllegalArgumentException(
                    "stage "
                            + index
                            + ": an unbounded rate with only a duration needs --max-concurrency");
        }
    }

    public boolean ramped() {
        return rampUp != null;
    }

    public boolean closedLoop() {
        return concurrency != null;
    }
}
