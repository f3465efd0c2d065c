package io.inferencebench.profile.compare;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.stats.HistogramBucket;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Compares a candidate run with a baseline run, stage by stage, from their LPG profiles.
 *
 * <p>Stages are paired by requested rate, closed-loop stages (unbounded rate) also by their
 * concurrency; never by position. A stage without a partner in the other run is left out and named
 * in the notes; runs without a single pair are refused. Several stages of one rate in a run are
 * that stage's repeats ({@code load.repeats}) and are judged across them (Welch's t-test; one run
 * against the other side's repeats by a prediction interval), and a statistic their noise leaves
 * undecided makes the verdict {@link Verdict#INCONCLUSIVE}. A pair where one side has no successful
 * request is not comparable: it is reported as such and left out of the verdict, and runs without
 * any comparable pair are refused. For each comparable pair it compares TTFT, ITL, TPOT and E2E
 * latency at p50, p90 and p99, output throughput and (when both have an SLO) goodput. A change is
 * significant only when it is beyond the metric's relative threshold <em>and</em> beyond the runs'
 * sampling noise:
 *
 * <ul>
 *   <li>latency medians: Mann–Whitney U over the two histograms ({@code metrics.histograms} in the
 *       profile);
 *   <li>latency p90/p99: the quantile test (the shares of each run above the pooled percentile,
 *       Fisher's exact test);
 *   <li>goodput: two-proportion z-test of the SLO attainments;
 *   <li>output throughput, and latencies of a profile without histograms: the threshold alone (the
 *       comparison's notes say so).
 * </ul>
 *
 * A test's p-value must be below alpha divided by the number of tests in the comparison
 * (Bonferroni), because the verdict is one claim about all of them. Inter-token gaps count one
 * independent value per request (the gaps of a request share its hiccups).
 *
 * <p>The verdict is {@link Verdict#REGRESSION} when any statistic is significantly worse in the
 * candidate, {@link Verdict#IMPROVEMENT} when none is worse and some are better, else {@link
 * Verdict#NO_SIGNIFICANT_CHANGE}.
 */
public final class ProfileComparison {

    /** Measured prefix-cache hit rates further apart than this make a note. */
    static final double CACHE_HIT_RATE_TOLERANCE = 0.05;

    private ProfileComparison() {}

    /**
     * Compares two runs given as their stage profiles.
     *
     * @param baseline the baseline's LPG documents, one per stage
     * @param candidate the candidate's LPG documents, one per stage
     * @param options thresholds and significance level
     * @return the comparison
     * @throws IllegalArgumentException when a run has no profile or a document is not an LPG
     *     profile (the message names which)
     * @throws NotComparableException when the runs' stages cannot be paired by rate, or no pair has
     *     a successful request on both sides
     */
    public static Comparison compare(
            List<JsonNode> baseline, List<JsonNode> candidate, ComparisonOptions options) {
        return compareLabeled(label(baseline, "baseline"), label(candidate, "candidate"), options);
    }

    /**
     * Compares two runs given as labelled stage profiles (labels appear in notes and output).
     *
     * @param baseline the baseline's profiles, one per stage
     * @param candidate the candidate's profiles, one per stage
     * @param options thresholds and significance level
     * @return the comparison
     * @throws IllegalArgumentException when a run has no profile or a document is not an LPG
     *     profile (the message names which)
     * @throws NotComparableException when the runs' stages cannot be paired by rate, or no pair has
     *     a successful request on both sides
     */
    public static Comparison compareLabeled(
            List<LabeledProfile> baseline,
            List<LabeledProfile> candidate,
            ComparisonOptions options) {
        List<ComparedStage> base = read(baseline, "baseline");
        List<ComparedStage> cand = read(candidate, "candidate");
        Set<String> notes = new LinkedHashSet<>();
        List<StagePairing.Group> groups = StagePairing.pair(base, cand, notes);
        List<StageComparison> stages = new ArrayList<>();
        List<String> notComparable = new ArrayList<>();
        for (int i = 0; i < groups.size(); i++) {
            StagePairing.Group group = groups.get(i);
            ComparedStage b = group.baseline().get(0);
            ComparedStage c = group.candidate().get(0);
            List<ComparedStage> baseUsable = withSuccess(group.baseline());
            List<ComparedStage> candUsable = withSuccess(group.candidate());
            boolean repeated = group.baseline().size() > 1 || group.candidate().size() > 1;
            String missing = missingSuccesses(!baseUsable.isEmpty(), !candUsable.isEmpty());
            if (missing != null) {
                notes.add(
                        "stage "
                                + (i + 1)
                                + " ("
                                + b.keyText()
                                + "): not comparable: "
                                + missing
                                + "; left out of the verdict");
            } else if (repeated
                    && (baseUsable.size() < group.baseline().size()
                            || candUsable.size() < group.candidate().size())) {
                notes.add(
                        "stage "
                                + (i + 1)
                                + " ("
                                + b.keyText()
                                + "): repeats without a successful request are left out ("
                                + (group.baseline().size() - baseUsable.size())
                                + " of the baseline's "
                                + group.baseline().size()
                                + ", "
                                + (group.candidate().size() - candUsable.size())
                                + " of the candidate's "
                                + group.candidate().size()
                                + ")");
            }
            for (ComparedStage s : concat(baseUsable, candUsable)) {
                if (s.undelivered() != null) {
                    notes.add(s.undelivered());
                }
            }
            for (ComparedStage bs : baseUsable) {
                for (ComparedStage cs : candUsable) {
                    String cache = cacheDifference(i + 1, bs, cs);
                    if (cache != null) {
                        notes.add(cache);
                    }
                }
            }
            List<MetricComparison> metrics;
            if (missing != null) {
                notComparable.add(missing);
                metrics = List.of();
            } else if (baseUsable.size() == 1 && candUsable.size() == 1) {
                metrics = compareStage(baseUsable.get(0), candUsable.get(0), options, notes);
            } else {
                List<List<ComparedStage>> pairs = RepeatPairs.sameSchedules(baseUsable, candUsable);
                notes.add(
                        repeatsNote(i + 1, b, baseUsable.size(), candUsable.size(), pairs != null));
                metrics =
                        pairs != null
                                ? compareRepeats(pairs.get(0), pairs.get(1), true, options, notes)
                                : compareRepeats(baseUsable, candUsable, false, options, notes);
            }
            stages.add(
                    new StageComparison(
                            i + 1,
                            b.rate,
                            c.rate,
                            b.concurrency(),
                            labels(group.baseline()),
                            labels(group.candidate()),
                            missing,
                            metrics));
        }
        if (notComparable.size() == groups.size()) {
            throw new NotComparableException(nothingToCompare(stages, notComparable));
        }
        long tests =
                stages.stream()
                        .flatMap(st -> st.metrics().stream())
                        .filter(m -> m.pValue() != null)
                        .count();
        double levelPerTest = options.alpha() / Math.max(1, tests);
        stages.replaceAll(
                st ->
                        new StageComparison(
                                st.stage(),
                                st.baselineRate(),
                                st.candidateRate(),
                                st.concurrency(),
                                st.baselineProfile(),
                                st.candidateProfile(),
                                st.notComparable(),
                                st.metrics().stream().map(m -> decide(m, levelPerTest)).toList()));
        boolean regressed =
                stages.stream()
                        .flatMap(s -> s.metrics().stream())
                        .filter(m -> decidesVerdict(m, options))
                        .anyMatch(MetricComparison::regressed);
        boolean improved =
                stages.stream()
                        .flatMap(s -> s.metrics().stream())
                        .filter(m -> decidesVerdict(m, options))
                        .anyMatch(MetricComparison::improved);
        long tailsLeftOut =
                stages.stream()
                        .flatMap(s -> s.metrics().stream())
                        .filter(m -> !decidesVerdict(m, options))
                        .filter(m -> m.regressed() || m.improved())
                        .count();
        if (tailsLeftOut > 0) {
            notes.add(
                    tailsLeftOut
                            + " significant p90/p99 change(s) are not part of the verdict: the"
                            + " state of the client machine during a run moves its tail, and the"
                            + " run's repeats alike, beyond what the repeats' spread shows"
                            + " (--tails includes them)");
        }
        List<String> undecided = new ArrayList<>();
        for (StageComparison st : stages) {
            for (MetricComparison m : st.metrics()) {
                if (m.inconclusive() && decidesVerdict(m, options)) {
                    undecided.add(
                            String.format(
                                    Locale.ROOT,
                                    "stage %d %s %+.1f %% (only a change beyond ±%.1f %% can be"
                                            + " told from the noise of %s; threshold %.1f %%)",
                                    st.stage(),
                                    m.name(),
                                    100 * m.change(),
                                    100 * m.detectable(),
                                    m.repeats().baseline() == m.repeats().candidate()
                                            ? m.repeats().baseline() + " repeats a side"
                                            : m.repeats().baseline()
                                                    + " baseline and "
                                                    + m.repeats().candidate()
                                                    + " candidate repeats",
                                    100 * m.threshold()));
                }
            }
        }
        if (!regressed && !improved && !undecided.isEmpty()) {
            notes.add(
                    "inconclusive: "
                            + String.join("; ", undecided)
                            + ": more repeats or longer stages narrow what the noise hides");
        }
        Verdict verdict =
                regressed
                        ? Verdict.REGRESSION
                        : improved
                                ? Verdict.IMPROVEMENT
                                : undecided.isEmpty()
                                        ? Verdict.NO_SIGNIFICANT_CHANGE
                                        : Verdict.INCONCLUSIVE;
        return new Comparison(
                verdict,
                Comparison.MATCHED_BY_RATE,
                List.copyOf(stages),
                List.copyOf(notes),
                options);
    }

    /**
     * A stage pair whose prefix caches were not in the same state, by what the runs declared or
     * what the servers counted: a TTFT change there may be the cache's, not the server's.
     */
    static String cacheDifference(int stage, ComparedStage b, ComparedStage c) {
        String prefix = "stage " + stage + " (" + b.keyText() + "): ";
        String why =
                ": latencies that depend on cached prompts may differ for that reason alone"
                        + " (--reset-prefix-cache starts every stage cold)";
        if (!b.cacheState().equals(c.cacheState())) {
            return prefix
                    + "the prefix-cache state differs ("
                    + b.label
                    + ": "
                    + b.cacheState()
                    + "; "
                    + c.label
                    + ": "
                    + c.cacheState()
                    + ")"
                    + why;
        }
        Double hb = b.cacheHitRate();
        Double hc = c.cacheHitRate();
        if (hb != null && hc != null && Math.abs(hb - hc) > CACHE_HIT_RATE_TOLERANCE) {
            return String.format(
                    Locale.ROOT,
                    "%sthe servers' prefix-cache hit rate differs (%s: %.3f; %s: %.3f)%s",
                    prefix,
                    b.label,
                    hb,
                    c.label,
                    hc,
                    why);
        }
        return null;
    }

    private static List<MetricComparison> compareStage(
            ComparedStage b, ComparedStage c, ComparisonOptions options, Set<String> notes) {
        List<MetricComparison> out = new ArrayList<>();
        for (Metric m : Metric.values()) {
            if (!m.isLatency()) {
                continue;
            }
            List<HistogramBucket> hb = b.histograms.get(m);
            List<HistogramBucket> hc = c.histograms.get(m);
            boolean tested = hb != null && hc != null;
            boolean anyValue = false;
            for (String stat : Metric.PERCENTILES) {
                Double vb = b.latency(m, stat);
                Double vc = c.latency(m, stat);
                if (vb == null && vc == null) {
                    if (b.isOtherTool() || c.isOtherTool()) {
                        notes.add(
                                m.key()
                                        + "_"
                                        + stat
                                        + ": not compared: "
                                        + absence(b, c, vb, vc, m, stat));
                    }
                    continue;
                }
                anyValue = true;
                Double p = null;
                String test = MetricComparison.TEST_THRESHOLD_ONLY;
                if (tested && vb != null && vc != null) {
                    long eb = b.independentValues(m);
                    long ec = c.independentValues(m);
                    if (stat.equals("p50")) {
                        p = NoiseTests.mannWhitneyPValue(hb, hc, eb, ec);
                        test = MetricComparison.TEST_MANN_WHITNEY;
                    } else {
                        double percentile = Double.parseDouble(stat.substring(1));
                        p = NoiseTests.quantileTestPValue(hb, hc, percentile, eb, ec);
                        test = MetricComparison.TEST_QUANTILE;
                    }
                }
                out.add(
                        cell(
                                m.key() + "_" + stat,
                                m,
                                stat,
                                vb,
                                vc,
                                options,
                                test,
                                p,
                                absence(b, c, vb, vc, m, stat),
                                null));
            }
            if (anyValue && !tested) {
                String side =
                        hb == null && hc == null
                                ? "neither profile has"
                                : (hb == null ? "baseline " + b.who() : "candidate " + c.who())
                                        + " has no";
                notes.add(
                        m.key()
                                + ": "
                                + side
                                + " histogram (metrics."
                                + LpgProfileWriter.HISTOGRAMS_KEY
                                + "."
                                + m.family()
                                + "), so its change is judged by the threshold only, without a"
                                + " noise test");
            }
        }
        Double tb = b.outputThroughput();
        Double tc = c.outputThroughput();
        if (tb != null || tc != null) {
            out.add(
                    cell(
                            Metric.OUTPUT_THROUGHPUT.key(),
                            Metric.OUTPUT_THROUGHPUT,
                            "value",
                            tb,
                            tc,
                            options,
                            MetricComparison.TEST_THRESHOLD_ONLY,
                            null,
                            absence(b, c, tb, tc, Metric.OUTPUT_THROUGHPUT, "value"),
                            null));
            notes.add(
                    "output_throughput: one value per run, judged by the threshold only (no noise"
                            + " test)");
        } else if (b.isOtherTool() || c.isOtherTool()) {
            notes.add(
                    "output_throughput: not compared: "
                            + absence(b, c, null, null, Metric.OUTPUT_THROUGHPUT, "value"));
        }
        Double gb = b.number("goodput");
        Double gc = c.number("goodput");
        if (gb != null && gc != null) {
            Long sb = b.count("goodput_requests");
            Long sc = c.count("goodput_requests");
            Long nb = b.attempted();
            Long nc = c.attempted();
            Double p = null;
            String test = MetricComparison.TEST_THRESHOLD_ONLY;
            if (sb != null && sc != null && nb != null && nc != null) {
                p = NoiseTests.twoProportionPValue(sb, nb, sc, nc);
                test = MetricComparison.TEST_TWO_PROPORTION;
            }
            out.add(cell("goodput", Metric.GOODPUT, "value", gb, gc, options, test, p, null, null));
        } else if (gb != null || gc != null) {
            notes.add(
                    "goodput: only the "
                            + (gb != null ? "baseline" : "candidate")
                            + " has an SLO, so goodput is not compared");
        }
        return out;
    }

    /** A statistic compared, before the noise tests' level is known. */
    private static MetricComparison cell(
            String name,
            Metric metric,
            String statistic,
            Double baseline,
            Double candidate,
            ComparisonOptions options,
            String test,
            Double pValue,
            String absent,
            MetricComparison.Repeats repeats) {
        double threshold = options.threshold(metric);
        Double change = null;
        boolean beyondThreshold = false;
        Side worse = Side.NEITHER;
        if (baseline != null && candidate != null) {
            if (baseline != 0) {
                change = (candidate - baseline) / baseline;
                beyondThreshold = Math.abs(change) > threshold;
            } else {
                change = candidate == 0 ? 0.0 : null;
                beyondThreshold = candidate != 0;
            }
            if (!candidate.equals(baseline)) {
                boolean candidateHigher = candidate > baseline;
                worse = candidateHigher == metric.higherIsWorse() ? Side.CANDIDATE : Side.BASELINE;
            }
        }
        return new MetricComparison(
                name,
                metric,
                statistic,
                baseline,
                candidate,
                change,
                threshold,
                beyondThreshold,
                null,
                beyondThreshold,
                worse,
                test,
                pValue,
                absent,
                repeats,
                null,
                false);
    }

    /**
     * Why a side has no value of a statistic, naming the side and its tool; {@code null} when both
     * have one.
     */
    private static String absence(
            ComparedStage b, ComparedStage c, Double vb, Double vc, Metric m, String stat) {
        List<String> why = new ArrayList<>();
        if (vb == null) {
            why.add("baseline: " + b.absentReason(m, stat));
        }
        if (vc == null) {
            why.add("candidate: " + c.absentReason(m, stat));
        }
        return why.isEmpty() ? null : String.join("; ", why);
    }

    /**
     * Whether a statistic counts toward the verdict: tail percentiles only when asked ({@code
     * --tails}). Neither road to a tail's noise bounds the noise between runs. A single run's tail
     * is one draw of a heavy-tailed figure, which a normal interval from a few quiet runs places
     * far too confidently (an unchanged run's TTFT p99 8.7 % above seven quiet nights,
     * bench/noise_floor.py). And the repeats inside one run share that run's machine, so their
     * spread understates how far the next run's tail may move: of 20 pairs of unchanged runs of 10
     * repeats each, 3 had tails "significantly" worse, by up to 84 % (ITL p99), every repeat of the
     * candidate run alike, while no median moved beyond its noise (bench/repeat_pairs.py). The same
     * holds for "inconclusive": a tail left undecided by its noise does not make the verdict
     * inconclusive unless tails are asked for.
     */
    static boolean decidesVerdict(MetricComparison m, ComparisonOptions options) {
        return options.tailsInVerdict() || !isTail(m);
    }

    private static boolean isTail(MetricComparison m) {
        return m.statistic().equals("p90") || m.statistic().equals("p99");
    }

    /** The cell decided: beyond the noise when its p-value is below the per-test level. */
    private static MetricComparison decide(MetricComparison m, double levelPerTest) {
        Boolean beyondNoise = m.pValue() == null ? null : m.pValue() < levelPerTest;
        boolean significant = m.beyondThreshold() && (beyondNoise == null || beyondNoise);
        Double detectable = null;
        boolean inconclusive = false;
        MetricComparison.Repeats repeats = m.repeats();
        if (repeats != null && m.baseline() != null && m.baseline() != 0) {
            double half =
                    repeats.standardError() == 0
                            ? 0
                            : StudentT.quantile(1 - levelPerTest / 2, repeats.degreesOfFreedom())
                                    * repeats.standardError();
            detectable = half / Math.abs(m.baseline());
            // The noise floor is above the threshold: a change of the threshold's size could
            // have gone unseen, so "no significant change" would claim more than was measured.
            inconclusive = !significant && detectable > m.threshold();
        }
        return new MetricComparison(
                m.name(),
                m.metric(),
                m.statistic(),
                m.baseline(),
                m.candidate(),
                m.change(),
                m.threshold(),
                m.beyondThreshold(),
                beyondNoise,
                significant,
                m.worse(),
                m.test(),
                m.pValue(),
                m.absent(),
                repeats,
                detectable,
                inconclusive);
    }

    /** The labels of stages, comma-separated. */
    private static String labels(List<ComparedStage> stages) {
        return String.join(", ", stages.stream().map(s -> s.label).toList());
    }

    /** The stages with at least one successful request. */
    private static List<ComparedStage> withSuccess(List<ComparedStage> stages) {
        return stages.stream().filter(ComparedStage::hasSuccess).toList();
    }

    private static List<ComparedStage> concat(List<ComparedStage> a, List<ComparedStage> b) {
        List<ComparedStage> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    /** How a stage judged across repeats is described in the notes. */
    private static String repeatsNote(
            int stage, ComparedStage b, int base, int cand, boolean paired) {
        String how;
        if (paired) {
            how =
                    base
                            + " repeats a side that drew the same schedules pair by pair (the same"
                            + " seed), each statistic judged repeat by repeat (a paired t-test: what"
                            + " a random schedule moves, as a Poisson stage's throughput, cancels in"
                            + " each pair)";
        } else if (base > 1 && cand > 1) {
            how =
                    (base == cand
                                    ? base + " repeats a side"
                                    : base + " baseline and " + cand + " candidate repeats")
                            + ", each statistic judged across them (Welch's t-test on each repeat's"
                            + " value: the noise between runs, not between requests)";
        } else {
            how =
                    (base > 1
                                    ? base + " baseline repeats and one candidate run"
                                    : "one baseline run and " + cand + " candidate repeats")
                            + ", each statistic judged against the repeats' noise (the one run's"
                            + " value against their spread: a prediction interval)";
        }
        return "stage " + stage + " (" + b.keyText() + "): " + how;
    }

    /**
     * A stage's statistics judged across its repeats: each repeat gives one value of each (its p50
     * TTFT, its output throughput), and Welch's t-test asks whether the two sides' means differ
     * beyond the spread of those values. A statistic some repeat lacks is not compared.
     */
    private static List<MetricComparison> compareRepeats(
            List<ComparedStage> base,
            List<ComparedStage> cand,
            boolean paired,
            ComparisonOptions options,
            Set<String> notes) {
        List<MetricComparison> out = new ArrayList<>();
        for (Metric m : Metric.values()) {
            if (m.isLatency()) {
                for (String stat : Metric.PERCENTILES) {
                    repeatCell(
                            out,
                            base,
                            cand,
                            paired,
                            m.key() + "_" + stat,
                            m,
                            stat,
                            s -> s.latency(m, stat),
                            options,
                            notes);
                }
            }
        }
        repeatCell(
                out,
                base,
                cand,
                paired,
                Metric.OUTPUT_THROUGHPUT.key(),
                Metric.OUTPUT_THROUGHPUT,
                "value",
                ComparedStage::outputThroughput,
                options,
                notes);
        repeatCell(
                out,
                base,
                cand,
                paired,
                "goodput",
                Metric.GOODPUT,
                "value",
                s -> s.number("goodput"),
                options,
                notes);
        return out;
    }

    private static void repeatCell(
            List<MetricComparison> out,
            List<ComparedStage> baseStages,
            List<ComparedStage> candStages,
            boolean paired,
            String name,
            Metric metric,
            String statistic,
            java.util.function.Function<ComparedStage, Double> value,
            ComparisonOptions options,
            Set<String> notes) {
        List<Double> base = values(baseStages, value);
        List<Double> cand = values(candStages, value);
        if (base.isEmpty() && cand.isEmpty()) {
            return;
        }
        if (base.size() < baseStages.size() || cand.size() < candStages.size()) {
            notes.add(
                    name
                            + ": not every repeat has it ("
                            + base.size()
                            + " of "
                            + baseStages.size()
                            + " baseline, "
                            + cand.size()
                            + " of "
                            + candStages.size()
                            + " candidate), so it is not compared");
            return;
        }
        RepeatTest test = paired ? RepeatTest.paired(base, cand) : RepeatTest.of(base, cand);
        out.add(
                cell(
                        name,
                        metric,
                        statistic,
                        test.baselineMean(),
                        test.candidateMean(),
                        options,
                        paired
                                ? MetricComparison.TEST_PAIRED_REPEATS
                                : MetricComparison.TEST_REPEATS,
                        test.pValue(),
                        null,
                        new MetricComparison.Repeats(
                                base.size(),
                                cand.size(),
                                test.standardError(),
                                test.degreesOfFreedom())));
    }

    /**
     * Why a load's stages cannot be compared: a side none of whose stages (repeats) has a
     * successful request; else {@code null}.
     */
    private static String missingSuccesses(boolean baseSucceeded, boolean candSucceeded) {
        if (!baseSucceeded && !candSucceeded) {
            return "neither the baseline nor the candidate has a successful request";
        }
        if (!baseSucceeded) {
            return "the baseline has no successful request";
        }
        return candSucceeded ? null : "the candidate has no successful request";
    }

    private static List<Double> values(
            List<ComparedStage> stages, java.util.function.Function<ComparedStage, Double> value) {
        List<Double> out = new ArrayList<>();
        for (ComparedStage s : stages) {
            Double v = value.apply(s);
            if (v != null) {
                out.add(v);
            }
        }
        return out;
    }

    private static String nothingToCompare(List<StageComparison> stages, List<String> reasons) {
        boolean oneReason = reasons.stream().distinct().count() == 1;
        StringBuilder message = new StringBuilder("nothing to compare: ");
        if (oneReason) {
            message.append(reasons.get(0))
                    .append(stages.size() == 1 ? " in the stage" : " in any of the stages")
                    .append(" paired (");
        } else {
            message.append("no stage paired has a successful request on both sides (");
        }
        List<String> each = new ArrayList<>();
        for (int i = 0; i < stages.size(); i++) {
            StageComparison s = stages.get(i);
            each.add(
                    "stage "
                            + s.stage()
                            + " at "
                            + ComparedStage.keyText(s.baselineRate(), s.concurrency())
                            + (oneReason ? "" : ": " + reasons.get(i))
                            + ", baseline "
                            + s.baselineProfile()
                            + ", candidate "
                            + s.candidateProfile());
        }
        return message.append(String.join("; ", each)).append(')').toString();
    }

    private static List<LabeledProfile> label(List<JsonNode> docs, String side) {
        if (docs == null) {
            throw new IllegalArgumentException(side + ": no profiles");
        }
        List<LabeledProfile> out = new ArrayList<>();
        for (JsonNode d : docs) {
            out.add(new LabeledProfile(null, d));
        }
        return out;
    }

    private static List<ComparedStage> read(List<LabeledProfile> profiles, String side) {
        if (profiles == null || profiles.isEmpty()) {
            throw new IllegalArgumentException(side + ": no profiles to compare");
        }
        List<ComparedStage> out = new ArrayList<>();
        for (int i = 0; i < profiles.size(); i++) {
            LabeledProfile p = profiles.get(i);
            String label = p.label() != null ? p.label() : side + " profile " + (i + 1);
            out.add(ComparedStage.of(label, p.document()));
        }
        out.sort(Comparator.comparingInt((ComparedStage s) -> s.stageIndex));
        return out;
    }
}
