package io.inferencebench.operator.run;

import java.time.Duration;

/**
 * How soon a run is reconciled again, by what it waits for. A step returns one of these (or a time
 * it computed, such as a run's expiry), {@code null} when only an event should wake the run.
 */
public final class Requeue {

    /** A Secret, ConfigMap or ServiceAccount the run names is missing: looked for again. */
    public static final Duration MISSING_REFERENCE = Duration.ofSeconds(5);

    /** The target is not ready: probed again. */
    public static final Duration TARGET_NOT_READY = Duration.ofSeconds(2);

    /** Queued under the active-run cap: looks for a free slot (and at its target) again. */
    public static final Duration QUEUED = Duration.ofSeconds(3);

    /** Runner pods starting: their readiness and the start timeout looked at again. */
    public static final Duration RUNNERS_STARTING = Duration.ofSeconds(2);

    /** A stage running: the live view refreshed (part events also wake the run). */
    public static final Duration PROGRESS_REFRESH = Duration.ofSeconds(5);

    /** Soon, but after the watch has delivered the status just patched. */
    public static final Duration SOON = Duration.ofMillis(200);

    /** A baseline run that is missing or still running: looked at again. */
    public static final Duration BASELINE_RETRY = Duration.ofSeconds(15);

    /** Added to a finished run's expiry so the reconcile it causes finds the run expired. */
    public static final Duration AFTER_EXPIRY = Duration.ofMillis(100);

    /**
     * Returned (and compared by identity) when the step deleted the run: nothing is left to patch.
     */
    public static final Duration DELETED = Duration.ofMillis(-1);

    private Requeue() {}

    /** The sooner of two delays, either of which may be {@code null} (no requeue). */
    public static Duration sooner(Duration a, Duration b) {
        if (a == null) {
            return b;
        }
        return b == null || a.compareTo(b) <= 0 ? a : b;
    }
}
