package io.inferencebench.profile.search;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The probes of one capacity search by rate, and what they say about each rate together: its
 * verdict on the pooled requests, whether that verdict is decided at 95 % ({@link
 * AttainmentInterval}), and the rates around it. {@link CapacitySearch} decides where to probe;
 * this class only judges what was probed.
 */
final class ProbesByRate {

    /** A rate's verdict over all its probes. */
    enum Verdict {
        PASS,
        FAIL,
        UNDELIVERED,
        INDETERMINATE
    }

    private final double minAttainment;
    private final Map<Double, List<ProbeResult>> byRate = new TreeMap<>();

    /**
     * @param minAttainment the SLO attainment a rate must reach to pass
     */
    ProbesByRate(double minAttainment) {
        this.minAttainment = minAttainment;
    }

    /** The probed rates, lowest first. */
    Set<Double> rates() {
        return byRate.keySet();
    }

    void record(ProbeResult r) {
        byRate.computeIfAbsent(r.requestRate(), k -> new ArrayList<>()).add(r);
    }

    /** The size a new probe at {@code rate} runs with: the largest one used there already. */
    int sizeFor(double rate) {
        int size = 1;
        for (ProbeResult r : byRate.getOrDefault(rate, List.of())) {
            size = Math.max(size, r.size());
        }
        return size;
    }

    /** Probes at {@code rate} that were judged (pass, fail or undelivered; not too short). */
    int judged(double rate) {
        int n = 0;
        for (ProbeResult r : byRate.getOrDefault(rate, List.of())) {
            if (r.judgement(minAttainment) != ProbeResult.Judgement.INDETERMINATE) {
                n++;
            }
        }
        return n;
    }

    /**
     * A rate's verdict over all its probes whose load the client delivered, pooled: a probe held
     * back by the concurrency cap fails the rate; otherwise the pooled SLO attainment decides.
     */
    Verdict judge(double rate) {
        long good = 0;
        long attempted = 0;
        boolean anyDelivered = false;
        boolean anyIndeterminate = false;
        boolean capped = false;
        for (ProbeResult r : byRate.getOrDefault(rate, List.of())) {
            switch (r.judgement(minAttainment)) {
                case PASS, FAIL, UNDECIDED -> {
                    anyDelivered = true;
                    capped |= r.concurrencyLimited();
                    good += r.goodRequests();
                    attempted += r.attemptedRequests();
                }
                case INDETERMINATE -> anyIndeterminate = true;
                case UNDELIVERED -> {}
            }
        }
        if (!anyDelivered) {
            return anyIndeterminate ? Verdict.INDETERMINATE : Verdict.UNDELIVERED;
        }
        if (capped) {
            return Verdict.FAIL;
        }
        double attainment = attempted == 0 ? 0 : (double) good / attempted;
        return attainment >= minAttainment ? Verdict.PASS : Verdict.FAIL;
    }

    /**
     * Whether the probes at {@code rate} decide it at 95 %: their pooled attainment's interval does
     * not straddle the minimum (or a concurrency cap failed it, or nothing was delivered).
     */
    boolean decided(double rate) {
        Pooled pooled = pooled(rate);
        return pooled.capped
                || pooled.attempted == 0
                || !AttainmentInterval.of(pooled.good, pooled.attempted).straddles(minAttainment);
    }

    /**
     * Whether {@code more} further probes at {@code rate}, as large as its probes so far, could
     * decide it in the direction it leans: a passing rate if all their requests were good, a
     * failing one if none were. When not even that would clear the interval (ten requests cannot
     * show 95 % attainment, nor can forty), probing again only spends the budget.
     */
    boolean decidable(double rate, int more) {
        Pooled pooled = pooled(rate);
        if (pooled.probes == 0 || more <= 0) {
            return false;
        }
        long added = Math.round((double) pooled.attempted / pooled.probes * more);
        long attempted = pooled.attempted + added;
        boolean leansPass = (double) pooled.good / pooled.attempted >= minAttainment;
        AttainmentInterval best =
                AttainmentInterval.of(leansPass ? pooled.good + added : pooled.good, attempted);
        return !best.straddles(minAttainment);
    }

    /** The delivered probes at a rate, pooled. */
    record Pooled(long good, long attempted, int probes, boolean capped) {}

