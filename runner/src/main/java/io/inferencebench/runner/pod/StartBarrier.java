package io.inferencebench.runner.pod;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits until a wall-clock start instant written by the operator. Every runner pod starts its stage
 * at the same instant, so the stage has one time window across pods. The wall-clock distance is
 * converted once into a monotonic deadline, then the thread parks in short slices (to notice
 * cancellation) and spins the last stretch, because parking alone oversleeps.
 */
public final class StartBarrier {

    /** Longest single park, so cancellation is noticed promptly. */
    static final long SLICE_NANOS = 50_000_000L;

    /** The final stretch spun instead of parked. */
    static final long SPIN_NANOS = 200_000L;

    private final Clock clock;

    public StartBarrier(Clock clock) {
        this.clock = clock;
    }

    /**
     * Parses a start instant as the operator writes it (RFC 3339, UTC {@code Z} or an offset).
     *
     * @param key the control key it came from, for the message
     * @param text the value
     * @return the instant
     * @throws IllegalArgumentException naming the key when the text is not an RFC 3339 instant
     */
    public static Instant parse(String key, String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("control key " + key + " is empty");
        }
        try {
            return Instant.parse(text.strip());
        } catch (DateTimeParseException e) {
            try {
                return OffsetDateTime.parse(text.strip()).toInstant();
            } catch (DateTimeParseException again) {
                throw new IllegalArgumentException(
                        "control key "
                                + key
                                + ": '"
                                + text
                                + "' is not an RFC 3339 instant such as 2026-01-02T03:04:05.678Z");
            }
        }
    }

    /**
     * How long from {@code now} until {@code start}; zero when it has passed.
     *
     * @param start the start instant
     * @param now the current instant
     * @return a non-negative duration
     */
    public static Duration remaining(Instant start, Instant now) {
        Duration d = Duration.between(now, start);
        return d.isNegative() ? Duration.ZERO : d;
    }

    /**
     * Blocks until {@code start} (by this barrier's clock) or until {@code cancelled} turns true.
     *
     * @param start the start instant
     * @param cancelled polled between slices
     * @return how late the wait ended relative to {@code start} (negative only when cancelled
     *     early); the caller records large values
     */
    public Duration await(Instant start, BooleanSupplier cancelled) {
        Instant now = clock.instant();
        long deadline = System.nanoTime() + Duration.between(now, start).toNanos();
        long left;
        while ((left = deadline - System.nanoTime()) > SPIN_NANOS) {
            if (cancelled.getAsBoolean()) {
                return Duration.between(start, clock.instant());
            }
            LockSupport.parkNanos(Math.min(SLICE_NANOS, left - SPIN_NANOS));
        }
        while (System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        return Duration.between(start, clock.instant());
    }
}
