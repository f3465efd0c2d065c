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
 */
public record StagePlan(
        int index,
        double requestRate,
        Integer concurrency,
        long numPrompts,
        Duration duration,
        Integer maxConcurrency,
        ArrivalKind arrival,
        double burstiness) {

    public StagePlan {
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

    public boolean closedLoop() {
        return concurrency != null;
    }
}
