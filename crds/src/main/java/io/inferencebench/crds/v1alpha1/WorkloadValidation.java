package io.inferencebench.crds.v1alpha1;

import static io.inferencebench.crds.v1alpha1.FieldChecks.bounded;
import static io.inferencebench.crds.v1alpha1.FieldChecks.optionalDuration;
import static io.inferencebench.crds.v1alpha1.FieldChecks.optionalPositiveDuration;
import static io.inferencebench.crds.v1alpha1.FieldChecks.positiveCount;
import static io.inferencebench.crds.v1alpha1.FieldChecks.range;

import java.util.ArrayList;
import java.util.List;

/**
 * The workload's checks for callers without an API server ({@link SpecValidation}): the dataset and
 * its token distributions, a model mix, a conversation, a trace, the prefix-cache state.
 */
final class WorkloadValidation {

    private WorkloadValidation() {}

    /**
     * Validates a workload.
     *
     * @param workload the workload
     * @param prefix field path prefix, e.g. {@code spec.workload} or {@code workload}
     * @return problems, empty when valid
     */
    static List<String> validate(WorkloadSpec workload, String prefix) {
        List<String> problems = new ArrayList<>();
        models(workload.getModels(), prefix + ".models", problems);
        if (workload.getPrefixCache() != null && workload.getPrefixCache().getState() == null) {
            problems.add(prefix + ".prefixCache.state: is required (cold or warm)");
        }
        if (workload.getPrefixCache() != null
                && workload.getPrefixCache().getState() == PrefixCacheSpec.State.COLD
                && !workload.getPrefixCache().resetsBeforeStage()) {
            problems.add(
                    prefix
                            + ".prefixCache.reset: false is not with state cold: a cache that is"
                            + " not emptied before a stage is not known to be cold");
        }
        DatasetSpec dataset = workload.getDataset();
        if (workload.getPrefixCache() != null
                && workload.getPrefixCache().getState() == PrefixCacheSpec.State.WARM
                && (dataset == null || dataset.getType() != DatasetType.PREFIX_REPETITION)) {
            problems.add(
                    prefix
                            + ".prefixCache.state: warm needs dataset.type prefix_repetition, whose"
                            + " shared prefixes are what a warm cache holds; other prompts declare"
                            + " none (use cold)");
        }
        if (workload.getPrefixCache() != null
                && workload.getPrefixCache().getState() == PrefixCacheSpec.State.WARM
                && workload.getModels() != null) {
            problems.add(
                    prefix
                            + ".prefixCache.state: warm is not with models: a server caches each"
                            + " model's or adapter's prefixes apart, and the warming sends one");
        }
        if (dataset == null) {
            return problems;
        }
        String at = prefix + ".dataset";
        DatasetType type = dataset.getType() == null ? DatasetType.RANDOM : dataset.getType();
        if (type.synthetic() && dataset.getSource() != null) {
            problems.add(
                    at
                            + ".source: must not be set for type random or prefix_repetition"
                            + " (prompts are synthetic)");
        }
        if (!type.synthetic() && dataset.getSource() == null) {
            problems.add(at + ".source: is required for type sharegpt, jsonl and trace");
        }
        trace(at, type, dataset, problems);
        conversation(at, type, dataset.getConversation(), problems);
        if (type != DatasetType.RANDOM && dataset.getInputTokens() != null) {
            problems.add(
                    at
                            + ".inputTokens: applies only to type random; filter dataset prompts"
                            + " with minInputTokens/maxInputTokens, size prefix_repetition"
                            + " prompts with prefixRepetition");
        }
        PrefixRepetitionSpec prefixes = dataset.getPrefixRepetition();
        if (prefixes != null && type != DatasetType.PREFIX_REPETITION) {
            problems.add(at + ".prefixRepetition: applies only to type prefix_repetition");
        }
        if (prefixes != null) {
            bounded(
                    at + ".prefixRepetition.prefixTokens",
                    prefixes.getPrefixTokens(),
                    TokenDistribution.MAX_TOKENS,
                    problems);
            bounded(
                    at + ".prefixRepetition.suffixTokens",
                    prefixes.getSuffixTokens(),
                    TokenDistribution.MAX_TOKENS,
                    problems);
            bounded(
                    at + ".prefixRepetition.prefixes",
                    prefixes.getPrefixes(),
                    PrefixRepetitionSpec.MAX_PREFIXES,
                    problems);
        }
        if (dataset.getSource() != null) {
            DatasetSource source = dataset.getSource();
            int set =
                    (source.getConfigMapRef() != null ? 1 : 0)
                            + (source.getPvc() != null ? 1 : 0)
                            + (source.getUrl() != null ? 1 : 0)
                            + (source.getInline() != null ? 1 : 0);
            if (set != 1) {
                problems.add(
                        at
                                + ".source: exactly one of configMapRef, pvc, url or inline must be set");
            }
        }
        distribution(at + ".inputTokens", dataset.getInputTokens(), problems);
        distribution(at + ".outputTokens", dataset.getOutputTokens(), problems);
        // The CRD's schema bounds these; a --config file meets no API server, so they are
        // checked here too.
        positiveCount(at + ".minInputTokens", dataset.getMinInputTokens(), problems);
        positiveCount(at + ".maxInputTokens", dataset.getMaxInputTokens(), problems);
        positiveCount(at + ".minOutputTokens", dataset.getMinOutputTokens(), problems);
        positiveCount(at + ".maxOutputTokens", dataset.getMaxOutputTokens(), problems);
        if (dataset.getSeed() != null && dataset.getSeed() < 0) {
            problems.add(at + ".seed: must not be negative, got " + dataset.getSeed());
        }
        range(
                at + ".minInputTokens",
                dataset.getMinInputTokens(),
                dataset.getMaxInputTokens(),
                "maxInputTokens",
                problems);
        range(
                at + ".minOutputTokens",
                dataset.getMinOutputTokens(),
                dataset.getMaxOutputTokens(),
                "maxOutputTokens",
                problems);
        if (workload.getTokenizer() != null && workload.getTokenizer().getConfigMapRef() == null) {
            problems.add(prefix + ".tokenizer.configMapRef: is required");
        }
        SamplingSpec sampling = workload.getSampling();
        if (sampling != null
                && sampling.getTemperature() != null
                && (sampling.getTemperature() < 0 || sampling.getTemperature() > 2)) {
            problems.add(prefix + ".sampling.temperature: must be between 0 and 2");
        }
        if (sampling != null
                && sampling.getTopP() != null
                && !(sampling.getTopP() > 0 && sampling.getTopP() <= 1)) {
            problems.add(
                    prefix + ".sampling.topP: must be within (0, 1], got " + sampling.getTopP());
        }
        if (sampling != null && sampling.getTopK() != null && sampling.getTopK() < -1) {
            problems.add(
                    prefix
                            + ".sampling.topK: must be at least -1 (-1 disables it), got "
                            + sampling.getTopK());
        }
        return problems;
    }

