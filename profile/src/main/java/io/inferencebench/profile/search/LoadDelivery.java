package io.inferencebench.profile.search;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Whether a stage's profile shows the requested load was delivered: the client dispatched at the
 * requested rate and kept its schedule: the achieved rate within 5 % of the requested one (as the
 * operator's LoadDelivered condition), and at most a tenth of the requests more than 100 ms late.
 * The lag is judged at p90, not at the operator's p99: a probe is short, and its p99 is one or two
 * requests that one pause of a busy machine delays, while a client that cannot keep up delays most
 * of them. With random arrivals the achieved rate of {@code n} requests also varies by about {@code
 * rate / sqrt(n)} by chance, so the rate may fall short by up to three of those before the load
 * counts as not delivered.
 */
public final class LoadDelivery {

    /** Largest shortfall of the achieved rate that still counts as delivered. */
    public static final double MAX_RATE_SHORTFALL = 0.05;

    /** Largest p90 schedule lag (due to sent, without waits for a concurrency slot), ms. */
    public static final double MAX_SCHEDULE_LAG_P90_MS = 100;

    private LoadDelivery() {}

    /**
     * Judges a profile.
     *
     * @param metrics the profile's {@code metrics} object
     * @param randomArrivals whether arrivals were random (Poisson, gamma) rather than constant
     * @return {@code null} when delivered, else why not
     */
    public static String shortfall(JsonNode metrics, boolean randomArrivals) {
        double requested = metrics.path("request_rate").asDouble(Double.NaN);
        double achieved = metrics.path("achieved_rate").asDouble(Double.NaN);
        long sent = metrics.path("requests_sent").asLong(0);
        if (!Double.isFinite(requested) || sent < 2) {
            return "the probe sent fewer than two requests";
        }
        double tolerance =
                randomArrivals
                        ? Math.max(MAX_RATE_SHORTFALL, 3 / Math.sqrt(sent))
                        : MAX_RATE_SHORTFALL;
        if (achieved < requested * (1 - tolerance)) {
            return String.format(
                    java.util.Locale.ROOT, "achieved %.3g of %.3g req/s", achieved, requested);
        }
        double lag = metrics.path("p90_schedule_lag_ms").asDouble(0);
        double slotWait = metrics.path("p90_slot_wait_ms").asDouble(0);
        if (lag - slotWait > MAX_SCHEDULE_LAG_P90_MS) {
            return String.format(
                    java.util.Locale.ROOT,
                    "p90 schedule lag %.0f ms (the client fell behind its schedule)",
                    lag);
        }
        return null;
    }
}
