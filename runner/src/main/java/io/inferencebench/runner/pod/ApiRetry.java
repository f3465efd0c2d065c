package io.inferencebench.runner.pod;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * Retries API calls that failed for a reason that may pass (connection problems, throttling, server
 * errors, conflicts) with capped exponential back-off and jitter. Other errors (forbidden, invalid)
 * are thrown at once: retrying cannot fix them.
 */
final class ApiRetry {

    private final Duration budget;
    private final long firstDelayMillis;
    private final long maxDelayMillis;

    ApiRetry(Duration budget, long firstDelayMillis, long maxDelayMillis) {
        this.budget = budget;
        this.firstDelayMillis = firstDelayMillis;
        this.maxDelayMillis = maxDelayMillis;
    }

    /** Default for writes whose loss would lose results: two minutes of retries. */
    static ApiRetry standard() {
        return new ApiRetry(Duration.ofMinutes(2), 200, 5_000);
    }

    static boolean transientFailure(KubernetesClientException e) {
        int code = e.getCode();
        // No HTTP status (0, or -1 when the client saw the connection close, as while the API
        // server restarts): the request may not have reached a server at all.
        return code <= 0 || code == 409 || code == 429 || code >= 500;
    }

    <T> T call(String what, Supplier<T> call) {
        long deadline = System.nanoTime() + budget.toNanos();
        long delay = firstDelayMillis;
        while (true) {
            try {
                return call.get();
            } catch (KubernetesClientException e) {
                if (!transientFailure(e) || System.nanoTime() + delay * 1_000_000L > deadline) {
                    throw new PodFailure(
                            what + " failed: " + describe(e) + " (HTTP " + e.getCode() + ")", e);
                }
            }
            try {
                Thread.sleep(delay + ThreadLocalRandom.current().nextLong(delay / 2 + 1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new PodFailure(what + " interrupted", e);
            }
            delay = Math.min(maxDelayMillis, delay * 2);
        }
    }

    static String describe(KubernetesClientException e) {
        if (e.getStatus() != null && e.getStatus().getMessage() != null) {
            return e.getStatus().getMessage();
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
