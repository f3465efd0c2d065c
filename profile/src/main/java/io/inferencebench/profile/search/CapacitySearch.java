package io.inferencebench.profile.search;

import io.inferencebench.profile.search.ProbesByRate.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The highest request rate a server sustains within its SLO, found by probing: rates grow
 * geometrically from the minimum until one fails, then the bracket between the highest passing and
 * the lowest failing rate is bisected (geometric midpoint) until it is within the relative
 * precision.
 *
 * <p>A rate passes when the SLO attainment of all its probes together reaches the minimum. Near the
 * knee one probe is a coin toss, so both edges of the final bracket are probed again ({@link
 * Settings#confirmations()} times) and judged on the pooled requests; when an edge flips, the
 * bracket moves and the bisection goes on. That is what makes two searches of the same server agree
 * within the precision.
 *
 * <p>Each probe is judged by {@link ProbeResult#judgement}, the same rules as the operator's
 * LoadDelivered condition ({@link io.inferencebench.profile.lpg.LoadVerdict}). A probe whose load
 * was not delivered (the client could not keep the schedule it drew) is neither a pass nor a fail:
 * the rate is recorded as undelivered, the search does not go above it, and the result says so. A
 * probe too short to judge its delivery ({@code indeterminate}) runs again {@value #PROBE_GROWTH}
 * times larger, up to {@value #MAX_PROBE_SIZE} times the configured size; beyond that the search
 * stops with outcome {@link Outcome#INDETERMINATE}. Failed requests count as not meeting the SLO,
 * and the messages name them. The capacity is never above the rate its passing probes achieved.
 *
 * <p>Every attainment carries its 95 % interval ({@link AttainmentInterval}). A rate whose pooled
 * interval straddles the minimum is undecided, and is probed again, pooling the requests, up to
 * {@value #MAX_REPROBES} more times while that could still decide it (ten requests a probe can
 * never show 95 % attainment, not even forty); an edge still undecided then is judged on its
 * measured attainment and the result says so ({@link Result#undecided}, its message and {@link
 * Result#confidence}), rather than calling a coin toss a capacity.
 */
public final class CapacitySearch {

    /** Runs one probe at a rate. */
    @FunctionalInterface
    public interface Probe {
        /**
         * Loads the server at {@code rate} and reports what was measured.
         *
         * @param rate req/s
         * @param size how many times the configured probe size (requests or duration) to run: 1, or
         *     {@value #PROBE_GROWTH} times the last size when a probe at this rate was too short to
         *     judge
         * @return the probe's result
         * @throws Exception when the probe could not run (the search stops)
         */
        ProbeResult run(double rate, int size) throws Exception;
    }

    /** Factor by which a probe too short to judge is grown before it runs again. */
    public static final int PROBE_GROWTH = 4;

    /** Largest probe size (times the configured one) the search grows a probe to. */
    public static final int MAX_PROBE_SIZE = 16;

    /**
     * More probes a rate gets, at most, while its pooled attainment's 95 % interval straddles the
     * minimum: up to four times the requests, as a grown probe has.
     */
    public static final int MAX_REPROBES = 3;

    /**
     * How to search.
     *
     * @param minRate first rate probed, req/s (&gt; 0)
     * @param maxRate highest rate probed, req/s (&ge; minRate)
     * @param precision relative width of the final bracket, {@code (failing - passing) / passing}
     * @param minAttainment SLO attainment a rate must reach to pass, in [0, 1]
     * @param growth factor between rates before the first failure (&gt; 1)
     * @param confirmations extra probes of each edge of the final bracket (&ge; 0)
     * @param maxProbes the search stops after this many probes whatever the bracket
     */
    public record Settings(
            double minRate,
            double maxRate,
            double precision,
            double minAttainment,
            double growth,
            int confirmations,
            int maxProbes) {

        /** Default growth factor. */
        public static final double DEFAULT_GROWTH = 2.0;

        /** Default extra probes per bracket edge. */
        public static final int DEFAULT_CONFIRMATIONS = 1;

        /** Default probe budget. */
        public static final int DEFAULT_MAX_PROBES = 40;

        /**
         * Validates.
         *
         * @throws IllegalArgumentException naming the setting that is out of range
         */
        public Settings {
            if (!(minRate > 0) || Double.isInfinite(minRate)) {
                throw new IllegalArgumentException(
                        "min rate must be a positive number, got " + minRate);
            }
            if (!(maxRate >= minRate) || Double.isInfinite(maxRate)) {
                throw new IllegalArgumentException(
                        "max rate must be a number >= the min rate "
                                + minRate
                                + ", got "
                                + maxRate);
            }
            if (!(precision > 0 && precision < 1)) {
                throw new IllegalArgumentException(
                        "precision must be within (0, 1), got " + precision);
            }
            if (!(minAttainment >= 0 && minAttainment <= 1)) {
                throw new IllegalArgumentException(
                        "min attainment must be within [0, 1], got " + minAttainment);
            }
            if (!(growth > 1) || Double.isInfinite(growth)) {
                throw new IllegalArgumentException("growth must be > 1, got " + growth);
            }
            if (confirmations < 0) {
                throw new IllegalArgumentException(
                        "confirmations must be >= 0, got " + confirmations);
            }
            if (maxProbes < 1) {
                throw new IllegalArgumentException("max probes must be >= 1, got " + maxProbes);
            }
        }

        /**
         * Settings with the default growth, confirmations and probe budget.
         *
         * @param minRate first rate
         * @param maxRate highest rate
         * @param precision relative precision
         * @param minAttainment SLO attainment to pass
         * @return the settings
         */
        public static Settings of(
                double minRate, double maxRate, double precision, double minAttainment) {
            return new Settings(
                    minRate,
                    maxRate,
                    precision,
                    minAttainment,
                    DEFAULT_GROWTH,
                    DEFAULT_CONFIRMATIONS,
                    DEFAULT_MAX_PROBES);
        }
    }

    /** How a search ended. */
    public enum Outcome {
        /** A passing and a failing rate within the precision. */
        FOUND,
        /** Even the max rate passed: the capacity is at least that. */
        MAX_RATE_PASSED,
        /** The min rate already failed. */
        MIN_RATE_FAILED,
        /**
         * The client could not deliver the load at some rate before any failure: the capacity is at
         * least the highest passing rate, maybe more.
         */
        LOAD_NOT_DELIVERED,
        /**
         * A probe was too short to judge whether the client kept its schedule even when grown to
         * {@value #MAX_PROBE_SIZE} times the configured size: larger probes would decide it.
         */
        INDETERMINATE,
        /** The probe budget ran out before the bracket was within the precision. */
        PROBE_LIMIT,
        /** The search was stopped from outside (an interrupt) before it ended. */
        INTERRUPTED
    }

    /**
     * One probe as the search judged it.
     *
     * @param result what it measured
     * @param judgement its own judgement ({@link ProbeResult#judgement})
     */
    public record Probed(ProbeResult result, ProbeResult.Judgement judgement) {

        /**
         * The probe's own verdict.
         *
         * @return {@code true} pass, {@code false} fail, {@code null} when its load was not
         *     delivered or it was indeterminate (too short to judge the delivery, or its
         *     attainment's interval straddles the minimum)
         */
        public Boolean passed() {
            return switch (judgement) {
                case PASS -> Boolean.TRUE;
                case FAIL -> Boolean.FALSE;
                default -> null;
            };
        }

        /**
         * The probe's judgement in words, as capacity files and the CLI print it.
         *
         * @return {@code pass}, {@code fail}, {@code load not delivered} or {@code indeterminate}
         */
        public String verdict() {
            return switch (judgement) {
                case PASS -> "pass";
                case FAIL -> "fail";
                case UNDELIVERED -> "load not delivered";
                case INDETERMINATE, UNDECIDED -> "indeterminate";
            };
        }
    }

    /**
     * The search's result.
     *
     * @param outcome how it ended
     * @param passingRate highest rate that passed, {@code null} when none did
     * @param failingRate lowest rate above it that failed, {@code null} when none did
     * @param undeliveredRate lowest rate whose load the client could not deliver, or {@code null}
     * @param passingAchievedRate the rate the passing rate's probes achieved together, or {@code
     *     null}
     * @param probes every probe in the order run
     * @param message one sentence for the user
     * @param confidence how sure the bracket's edges are, at 95 % ({@link AttainmentInterval}):
     *     each edge's pooled attainment and interval against the minimum, or which edge the probes
     *     left undecided; {@code null} when no rate was judged
     * @param undecided whether an edge's pooled attainment interval still straddles the minimum
     *     after the probes at its rate that could decide it (its verdict is then the measured
     *     attainment's, not a confident one)
     */
    public record Result(
            Outcome outcome,
            Double passingRate,
            Double failingRate,
            Double undeliveredRate,
            Double passingAchievedRate,
            List<Probed> probes,
            String message,
            String confidence,
            boolean undecided) {

        /**
         * The capacity: the highest passing rate, but never above what its probes achieved (a
         * random schedule may draw fewer arrivals than the nominal rate; the server was shown that
         * load, not more).
         *
         * @return it, {@code null} when no rate passed
         */
        public Double maxRequestRate() {
            if (passingRate == null) {
                return null;
            }
            // to four significant digits, as probe rates are chosen: a constant schedule achieves
            // 13.449999999 req/s of 13.45, which is 13.45
            return passingAchievedRate == null
                    ? passingRate
                    : Math.min(passingRate, significant(passingAchievedRate));
        }
    }

    /** Ends the search from inside a probe (too short at the largest size, or out of budget). */
    private static final class Stop extends RuntimeException {
        private final transient Result result;

        Stop(Result result) {
            super(null, null, false, false);
            this.result = result;
        }
    }

    private final Settings settings;
    private final Probe probe;
    private final Consumer<Probed> listener;
    private final List<Probed> probes = new ArrayList<>();
    private final ProbesByRate byRate;

    private CapacitySearch(Settings settings, Probe probe, Consumer<Probed> listener) {
        this.settings = settings;
        this.probe = probe;
        this.listener = listener;
        this.byRate = new ProbesByRate(settings.minAttainment());
    }

    /**
     * Runs a search.
     *
     * @param settings how to search
     * @param probe runs one probe
     * @param listener told of each probe as it finishes (may be {@code null})
     * @return the result
     * @throws Exception what a probe threw
     */
    public static Result run(Settings settings, Probe probe, Consumer<Probed> listener)
            throws Exception {
        CapacitySearch search =
                new CapacitySearch(settings, probe, listener == null ? p -> {} : listener);
        try {
            return search.search();
        } catch (Stop stop) {
            return stop.result;
        }
    }

    /**
     * What a search that was stopped from outside knows: the bracket of the probes that finished,
     * judged as the search judges them (pooled per rate).
     *
     * @param settings how the search was set up
     * @param done the probes that finished, in order
     * @return the result, outcome {@link Outcome#INTERRUPTED}
     */
    public static Result interrupted(Settings settings, List<ProbeResult> done) {
        CapacitySearch search = new CapacitySearch(settings, (r, s) -> null, p -> {});
        for (ProbeResult r : done) {
            search.byRate.record(r);
        }
        Double passing = null;
        Double failing = null;
        for (double rate : search.byRate.rates()) {
            Verdict j = search.byRate.judge(rate);
            if (j == Verdict.FAIL && failing == null) {
                failing = rate;
            } else if (j == Verdict.PASS && failing == null) {
                passing = rate;
            }
        }
        String message =
                "interrupted after "
                        + done.size()
                        + " probe(s)"
                        + (passing == null
                                ? ": no rate passed yet"
                                : ": " + fmt(passing) + " req/s meets the SLO")
                        + (failing == null ? "" : ", " + fmt(failing) + " req/s misses it");
        return search.result(Outcome.INTERRUPTED, passing, failing, message);
    }

    /**
     * What a search that is driven from outside (one probe at a time, as the operator's stages are)
     * does next.
     *
     * @param nextRate the rate to probe next, {@code null} when the search is over
     * @param nextSize the size of the next probe (times the configured size), {@code 0} when over
     * @param result the search's result when it is over, else {@code null}
     */
    public record Step(Double nextRate, int nextSize, Result result) {

        /**
         * Whether the search is over.
         *
         * @return {@code true} when {@link #result()} is set
         */
        public boolean done() {
            return result != null;
        }
    }

    /** Thrown inside a replay when the recorded probes run out: the search wants this probe. */
    private static final class NeedsProbe extends RuntimeException {
        private final double rate;
        private final int size;

        NeedsProbe(double rate, int size) {
            super(null, null, false, false);
            this.rate = rate;
            this.size = size;
        }
    }

    /**
     * The next step of a search given the probes already run, in order. The search is a
     * deterministic function of its probes' results, so it is replayed over them: the same
     * decisions as {@link #run} makes, without holding a thread between probes (the operator
     * decides each probe after the previous one's parts are merged, perhaps after a restart).
     *
     * @param settings how to search
     * @param done the probes run so far, in order, each at the rate and size an earlier step asked
     *     for
     * @return the probe to run next, or the result
     * @throws IllegalArgumentException when a recorded probe's rate or size is not the one the
     *     search asked for at that point (the history belongs to other settings)
     */
    public static Step next(Settings settings, List<ProbeResult> done) {
        int[] replayed = {0};
        Probe replay =
                (rate, size) -> {
                    if (replayed[0] == done.size()) {
                        throw new NeedsProbe(rate, size);
                    }
                    ProbeResult r = done.get(replayed[0]);
                    if (Double.compare(r.requestRate(), rate) != 0 || r.size() != size) {
                        throw new IllegalArgumentException(
                                "probe "
                                        + (replayed[0] + 1)
                                        + " ran at "
                                        + fmt(r.requestRate())
                                        + " req/s (size "
                                        + r.size()
                                        + ") but the search asks for "
                                        + fmt(rate)
                                        + " req/s (size "
                                        + size
                                        + ") there");
                    }
                    replayed[0]++;
                    return r;
                };
        try {
            return new Step(null, 0, run(settings, replay, null));
        } catch (NeedsProbe needs) {
            return new Step(needs.rate, needs.size, null);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("a replayed probe cannot fail", e);
        }
    }

    private Result search() throws Exception {
        double rate = settings.minRate();
        Verdict first = probeAt(rate);
        if (first == Verdict.FAIL) {
            return result(
                    Outcome.MIN_RATE_FAILED,
                    null,
                    rate,
                    "the min rate "
                            + fmt(rate)
                            + " req/s already misses the SLO: "
                            + byRate.seen(rate));
        }
        if (first == Verdict.UNDELIVERED) {
            return result(
                    Outcome.LOAD_NOT_DELIVERED,
                    null,
                    null,
                    "the client could not deliver even the min rate "
                            + fmt(rate)
                            + " req/s: nothing is known about the server ("
                            + byRate.seen(rate)
                            + ")");
        }
        // grow until a rate fails, the load is not delivered, or the max rate passes
        Double failing = null;
        while (failing == null && rate < settings.maxRate()) {
            if (budgetLeft() == 0) {
                return limit(rate, null);
            }
            double next = Math.min(settings.maxRate(), rate * settings.growth());
            Verdict j = probeAt(next);
            if (j == Verdict.PASS) {
                rate = next;
            } else {
                failing = next;
            }
        }
        if (failing == null) {
            return result(
                    Outcome.MAX_RATE_PASSED,
                    rate,
                    null,
                    "even the max rate " + fmt(rate) + " req/s meets the SLO");
        }
        double passing = rate;
        double upper = failing;
        while (true) {
            while (upper / passing - 1 > settings.precision()) {
                if (budgetLeft() == 0) {
                    return limit(passing, upper);
                }
                double mid = readable(Math.sqrt(passing * upper), passing, upper);
                if (probeAt(mid) == Verdict.PASS) {
                    passing = mid;
                } else {
                    upper = mid;
                }
            }
            // Near the knee: judge both edges on more requests; a flipped edge moves the bracket.
            boolean moved = false;
            for (double edge : new double[] {passing, upper}) {
                while (byRate.judged(edge) < 1 + settings.confirmations()) {
                    if (budgetLeft() == 0) {
                        return limit(passing, upper);
                    }
                    probeAt(edge);
                }
            }
            Verdict lowEdge = byRate.judge(passing);
            Verdict highEdge = byRate.judge(upper);
            if (lowEdge != Verdict.PASS) {
                upper = passing;
                Double below = byRate.highestPassingBelow(passing);
                if (below == null) {
                    return result(
                            Outcome.MIN_RATE_FAILED,
                            null,
                            upper,
                            "the min rate "
                                    + fmt(upper)
                                    + " req/s misses the SLO on repeated probes: "
                                    + byRate.seen(upper));
                }
                passing = below;
                moved = true;
            } else if (highEdge == Verdict.PASS) {
                passing = upper;
                Double above = byRate.lowestNotPassingAbove(upper);
                if (above == null) {
                    return result(
                            Outcome.MAX_RATE_PASSED,
                            passing,
                            null,
                            "even the max rate " + fmt(passing) + " req/s meets the SLO");
                }
                upper = above;
                moved = true;
            }
            if (!moved) {
                break;
            }
        }
        Double undelivered = byRate.lowestUndelivered();
        if (byRate.judge(upper) == Verdict.UNDELIVERED) {
            return result(
                    Outcome.LOAD_NOT_DELIVERED,
                    passing,
                    null,
                    "the client could not deliver "
                            + fmt(upper)
                            + " req/s: the capacity is at least "
                            + fmt(byRate.capped(passing))
                            + " req/s, maybe more (a faster client or more runners would tell)");
        }
        String message =
                "capacity "
                        + fmt(byRate.capped(passing))
                        + " req/s: "
                        + fmt(passing)
                        + " meets the SLO, "
                        + fmt(upper)
                        + " misses it ("
                        + byRate.seen(upper)
                        + ")";
        if (undelivered != null && undelivered < upper) {
            message += "; the load of " + fmt(undelivered) + " req/s was not delivered (ignored)";
        }
        return result(Outcome.FOUND, passing, upper, message);
    }

    private Result limit(double passing, Double upper) {
        return result(
                Outcome.PROBE_LIMIT,
                passing,
                upper != null && byRate.judge(upper) == Verdict.FAIL ? upper : null,
                "stopped after "
                        + probes.size()
                        + " probes before the bracket was within the precision");
    }

    private int budgetLeft() {
        return settings.maxProbes() - probes.size();
    }

    /**
     * Probes {@code rate} at the size its earlier probes needed, growing a probe that was too short
     * to judge ({@link #PROBE_GROWTH} times, up to {@link #MAX_PROBE_SIZE}); ends the search when
     * even the largest probe cannot be judged or the budget runs out meanwhile.
     */
    private Verdict probeAt(double rate) throws Exception {
        int size = byRate.sizeFor(rate);
        while (true) {
            ProbeResult r = probe.run(rate, size).at(rate, size);
            byRate.record(r);
            ProbeResult.Judgement own = r.judgement(settings.minAttainment());
            Probed p = new Probed(r, own);
            probes.add(p);
            listener.accept(p);
            if (own != ProbeResult.Judgement.INDETERMINATE) {
                // Within the noise of the minimum: pool more requests at this rate, a few times,
                // while that could still decide it.
                if (!byRate.decided(rate)
                        && byRate.decidable(rate, MAX_REPROBES + 1 - byRate.judged(rate))
                        && budgetLeft() > 0) {
                    continue;
                }
                return byRate.judge(rate);
            }
            if (size * PROBE_GROWTH > MAX_PROBE_SIZE) {
                throw new Stop(
                        result(
                                Outcome.INDETERMINATE,
                                byRate.highestPassingBelow(rate),
                                null,
                                "the probe at "
                                        + fmt(rate)
                                        + " req/s is too short to judge whether the client kept"
                                        + " its schedule, even at "
                                        + size
                                        + " times the probe size ("
                                        + r.load().message()
                                        + "): give each probe more requests or a longer"
                                        + " duration"));
            }
            if (budgetLeft() == 0) {
                throw new Stop(limit(highestPassingBelowOrMin(rate), null));
            }
            size *= PROBE_GROWTH;
        }
    }

    private double highestPassingBelowOrMin(double rate) {
        Double below = byRate.highestPassingBelow(rate);
        return below == null ? settings.minRate() : below;
    }

    /** A rate to four significant digits. */
    static double significant(double rate) {
        return new java.math.BigDecimal(rate).round(new java.math.MathContext(4)).doubleValue();
    }

    private Result result(Outcome outcome, Double passing, Double failing, String message) {
        boolean undecided = byRate.undecided(passing, failing);
        String confidence = byRate.confidence(passing, failing);
        return new Result(
                outcome,
                passing,
                failing,
                byRate.lowestUndelivered(),
                passing == null ? null : byRate.achievedAt(passing),
                List.copyOf(probes),
                undecided ? message + "; " + confidence : message,
                confidence,
                undecided);
    }

    /**
     * The midpoint with four significant digits (profile file names carry the rate), unless that
     * would land on an edge.
     */
    private static double readable(double mid, double low, double high) {
        double rounded =
                new java.math.BigDecimal(mid).round(new java.math.MathContext(4)).doubleValue();
        return rounded > low && rounded < high ? rounded : mid;
    }

    /** A rate as the messages print it: three significant digits at least. */
    public static String fmt(double rate) {
        return rate >= 100
                ? String.format(java.util.Locale.ROOT, "%.1f", rate)
                : String.format(java.util.Locale.ROOT, "%.3g", rate);
    }
}