    Pooled pooled(double rate) {
        long good = 0;
        long attempted = 0;
        int n = 0;
        boolean capped = false;
        for (ProbeResult r : byRate.getOrDefault(rate, List.of())) {
            ProbeResult.Judgement j = r.judgement(minAttainment);
            if (j == ProbeResult.Judgement.PASS
                    || j == ProbeResult.Judgement.FAIL
                    || j == ProbeResult.Judgement.UNDECIDED) {
                good += r.goodRequests();
                attempted += r.attemptedRequests();
                capped |= r.concurrencyLimited();
                n++;
            }
        }
        return new Pooled(good, attempted, n, capped);
    }

    /**
     * How sure the edges of a bracket are: each judged edge's pooled attainment and its 95 %
     * interval against the minimum, and whether one is undecided.
     */
    String confidence(Double passing, Double failing) {
        List<String> decided = new ArrayList<>();
        List<String> undecided = new ArrayList<>();
        for (Double edge : new Double[] {passing, failing}) {
            if (edge == null) {
                continue;
            }
            Pooled pooled = pooled(edge);
            if (pooled.attempted == 0 || pooled.capped) {
                continue;
            }
            AttainmentInterval interval = AttainmentInterval.of(pooled.good, pooled.attempted);
            String text =
                    String.format(
                            java.util.Locale.ROOT,
                            "%s req/s attains %.1f %% (%s, %d requests in %d probe%s)",
                            CapacitySearch.fmt(edge),
                            100.0 * pooled.good / pooled.attempted,
                            interval.describe(),
                            pooled.attempted,
                            pooled.probes,
                            pooled.probes == 1 ? "" : "s");
            (interval.straddles(minAttainment) ? undecided : decided).add(text);
        }
        String target =
                String.format(java.util.Locale.ROOT, "the minimum %.1f %%", 100 * minAttainment);
        if (!undecided.isEmpty()) {
            return "undecided at 95 % confidence: "
                    + String.join("; ", undecided)
                    + ", within the noise of "
                    + target
                    + "; larger probes (more requests or a longer duration) would decide it";
        }
        if (decided.isEmpty()) {
            return null;
        }
        return "decided at 95 % confidence: " + String.join("; ", decided) + ", against " + target;
    }

    boolean undecided(Double passing, Double failing) {
        for (Double edge : new Double[] {passing, failing}) {
            if (edge != null && !decided(edge)) {
                return true;
            }
        }
        return false;
    }

    /** What the probes at {@code rate} measured, pooled, for messages. */
    String seen(double rate) {
        List<ProbeResult> at = byRate.getOrDefault(rate, List.of());
        long good = 0;
        long attempted = 0;
        long failed = 0;
        String classes = null;
        ProbeResult last = null;
        for (ProbeResult r : at) {
            good += r.goodRequests();
            attempted += r.attemptedRequests();
            failed += r.failedRequests();
            if (r.failureClasses() != null) {
                classes = r.failureClasses();
            }
            last = r;
        }
        if (last == null) {
            return "not probed";
        }
        ProbeResult pooled =
                new ProbeResult(
                        rate,
                        last.size(),
                        last.achievedRate(),
                        good,
                        attempted,
                        failed,
                        classes,
                        last.load(),
                        last.profile());
        return pooled.describe();
    }

    /** The capacity a passing rate stands for: never above what its delivered probes achieved. */
    double capped(double passing) {
        Double achieved = achievedAt(passing);
        return achieved == null ? passing : Math.min(passing, CapacitySearch.significant(achieved));
    }

    /** The achieved rate of the delivered probes at {@code rate}, weighted by their requests. */
    Double achievedAt(double rate) {
        double requests = 0;
        double seconds = 0;
        for (ProbeResult r : byRate.getOrDefault(rate, List.of())) {
            if (r.loadDelivered() && r.achievedRate() != null && r.achievedRate() > 0) {
                requests += r.attemptedRequests();
                seconds += r.attemptedRequests() / r.achievedRate();
            }
        }
        return seconds > 0 ? requests / seconds : null;
    }

    Double highestPassingBelow(double rate) {
        Double best = null;
        for (double r : byRate.keySet()) {
            if (r < rate && judge(r) == Verdict.PASS) {
                best = r;
            }
        }
        return best;
    }

    Double lowestNotPassingAbove(double rate) {
        for (double r : byRate.keySet()) {
            if (r > rate && judge(r) != Verdict.PASS) {
                return r;
            }
        }
        return null;
    }

    Double lowestUndelivered() {
        for (double r : byRate.keySet()) {
            if (judge(r) == Verdict.UNDELIVERED) {
                return r;
            }
        }
        return null;
    }
}
