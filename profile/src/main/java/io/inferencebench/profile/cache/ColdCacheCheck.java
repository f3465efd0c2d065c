package io.inferencebench.profile.cache;

import io.inferencebench.profile.lpg.PrefixCacheHits;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A stage declared to start from a cold prefix cache, checked against the replicas' own counters
 * over the stage window: every endpoint must have been reset, and in a stage whose prompts share no
 * prefix (random synthetic prompts: a cold cache can hit nothing in them) no replica may find more
 * than {@link #UNEXPLAINED_HIT_TOLERANCE} of its prompt tokens cached. One check for both roads:
 * the operator's per-stage {@code prefixCacheVerified} and the command line's warning.
 */
public final class ColdCacheCheck {

    /**
     * The largest share of a replica's prompt tokens that may be found cached in a stage whose
     * prompts share no prefix before the declared cold state counts as contradicted: a chat
     * template's first tokens or two random prompts that happen to begin alike may fill a block, a
     * cache that kept the previous stage's prompts finds most of them (three quarters of a 16-token
     * prompt in blocks of 4).
     */
    public static final double UNEXPLAINED_HIT_TOLERANCE = 0.05;

    private ColdCacheCheck() {}

    /**
     * A stage's declared state against the replicas' counters.
     *
     * @param verified {@code true}, {@code false}, or {@code null} when no counters were read
     * @param message why not verified, or {@code null}
     * @param hitRates each replica's hit rate (replica id → rate), in replica order
     */
    public record Verification(Boolean verified, String message, Map<String, Double> hitRates) {

        /** Defensive copy, order kept. */
        public Verification {
            hitRates = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(hitRates));
        }
    }

    /**
     * Checks one stage.
     *
     * @param notReset the endpoints not reset before the stage and why, or {@code null} when all
     *     were
     * @param hits the stage window's prefix-cache counts, or {@code null} without counters; a
     *     server scraped as one replica counts as replica {@code server}
     * @param reuseFree whether the stage's prompts share no prefix
     */
    public static Verification verify(String notReset, PrefixCacheHits hits, boolean reuseFree) {
        Map<String, PrefixCacheHits> replicas =
                hits == null
                        ? Map.of()
                        : hits.byReplica().isEmpty() ? Map.of("server", hits) : hits.byReplica();
        Map<String, Double> rates = new LinkedHashMap<>();
        List<String> contradicting = new ArrayList<>();
        new java.util.TreeMap<>(replicas)
                .forEach(
                        (replica, one) -> {
                            Double rate = one.hitRate();
                            if (rate == null) {
                                return;
                            }
                            rates.put(replica, rate);
                            if (reuseFree && rate > UNEXPLAINED_HIT_TOLERANCE) {
                                contradicting.add(
                                        String.format(
                                                Locale.ROOT,
                                                "replica %s found %.1f %% of its prompt tokens cached (%d"
                                                        + " of %d)",
                                                replica,
                                                100 * rate,
                                                one.hits(),
                                                one.queries()));
                            }
                        });
        if (notReset != null) {
            return new Verification(false, notReset, rates);
        }
        if (!contradicting.isEmpty()) {
            return new Verification(
                    false,
                    String.join("; ", contradicting)
                            + String.format(
                                    Locale.ROOT,
                                    ", more than %.0f %%, where the stage's random prompts share no"
                                            + " prefix: its cache was not empty when the stage"
                                            + " began",
                                    100 * UNEXPLAINED_HIT_TOLERANCE),
                    rates);
        }
        return new Verification(rates.isEmpty() ? null : true, null, rates);
    }
}
