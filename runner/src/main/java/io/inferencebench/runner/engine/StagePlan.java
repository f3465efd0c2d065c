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
 * @param replay the trace whose requests the stage sends, or null for a rate or concurrency stage
 *     of a dataset; an open-loop replay sends them at their recorded offsets ({@code requestRate}
 *     is then their mean rate)
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
        RampUp rampUp,
        Replay replay) {

    /**
     * A stage that sends a trace's requests.
     *
     * @param timeScale every recorded offset is multiplied by it; {@code null} for a closed-loop
     *     stage, which sends the requests in order without their times
     * @param offsetsNanos each request's offset from the stage's start (scaled; a runner pod's
     *     first is where its first request falls in the whole replay); {@code null} until the trace
     *     is read ({@link StagePlan#replaying})
     */
    public record Replay(Double timeScale, long[] offsetsNanos) {

        /** Whether the trace was read into this replay. */
        public boolean bound() {
            return offsetsNanos != null;
        }
    }

    /**
     * A stage that sends a trace's requests, to be bound to them once the trace is read ({@link
     * #replaying}).
     *
     * @param concurrency the closed loop's requests in flight, or {@code null} for a replay at the
     *     trace's offsets times {@code timeScale}
     * @param numPrompts the most requests it sends, {@code 0} for all of the trace
     * @param maxConcurrency cap on requests in flight of a replay, or {@code null}
     */
    public static StagePlan replay(
            int index,
            Integer concurrency,
            long numPrompts,
            Duration duration,
            Integer maxConcurrency,
            double timeScale) {
        return new StagePlan(
                index,
                Double.POSITIVE_INFINITY,
                concurrency,
                numPrompts,
                duration,
                concurrency == null ? maxConcurrency : null,
                ArrivalKind.CONSTANT,
                1.0,
                null,
                new Replay(concurrency == null ? timeScale : null, null));
    }

    /** A stage of a dataset (no trace), ramped or not. */
    public StagePlan(
            int index,
            double requestRate,
            Integer concurrency,
            long numPrompts,
            Duration duration,
            Integer maxConcurrency,
            ArrivalKind arrival,
            double burstiness,
            RampUp rampUp) {
        this(
                index,
                requestRate,
                concurrency,
                numPrompts,
                duration,
                maxConcurrency,
                arrival,
                burstiness,
                rampUp,
                null);
    }

    /**
     * This stage over a trace's requests, once the trace is read: an open-loop replay sends the
     * first {@code numPrompts} of them (all without a cap) at their offsets times the time scale; a
     * closed loop sends them in order, all of them once when neither prompts nor a duration bound
     * it.
     *
     * @param recordedNanos each request's recorded offset from the replay's first, in order (a
     *     runner pod's share starts where its first request is due)
     * @param nominalRate the rate this stage stands for, req/s, or {@code null} for the mean rate
     *     of its requests ({@code n - 1} over the scaled span from 0); a runner pod gives its share
     *     of the whole replay's mean, so the pods' rates add up to it
     * @throws IllegalArgumentException when the stage is not a trace's, or the trace is empty
     */
    public StagePlan replaying(long[] recordedNanos, Double nominalRate) {
        if (replay == null) {
            throw new IllegalArgumentException("stage " + (index + 1) + " replays no trace");
        }
        if (recordedNanos.length == 0) {
            throw new IllegalArgumentException("the trace has no requests to replay");
        }
        if (closedLoop()) {
            long prompts =
                    numPrompts > 0 || duration != null ? numPrompts : (long) recordedNanos.length;
            return new StagePlan(
                    index,
                    requestRate,
                    concurrency,
                    prompts,
                    duration,
                    maxConcurrency,
                    arrival,
                    burstiness,
                    null,
                    new Replay(null, new long[0]));
        }
        int n =
                (int)
                        (numPrompts > 0
                                ? Math.min(numPrompts, recordedNanos.length)
                                : recordedNanos.length);
        long[] offsets = new long[n];
        for (int i = 0; i < n; i++) {
            double scaled = recordedNanos[i] * replay.timeScale();
            offsets[i] = (long) Math.min(Math.rint(scaled), ArrivalSchedule.MAX_OFFSET_NANOS);
        }
        double span = offsets[n - 1] / 1e9;
        double mean =
                nominalRate != null
                        ? nominalRate
                        : n < 2 || span <= 0 ? Double.POSITIVE_INFINITY : (n - 1) / span;
        return new StagePlan(
                index,
                mean,
                null,
                n,
                duration,
                maxConcurrency,
                arrival,
                burstiness,
                null,
                new Replay(replay.timeScale(), offsets));
    }

    /** {@link #replaying(long[], Double)} at the mean rate of the requests. */
    public StagePlan replaying(long[] recordedNanos) {
        return replaying(recordedNanos, null);
    }

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
        if (rampUp != null && replay != null) {
            throw new IllegalArgumentException(
                    "stage " + (index + 1) + ": a trace sets its own arrival times, not a ramp");
        }
        if (numPrompts <= 0 && duration == null && replay == null) {
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
                && replay == null
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

    /** Whether the stage sends at a trace's recorded offsets. */
    public boolean replayed() {
        return replay != null && !closedLoop();
    }

    public boolean ramped() {
        return rampUp != null;
    }

    public boolean closedLoop() {
        return concurrency != null;
    }
}