    /** The rules of a workload's model mix: named, distinct, weighted above 0, not too many. */
    private static void models(List<WeightedModel> models, String at, List<String> problems) {
        if (models == null) {
            return;
        }
        if (models.isEmpty()) {
            problems.add(at + ": give at least one model, or leave it out");
        }
        if (models.size() > WorkloadSpec.MAX_MODELS) {
            problems.add(
                    at + ": at most " + WorkloadSpec.MAX_MODELS + " models, got " + models.size());
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < models.size(); i++) {
            WeightedModel m = models.get(i);
            String field = at + "[" + i + "]";
            if (m == null || m.getName() == null || m.getName().isBlank()) {
                problems.add(field + ".name: is required");
                continue;
            }
            if (!seen.add(m.getName())) {
                problems.add(field + ".name: '" + m.getName() + "' is listed twice");
            }
            if (!(m.resolvedWeight() > 0) || Double.isInfinite(m.resolvedWeight())) {
                problems.add(field + ".weight: must be > 0, got " + m.getWeight());
            }
            SloSpec slo = m.getSlo();
            if (slo != null) {
                optionalDuration(field + ".slo.ttft", slo.getTtft(), problems);
                optionalDuration(field + ".slo.tpot", slo.getTpot(), problems);
                optionalDuration(field + ".slo.e2eLatency", slo.getE2eLatency(), problems);
                if (slo.getMinAttainment() != null
                        && !(slo.getMinAttainment() >= 0 && slo.getMinAttainment() <= 1)) {
                    problems.add(
                            field
                                    + ".slo.minAttainment: must be within [0, 1], got "
                                    + slo.getMinAttainment());
                }
            }
        }
    }

