package io.inferencebench.profile.compare;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.lpg.RequestRate;
import java.util.List;

/**
 * The result of comparing a candidate run with a baseline run.
 *
 * @param verdict regression, improvement or no significant change
 * @param stageMatching how stages were paired: always {@code request_rate} (closed-loop stages also
 *     by concurrency)
 * @param stages the paired stages, in the baseline's order, the ones not comparable included
 * @param notes what the reader must know: stages without a partner, pairs not comparable, metrics
 *     compared by threshold only and why, stages whose load was not delivered
 * @param options the thresholds and significance level used
 */
public record Comparison(
        Verdict verdict,
        String stageMatching,
        List<StageComparison> stages,
        List<String> notes,
        ComparisonOptions options) {

    /** Stages paired by equal requested rates (closed-loop stages also by concurrency). */
    public static final String MATCHED_BY_RATE = "request_rate";

    /**
     * Every significant change for the worse.
     *
     * @return the regressed statistics, stage by stage
     */
    public List<MetricComparison> regressions() {
        return stages.stream()
                .flatMap(s -> s.metrics().stream())
                .filter(MetricComparison::regressed)
                .filter(m -> ProfileComparison.decidesVerdict(m, options))
                .toList();
    }

    /**
     * Every significant change for the better.
     *
     * @return the improved statistics, stage by stage
     */
    public List<MetricComparison> improvements() {
        return stages.stream()
                .flatMap(s -> s.metrics().stream())
                .filter(MetricComparison::improved)
                .filter(m -> ProfileComparison.decidesVerdict(m, options))
                .toList();
    }

    /**
     * The level each test's p-value is held to: alpha over the number of tests (Bonferroni).
     *
     * @return the per-test level
     */
    public double levelPerTest() {
        long tests =
                stages.stream()
                        .flatMap(s -> s.metrics().stream())
                        .filter(m -> m.pValue() != null)
                        .count();
        return options.alpha() / Math.max(1, tests);
    }

    /**
     * The JSON form: {@code verdict}, {@code stage_matching}, {@code thresholds}, {@code alpha},
     * {@code notes}, and {@code stages[]} with {@code comparable} (and, when {@code false}, {@code
     * not_comparable}: why), {@code concurrency} when the stages have one, and {@code
     * metrics.<name>} = {@code {baseline, candidate, change, significant, worse, threshold, test,
     * p_value, unit}}, and {@code absent} (why a side has no value) when one is missing. Missing
     * numbers are {@code null}, never 0; an unbounded rate is {@code "inf"}, a rate the file does
     * not give {@code null}.
     *
     * @return the document
     */
    public ObjectNode toJson() {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode root = f.objectNode();
        root.put("verdict", verdict.text());
        root.put("stage_matching", stageMatching);
        ObjectNode thresholds = root.putObject("thresholds");
        for (Metric m : Metric.values()) {
            thresholds.put(m.key(), options.threshold(m));
        }
        root.put("alpha", options.alpha());
        root.put("alpha_per_test", levelPerTest());
        ArrayNode noteList = root.putArray("notes");
        notes.forEach(noteList::add);
        ArrayNode stageList = root.putArray("stages");
        for (StageComparison s : stages) {
            ObjectNode stage = stageList.addObject();
            stage.put("stage", s.stage());
            putRate(stage, "baseline_request_rate", s.baselineRate());
            putRate(stage, "candidate_request_rate", s.candidateRate());
            if (s.concurrency() != null) {
                stage.put("concurrency", s.concurrency());
            }
            stage.put("baseline_profile", s.baselineProfile());
            stage.put("candidate_profile", s.candidateProfile());
            stage.put("comparable", s.comparable());
            if (!s.comparable()) {
                stage.put("not_comparable", s.notComparable());
            }
            ObjectNode metrics = stage.putObject("metrics");
            for (MetricComparison m : s.metrics()) {
                ObjectNode cell = metrics.putObject(m.name());
                cell.put("unit", m.metric().unit());
                cell.put("baseline", m.baseline());
                cell.put("candidate", m.candidate());
                cell.put("change", m.change());
                cell.put("significant", m.significant());
                cell.put("worse", m.worse().text());
                cell.put("threshold", m.threshold());
                cell.put("test", m.test());
                cell.put("p_value", m.pValue());
                if (m.beyondNoise() != null) {
                    cell.put("beyond_noise", m.beyondNoise());
                }
                if (m.repeats() != null) {
                    ObjectNode repeats = cell.putObject("repeats");
                    repeats.put("baseline", m.repeats().baseline());
                    repeats.put("candidate", m.repeats().candidate());
                    repeats.put("standard_error", m.repeats().standardError());
                    repeats.put("degrees_of_freedom", m.repeats().degreesOfFreedom());
                }
                if (m.detectable() != null) {
                    cell.put("detectable_change", m.detectable());
                    cell.put("inconclusive", m.inconclusive());
                }
                if (m.absent() != null) {
                    cell.put("absent", m.absent());
                }
            }
        }
        return root;
    }

    private static void putRate(ObjectNode node, String key, double rate) {
        if (RequestRate.isUnbounded(rate)) {
            node.put(key, RequestRate.UNBOUNDED);
        } else if (Double.isFinite(rate)) {
            node.put(key, rate);
        } else {
            node.putNull(key);
        }
    }
}
