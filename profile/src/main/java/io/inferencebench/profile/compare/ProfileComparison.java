package io.inferencebench.profile.compare;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.RequestRate;
import io.inferencebench.profile.stats.HistogramBucket;
import io.inferencebench.profile.stats.MetricRecorder;
import io.inferencebench.profile.stats.RecorderSnapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Compares a candidate run with a baseline run, stage by stage, from their LPG profiles.
 *
 * <p>Stages are paired by requested rate, closed-loop stages (unbounded rate) also by their
 * concurrency; never by position. A stage without a partner in the other run is left out and named
 * in the notes; runs without a single pair, or with a rate that appears a different number of times
 * in each, are refused. A pair where one side has no successful request is not comparable: it is
 * reported as such and left out of the verdict, and runs without any comparable pair are refused.
 * For each comparable pair it compares TTFT, ITL, TPOT and E2E latency at p50, p90 and p99, output
 * throughput and (when both have an SLO) goodput. A change is significant only when it is beyond
 * the metric's relative threshold <em>and</em> beyond the runs' sampling noise:
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

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Achieved rate below this share of the requested one: the load was not delivered. */
    private static final double MIN_DELIVERED_SHARE = 0.95;

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
        List<StageData> base = read(baseline, "baseline");
        List<StageData> cand = read(candidate, "candidate");
        Set<String> notes = new LinkedHashSet<>();
        List<StageData[]> pairs = pair(base, cand, notes);
        List<StageComparison> stages = new ArrayList<>();
        List<String> notComparable = new ArrayList<>();
        for (int i = 0; i < pairs.size(); i++) {
            StageData b = pairs.get(i)[0];
            StageData c = pairs.get(i)[1];
            String missing = missingSuccesses(b, c);
            if (missing != null) {
                notes.add(
                        "stage "
                                + (i + 1)
                                + " ("
                                + keyText(b)
                                + "): not comparable: "
                                + missing
                                + "; left out of the verdict");
                notComparable.add(missing);
                stages.add(
                        new StageComparison(
                                i + 1,
                                b.rate,
                                c.rate,
                                b.concurrency(),
                                b.label,
                                c.label,
                                missing,
                                List.of()));
                continue;
            }
            for (StageData s : pairs.get(i)) {
                if (s.undelivered() != null) {
                    notes.add(s.undelivered());
                }
            }
            stages.add(
                    new StageComparison(
                            i + 1,
                            b.rate,
                            c.rate,
                            b.concurrency(),
                            b.label,
                            c.label,
                            null,
                            compareStage(b, c, options, notes)));
        }
        if (notComparable.size() == pairs.size()) {
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
                            + " significant p90/p99 change(s) are not part of the verdict: a"
                            + " busy client machine moves a single run's tail (--tails includes"
                            + " them)");
        }
        Verdict verdict =
                regressed
                        ? Verdict.REGRESSION
                        : improved ? Verdict.IMPROVEMENT : Verdict.NO_SIGNIFICANT_CHANGE;
        return new Comparison(
                verdict,
                Comparison.MATCHED_BY_RATE,
                List.copyOf(stages),
                List.copyOf(notes),
                options);
    }

    private static List<MetricComparison> compareStage(
            StageData b, StageData c, ComparisonOptions options, Set<String> notes) {
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
                                absence(b, c, vb, vc, m, stat)));
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
                            absence(b, c, tb, tc, Metric.OUTPUT_THROUGHPUT, "value")));
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
            out.add(cell("goodput", Metric.GOODPUT, "value", gb, gc, options, test, p, null));
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
            String absent) {
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
                absent);
    }

    /**
     * Why a side has no value of a statistic, naming the side and its tool; {@code null} when both
     * have one.
     */
    private static String absence(
            StageData b, StageData c, Double vb, Double vc, Metric m, String stat) {
        List<String> why = new ArrayList<>();
        if (vb == null) {
            why.add("baseline: " + b.absentReason(m, stat));
        }
        if (vc == null) {
            why.add("candidate: " + c.absentReason(m, stat));
        }
        return why.isEmpty() ? null : String.join("; ", why);
    }

    /** Whether a statistic counts toward the verdict: tail percentiles only when asked. */
    static boolean decidesVerdict(MetricComparison m, ComparisonOptions options) {
        return options.tailsInVerdict()
                || !(m.statistic().equals("p90") || m.statistic().equals("p99"));
    }

    /** The cell decided: beyond the noise when its p-value is below the per-test level. */
    private static MetricComparison decide(MetricComparison m, double levelPerTest) {
        Boolean beyondNoise = m.pValue() == null ? null : m.pValue() < levelPerTest;
        boolean significant = m.beyondThreshold() && (beyondNoise == null || beyondNoise);
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
                m.absent());
    }

    /**
     * Pairs the stages of two runs by request rate (closed-loop stages by concurrency too), in the
     * baseline's order; a rate seen several times in both runs pairs its stages in their order.
     * Stages without a partner are named in {@code notes}.
     *
     * @throws IllegalArgumentException when a stage has no rate
     * @throws NotComparableException when a rate appears a different number of times in the two
     *     runs, or no stage finds a partner
     */
    private static List<StageData[]> pair(
            List<StageData> base, List<StageData> cand, Set<String> notes) {
        for (List<StageData> side : List.of(base, cand)) {
            for (StageData s : side) {
                if (Double.isNaN(s.rate)) {
                    if (base.size() == 1 && cand.size() == 1) {
                        // One stage each: nothing to choose between, but the reader must know.
                        notes.add(
                                "the runs' only stages are paired without a request rate: "
                                        + s.who()
                                        + " does not say which rate it ran at"
                                        + s.noRateReason()
                                        + "; make sure both ran the same load");
                        return List.<StageData[]>of(new StageData[] {base.get(0), cand.get(0)});
                    }
                    throw new IllegalArgumentException(
                            s.label
                                    + ": no metrics.request_rate"
                                    + s.noRateReason()
                                    + ": stages are paired by request rate");
                }
            }
        }
        List<StageData[]> pairs = new ArrayList<>();
        List<StageData> paired = new ArrayList<>();
        for (StageData b : base) {
            if (paired.contains(b)) {
                continue;
            }
            List<StageData> sameInBase = base.stream().filter(o -> sameKey(b, o)).toList();
            List<StageData> sameInCand = cand.stream().filter(o -> sameKey(b, o)).toList();
            if (sameInCand.isEmpty()) {
                continue;
            }
            if (sameInBase.size() != sameInCand.size()) {
                throw new NotComparableException(
                        "cannot pair the stages at "
                                + keyText(b)
                                + ": the baseline has "
                                + sameInBase.size()
                                + (sameInBase.size() == 1 ? " stage" : " stages")
                                + " at "
                                + keyText(b)
                                + ", the candidate "
                                + sameInCand.size()
                                + " (baseline "
                                + labels(sameInBase)
                                + "; candidate "
                                + labels(sameInCand)
                                + "); compare the profile files you mean");
            }
            for (int k = 0; k < sameInBase.size(); k++) {
                pairs.add(new StageData[] {sameInBase.get(k), sameInCand.get(k)});
                paired.add(sameInBase.get(k));
                paired.add(sameInCand.get(k));
            }
        }
        if (pairs.isEmpty()) {
            throw new NotComparableException(
                    "nothing to pair: no stage of the baseline ("
                            + keys(base)
                            + ") has the request rate of a stage of the candidate ("
                            + keys(cand)
                            + "); stages are paired by request rate (closed-loop stages also by"
                            + " concurrency), never by position");
        }
        pairs.sort(Comparator.comparingInt(p -> base.indexOf(p[0])));
        for (StageData b : base) {
            if (!paired.contains(b)) {
                notes.add(
                        "baseline stage "
                                + b.describe()
                                + " has no candidate stage at that rate: not compared");
            }
        }
        for (StageData c : cand) {
            if (!paired.contains(c)) {
                notes.add(
                        "candidate stage "
                                + c.describe()
                                + " has no baseline stage at that rate: not compared");
            }
        }
        return pairs;
    }

    /** Why a pair cannot be compared: a side without a successful request; else {@code null}. */
    private static String missingSuccesses(StageData b, StageData c) {
        if (!b.hasSuccess() && !c.hasSuccess()) {
            return "neither the baseline nor the candidate has a successful request";
        }
        if (!b.hasSuccess()) {
            return "the baseline has no successful request";
        }
        return c.hasSuccess() ? null : "the candidate has no successful request";
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
                            + keyText(s.baselineRate(), s.concurrency())
                            + (oneReason ? "" : ": " + reasons.get(i))
                            + ", baseline "
                            + s.baselineProfile()
                            + ", candidate "
                            + s.candidateProfile());
        }
        return message.append(String.join("; ", each)).append(')').toString();
    }

    private static boolean sameKey(StageData a, StageData b) {
        return sameRate(a.rate, b.rate)
                && (Double.isFinite(a.rate) || Objects.equals(a.concurrency(), b.concurrency()));
    }

    private static String keyText(StageData s) {
        return keyText(s.rate, s.concurrency());
    }

    /** {@code 5.0 req/s}; a closed-loop stage {@code concurrency 8}. */
    static String keyText(double rate, Integer concurrency) {
        return !Double.isFinite(rate) && concurrency != null
                ? "concurrency " + concurrency
                : rateText(rate) + " req/s";
    }

    private static String keys(List<StageData> side) {
        return String.join(", ", side.stream().map(ProfileComparison::keyText).toList());
    }

    private static String labels(List<StageData> stages) {
        return String.join(", ", stages.stream().map(s -> s.label).toList());
    }

    private static boolean sameRate(double a, double b) {
        if (Double.isNaN(a) || Double.isNaN(b)) {
            return false;
        }
        if (Double.isInfinite(a) || Double.isInfinite(b)) {
            return a == b;
        }
        return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
    }

    static String rateText(double rate) {
        return Double.isNaN(rate) ? "?" : RequestRate.pythonString(rate);
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

    private static List<StageData> read(List<LabeledProfile> profiles, String side) {
        if (profiles == null || profiles.isEmpty()) {
            throw new IllegalArgumentException(side + ": no profiles to compare");
        }
        List<StageData> out = new ArrayList<>();
        for (int i = 0; i < profiles.size(); i++) {
            LabeledProfile p = profiles.get(i);
            String label = p.label() != null ? p.label() : side + " profile " + (i + 1);
            out.add(StageData.of(label, p.document()));
        }
        out.sort(Comparator.comparingInt((StageData s) -> s.stageIndex));
        return out;
    }

    /** What a comparison reads from one stage's profile. */
    private static final class StageData {
        final String label;
        final JsonNode metrics;
        final double rate;
        final int stageIndex;
        final Map<Metric, List<HistogramBucket>> histograms = new EnumMap<>(Metric.class);

        /** The {@code source} of a stage mapped from another tool's file, else missing. */
        JsonNode source = com.fasterxml.jackson.databind.node.MissingNode.getInstance();

        private StageData(String label, JsonNode metrics, double rate, int stageIndex) {
            this.label = label;
            this.metrics = metrics;
            this.rate = rate;
            this.stageIndex = stageIndex;
        }

        /** Whether the stage comes from another tool's result file. */
        boolean isOtherTool() {
            String kind = source.path("kind").asText("");
            return !kind.isEmpty() && !kind.equals("inferencebench");
        }

        /** The stage's file, with its tool and version when another tool wrote it. */
        String who() {
            if (!isOtherTool()) {
                return label;
            }
            String version = source.path("version").asText("");
            return source.path("tool").asText()
                    + (version.isEmpty() ? "" : " " + version)
                    + " ("
                    + label
                    + ")";
        }

        String noRateReason() {
            String why = source.path("no_rate").asText("");
            return why.isEmpty() ? "" : " (" + why + ")";
        }

        /** Why the stage has no value of a statistic. */
        String absentReason(Metric m, String stat) {
            if (m.isLatency()) {
                Long count = count("count_" + m.family());
                if (count != null && count == 0) {
                    return label + " measured no " + m.key() + " value";
                }
                if (!hasSuccess()) {
                    return label + " has no successful request";
                }
            }
            String what = m.isLatency() ? m.key() + " " + stat : m.key().replace('_', ' ');
            if (isOtherTool()) {
                return who() + " does not report " + what;
            }
            String key =
                    m.isLatency()
                            ? (stat.equals("p50") ? "median" : stat) + "_" + m.family()
                            : m == Metric.OUTPUT_THROUGHPUT ? "output_tokens_per_min" : m.key();
            return label + " has no metrics." + key;
        }

        static StageData of(String label, JsonNode document) {
            JsonNode metrics = document == null ? null : document.get("metrics");
            if (metrics == null || !metrics.isObject()) {
                throw new IllegalArgumentException(
                        label + ": not an LPG profile (no \"metrics\" object)");
            }
            JsonNode rateNode = metrics.get("request_rate");
            double rate;
            if (rateNode == null || rateNode.isNull()) {
                rate = Double.NaN;
            } else if (rateNode.isNumber()) {
                rate = rateNode.doubleValue();
            } else {
                try {
                    rate = RequestRate.parse(rateNode.asText());
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(
                            label
                                    + ": metrics.request_rate is '"
                                    + rateNode.asText()
                                    + "', not a number or \"inf\"");
                }
            }
            JsonNode index = metrics.get("stage_index");
            StageData data =
                    new StageData(
                            label,
                            metrics,
                            rate,
                            index != null && index.isInt() ? index.asInt() : 0);
            if (document.path("source").isObject()) {
                data.source = document.get("source");
            }
            JsonNode histograms = metrics.get(LpgProfileWriter.HISTOGRAMS_KEY);
            if (histograms != null && histograms.isObject()) {
                for (Metric m : Metric.values()) {
                    JsonNode h = m.family() == null ? null : histograms.get(m.family());
                    if (h != null && h.isObject()) {
                        try {
                            RecorderSnapshot snapshot =
                                    MAPPER.treeToValue(h, RecorderSnapshot.class);
                            data.histograms.put(
                                    m, MetricRecorder.fromSnapshot(snapshot).histogramBuckets());
                        } catch (com.fasterxml.jackson.core.JsonProcessingException
                                | IllegalArgumentException e) {
                            throw new IllegalArgumentException(
                                    label
                                            + ": metrics."
                                            + LpgProfileWriter.HISTOGRAMS_KEY
                                            + "."
                                            + m.family()
                                            + " is not a histogram snapshot: "
                                            + e.getMessage());
                        }
                    }
                }
            }
            return data;
        }

        String describe() {
            return (stageIndex + 1) + " (" + keyText(rate, concurrency()) + ", " + label + ")";
        }

        /** The concurrency of a closed-loop stage (or the cap of an open-loop one), or null. */
        Integer concurrency() {
            JsonNode n = metrics.get("max_concurrency");
            return n != null && n.canConvertToInt() && n.isIntegralNumber() ? n.asInt() : null;
        }

        /**
         * Whether any request succeeded: {@code completed}, else the count of end-to-end latencies;
         * a profile with neither (another writer's) is taken to have successes.
         */
        boolean hasSuccess() {
            Long completed = count("completed");
            if (completed == null) {
                completed = count("count_" + Metric.E2EL.family());
            }
            return completed == null || completed > 0;
        }

        Double number(String key) {
            JsonNode n = metrics.get(key);
            return n != null && n.isNumber() && Double.isFinite(n.doubleValue())
                    ? n.doubleValue()
                    : null;
        }

        Long count(String key) {
            JsonNode n = metrics.get(key);
            return n != null && n.canConvertToLong() && n.isIntegralNumber() ? n.asLong() : null;
        }

        Long attempted() {
            Long completed = count("completed");
            Long failures = count("failures");
            return completed == null ? null : completed + (failures == null ? 0 : failures);
        }

        Double latency(Metric m, String stat) {
            String prefix = stat.equals("p50") ? "median" : stat;
            Double v = number(prefix + "_" + m.family());
            if (v == null && m == Metric.E2EL) {
                // LPG's own key for the same statistic (profiles of other writers)
                v = number(prefix + "_latency");
            }
            if (v != null
                    && m.family() != null
                    && count("count_" + m.family()) != null
                    && count("count_" + m.family()) == 0) {
                return null; // empty family: LPG's 0 is not a measurement
            }
            return v;
        }

        /**
         * How many independent values a latency histogram holds: one per request. The inter-token
         * gaps of a request are not independent (they share its hiccups), so ITL counts its
         * requests, not its gaps.
         */
        long independentValues(Metric m) {
            if (m != Metric.ITL) {
                return 0;
            }
            Long requests = count("count_ttft_ms");
            if (requests == null || requests == 0) {
                requests = count("completed");
            }
            return requests == null ? 0 : requests;
        }

        Double outputThroughput() {
            Double perMin = number("output_tokens_per_min");
            return perMin == null ? null : perMin / 60.0;
        }

        String undelivered() {
            Double achieved = number("achieved_rate");
            JsonNode meaningful = metrics.get("rates_meaningful");
            if (achieved == null
                    || !Double.isFinite(rate)
                    || (meaningful != null && !meaningful.asBoolean(true))) {
                return null;
            }
            if (achieved < MIN_DELIVERED_SHARE * rate) {
                return String.format(
                        Locale.ROOT,
                        "%s: achieved %.3g of %s req/s requested: the load was not delivered, its"
                                + " latencies do not describe that rate",
                        label,
                        achieved,
                        rateText(rate));
            }
            return null;
        }
    }
}