    /** The rules of a dataset's {@code conversation} section. */
    private static void conversation(
            String at, DatasetType type, ConversationSpec conversation, List<String> problems) {
        if (conversation == null) {
            return;
        }
        if (type != DatasetType.RANDOM && type != DatasetType.SHAREGPT) {
            problems.add(
                    at
                            + ".conversation: applies only to type random (synthetic sessions) or"
                            + " sharegpt (recorded conversations)");
        }
        bounded(
                at + ".conversation.turns",
                conversation.getTurns(),
                ConversationSpec.MAX_TURNS,
                problems);
        optionalDuration(at + ".conversation.thinkTime", conversation.getThinkTime(), problems);
    }

    /** The rules of a trace dataset and its {@code trace} section. */
    private static void trace(
            String at, DatasetType type, DatasetSpec dataset, List<String> problems) {
        TraceSpec trace = dataset.getTrace();
        if (trace != null && type != DatasetType.TRACE) {
            problems.add(at + ".trace: applies only to type trace");
        }
        if (type == DatasetType.TRACE) {
            java.util.Map<String, Object> fixed = new java.util.LinkedHashMap<>();
            fixed.put("outputTokens", dataset.getOutputTokens());
            fixed.put("minInputTokens", dataset.getMinInputTokens());
            fixed.put("maxInputTokens", dataset.getMaxInputTokens());
            fixed.put("minOutputTokens", dataset.getMinOutputTokens());
            fixed.put("maxOutputTokens", dataset.getMaxOutputTokens());
            fixed.forEach(
                    (field, value) -> {
                        if (value != null) {
                            problems.add(
                                    at
                                            + "."
                                            + field
                                            + ": does not apply to type trace (its requests keep"
                                            + " their recorded lengths; narrow the replay with"
                                            + " trace.start and trace.end)");
                        }
                    });
        }
        if (trace == null) {
            return;
        }
        Double scale = trace.getTimeScale();
        if (scale != null
                && !(scale >= TraceSpec.MIN_TIME_SCALE && scale <= TraceSpec.MAX_TIME_SCALE)) {
            problems.add(
                    at
                            + ".trace.timeScale: must be within [0.0001, 10000] (offsets are"
                            + " multiplied by it), got "
                            + scale);
        }
        bounded(
                at + ".trace.blockTokens",
                trace.getBlockTokens(),
                TokenDistribution.MAX_TOKENS,
                problems);
        optionalDuration(at + ".trace.start", trace.getStart(), problems);
        optionalPositiveDuration(at + ".trace.end", trace.getEnd(), problems);
        if (trace.getStart() != null
                && trace.getEnd() != null
                && Durations.validate("", trace.getStart()).isEmpty()
                && Durations.validate("", trace.getEnd()).isEmpty()
                && Durations.parse(trace.getStart()).compareTo(Durations.parse(trace.getEnd()))
                        >= 0) {
            problems.add(
                    at
                            + ".trace.start: must be before trace.end ("
                            + trace.getStart()
                            + " is not before "
                            + trace.getEnd()
                            + ")");
        }
    }

    private static void distribution(String at, TokenDistribution d, List<String> problems) {
        if (d == null) {
            return;
        }
        DistributionType type = d.getType() == null ? DistributionType.FIXED : d.getType();
        switch (type) {
            case FIXED -> {
                if (d.getMean() == null) {
                    problems.add(at + ".mean: type fixed needs mean");
                }
            }
            case UNIFORM -> {
                if (d.getMin() == null || d.getMax() == null) {
                    problems.add(at + ".max: type uniform needs min and max");
                }
            }
            case NORMAL -> {
                if (d.getMean() == null || d.getStddev() == null) {
                    problems.add(at + ".stddev: type normal needs mean and stddev");
                }
            }
        }
        positiveCount(at + ".mean", d.getMean(), problems);
        positiveCount(at + ".min", d.getMin(), problems);
        positiveCount(at + ".max", d.getMax(), problems);
        if (d.getStddev() != null && d.getStddev() < 0) {
            problems.add(at + ".stddev: must not be negative");
        }
        range(at + ".min", d.getMin(), d.getMax(), "max", problems);
    }
}
