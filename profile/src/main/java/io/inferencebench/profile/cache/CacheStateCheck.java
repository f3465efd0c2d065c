package io.inferencebench.profile.cache;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.lpg.PrefixCacheHits;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A stage's declared prefix-cache state checked against the replicas' own counters over the stage
 * window: every endpoint must have been reset (and warmed, for a warm state), and each replica's
 * measured hit rate must agree with the rate the workload implies ({@link Implied}) within a stated
 * tolerance. A cold stage whose prompts share no prefix implies no hit at all; a warm stage of
 * prefix_repetition prompts implies each prompt's whole prefix. One check for both roads: the
 * operator's per-stage {@code prefixCacheVerified} and the command line's warning.
 */
public final class CacheStateCheck {

    /**
     * The largest share of a replica's prompt tokens that may be found cached in a stage whose
     * prompts share no prefix before the declared cold state counts as contradicted: a chat
     * template's first tokens or two random prompts that happen to begin alike may fill a block, a
     * cache that kept the previous stage's prompts finds most of them (three quarters of a 16-token
     * prompt in blocks of 4).
     */
    public static final double UNEXPLAINED_HIT_TOLERANCE = 0.05;

    /**
     * Tokens a prompt's cached prefix may fall short of the implied one by: a server caches whole
     * blocks only (vLLM 16 tokens by default, TensorRT-LLM up to 32), so a prefix's last partial
     * block is looked up but never found.
     */
    public static final int BLOCK_ALLOWANCE_TOKENS = 32;

    /**
     * The hit rate a stage's workload implies and how far a replica may be from it.
     *
     * @param rate the share of prompt tokens the declared state lets a cache find, counted in
     *     tokens (a server that caches whole blocks finds up to one block a prompt less)
     * @param ceiling whether the rate is the most a replica may find (cold: nothing to find) rather
     *     than the least (warm: every prefix was cached)
     * @param tolerance how far past the rate a replica may be before the state counts as
     *     contradicted
     * @param reason what implies the rate, as a message states it
     */
    public record Implied(double rate, boolean ceiling, double tolerance, String reason) {}

    /** A cold stage whose prompts share no prefix: a cold cache can hit nothing in them. */
    public static final Implied COLD_REUSE_FREE =
            new Implied(
                    0,
                    true,
                    UNEXPLAINED_HIT_TOLERANCE,
                    "where the stage's random prompts share no prefix: its cache was not empty"
                            + " when the stage began");

    /**
     * A warm stage of prefix_repetition prompts: each prompt's prefix was cached on every replica
     * before the stage, so each finds at least its prefix, {@code prefixTokens} of its {@code
     * prefixTokens + suffixTokens} tokens, less a partial block ({@link #BLOCK_ALLOWANCE_TOKENS}).
     */
    public static Implied warmImplied(int prefixTokens, int suffixTokens) {
        int tokens = prefixTokens + suffixTokens;
        return new Implied(
                (double) prefixTokens / tokens,
                false,
                Math.min(1.0, (double) BLOCK_ALLOWANCE_TOKENS / tokens),
                String.format(
                        Locale.ROOT,
                        "where each prompt's prefix (%d of its %d tokens) was cached before the"
                                + " stage: the warming did not reach it, or it caches no prefixes",
                        prefixTokens,
                        tokens));
    }

    private CacheStateCheck() {}

    /**
     * The outcome of a stage's check.
     *
     * @param verified {@code true}, {@code false}, or {@code null} when no counters were read
     * @param message why not verified, or {@code null}
     * @param hitRates each replica's hit rate (replica id → rate), in replica order
     * @param impliedRate the rate the workload implies, or {@code null} when it implies none
     */
    public record Verification(
            Boolean verified, String message, Map<String, Double> hitRates, Double impliedRate) {

        /** Defensive copy, order kept. */
        public Verification {
            hitRates = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(hitRates));
        }
    }

    /**
     * Checks one stage.
     *
     * @param notDeclared the endpoints not reset (or not warmed) before the stage and why, or
     *     {@code null} when all were
     * @param hits the stage window's prefix-cache counts, or {@code null} without counters; a
     *     server scraped as one replica counts as replica {@code server}
     * @param implied the rate the stage's workload implies, or {@code null} when it implies none
     *     (prompts that share prefixes on a cold cache: what is found depends on which replica
     *     served which prompt first)
     */
    public static Verification verify(String notDeclared, PrefixCacheHits hits, Implied implied) {
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
                            if (implied != null && contradicts(rate, implied)) {
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
        Double impliedRate = implied == null ? null : implied.rate();
        if (notDeclared != null) {
            return new Verification(false, notDeclared, rates, impliedRate);
        }
        if (!contradicting.isEmpty()) {
            return new Verification(
                    false,
                    String.join("; ", contradicting)
                            + ", "
                            + bound(implied)
                            + ", "
                            + implied.reason(),
                    rates,
                    impliedRate);
        }
        return new Verification(rates.isEmpty() ? null : true, null, rates, impliedRate);
    }

    /**
     * Writes a stage's check into its profile beside the measured counts: {@code
     * metrics.prefix_cache.implied_hit_rate} (the rate the workload implies, where it implies one),
     * {@code verified}, and {@code message} when not verified. Nothing without a verdict or a rate.
     */
    public static void annotate(ObjectNode profile, Verification check) {
        if (check == null
                || (check.verified() == null && check.impliedRate() == null)
                || !(profile.path("metrics") instanceof ObjectNode metrics)) {
            return;
        }
        ObjectNode cache =
                metrics.get("prefix_cache") instanceof ObjectNode existing
                        ? existing
                        : metrics.putObject("prefix_cache");
        if (check.impliedRate() != null) {
            cache.put("implied_hit_rate", check.impliedRate());
        }
        if (check.verified() != null) {
            cache.put("verified", check.verified());
        }
        if (check.message() != null) {
            cache.put("message", check.message());
        }
    }

    private static boolean contradicts(double rate, Implied implied) {
        return implied.ceiling()
                ? rate > implied.rate() + implied.tolerance()
                : rate < implied.rate() - implied.tolerance();
    }

    private static String bound(Implied implied) {
        if (implied.ceiling() && implied.rate() == 0) {
            return String.format(Locale.ROOT, "more than %.0f %%", 100 * implied.tolerance());
        }
        return String.format(
                Locale.ROOT,
                "%s than the %.1f %% implied by more than %.1f %%",
                implied.ceiling() ? "more" : "less",
                100 * implied.rate(),
                100 * implied.tolerance());
    }
}
