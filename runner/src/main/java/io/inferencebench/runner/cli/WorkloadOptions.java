package io.inferencebench.runner.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.crds.v1alpha1.ConversationSpec;
import io.inferencebench.crds.v1alpha1.DatasetSource;
import io.inferencebench.crds.v1alpha1.DatasetSpec;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.DistributionType;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.PrefixRepetitionSpec;
import io.inferencebench.crds.v1alpha1.SamplingSpec;
import io.inferencebench.crds.v1alpha1.ThinkTimeDistribution;
import io.inferencebench.crds.v1alpha1.TokenDistribution;
import io.inferencebench.crds.v1alpha1.TraceFormat;
import io.inferencebench.crds.v1alpha1.TraceSpec;
import io.inferencebench.crds.v1alpha1.WeightedModel;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.dataset.ServerTokenizer;
import io.inferencebench.runner.plan.DatasetPlan;
import io.inferencebench.runner.plan.PromptSource;
import io.inferencebench.runner.plan.WireProtocol;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The workload flags (dataset, lengths, streaming, sampling, seed), a picocli mixin ({@code @Mixin
 * WorkloadOptions workload}), laid over the {@code workload} section of a {@code --config} file.
 */
public final class WorkloadOptions {

    private static final ObjectMapper COPY = new ObjectMapper();

    @Option(
            names = "--dataset-name",
            description =
                    "random, prefix_repetition, multi-turn, sharegpt, jsonl or trace (default"
                            + " random; multi-turn sends random prompts as conversations, see"
                            + " --turns and --sessions; trace replays a request trace on its own"
                            + " clock).")
    String datasetName;

    @Option(
            names = "--dataset-path",
            description =
                    "ShareGPT JSON, JSONL or trace file (mooncake JSONL, azure/burstgpt CSV).")
    Path datasetPath;

    @Option(
            names = "--trace-format",
            description =
                    "trace: mooncake, azure or burstgpt (default: told from the file's first"
                            + " line).")
    String traceFormat;

    @Option(
            names = "--trace-time-scale",
            description =
                    "trace: multiply every recorded arrival offset by this (0.5 replays twice as"
                            + " fast; default 1).")
    Double traceTimeScale;

    @Option(
            names = "--trace-start",
            description =
                    "trace: replay requests recorded at or after this point of the trace's clock,"
                            + " from its first request (e.g. 10m).")
    String traceStart;

    @Option(
            names = "--trace-end",
            description =
                    "trace: replay requests recorded before this point of the trace's clock (e.g."
                            + " 1h).")
    String traceEnd;

    @Option(
            names = "--trace-block-size",
            description =
                    "trace: tokens each of a mooncake trace's hash_ids stands for (default 512,"
                            + " Mooncake's).")
    Integer traceBlockSize;

    @Option(
            names = "--random-input-len",
            description = "Input tokens per random prompt (default 1024).")
    Integer randomInputLen;

    @Option(names = "--random-output-len", description = "Output tokens per request (default 128).")
    Integer randomOutputLen;

    @Option(
            names = "--random-range-ratio",
            description = "Uniform lengths in [len*(1-r), len*(1+r)] (default 0 = fixed).")
    Double randomRangeRatio;

    @Option(
            names = "--random-input-stddev",
            description = "Normal input lengths with this standard deviation.")
    Double randomInputStddev;

    @Option(
            names = "--random-output-stddev",
            description = "Normal output lengths with this standard deviation.")
    Double randomOutputStddev;

    @Option(
            names = "--min-input-len",
            description = "Drop dataset prompts shorter than this (tokens).")
    Integer minInputLen;

    @Option(
            names = "--max-input-len",
            description = "Drop dataset prompts longer than this (tokens).")
    Integer maxInputLen;

    @Option(
            names = "--min-output-len",
            description = "Drop dataset prompts whose reply is shorter (tokens).")
    Integer minOutputLen;

    @Option(
            names = "--max-output-len",
            description = "Drop dataset prompts whose reply is longer (tokens).")
    Integer maxOutputLen;

    @Option(
            names = "--prefix-repetition-prefix-len",
            description = "prefix_repetition: tokens of each shared prefix (default 256).")
    Integer prefixLen;

    @Option(
            names = "--prefix-repetition-suffix-len",
            description = "prefix_repetition: tokens of each prompt's own suffix (default 256).")
    Integer suffixLen;

    @Option(
            names = "--prefix-repetition-num-prefixes",
            description =
                    "prefix_repetition: distinct prefixes, prompts spread evenly over them"
                            + " (default 10).")
    Integer numPrefixes;

    @Option(
            names = "--prefix-repetition-output-len",
            description = "prefix_repetition: output tokens per request (default 128).")
    Integer prefixOutputLen;

    @Option(
            names = "--model-mix",
            split = ",",
            description =
                    "Several models or LoRA adapters behind the target, NAME[:WEIGHT] each (default"
                            + " weight 1): every request asks for one, drawn by weight from --seed"
                            + " (a session keeps its model); profiles carry metrics.by_model. In"
                            + " place of --model.")
    java.util.List<String> modelMix;

    @Option(
            names = "--multi-turn",
            description =
                    "sharegpt: replay each conversation turn by turn, the recorded replies in the"
                            + " history (see --turns, --sessions); synthetic conversations are"
                            + " --dataset-name multi-turn.")
    boolean multiTurnShareGpt;

    @Option(
            names = "--turns",
            description =
                    "multi-turn: turns (requests) per session, each carrying the history before"
                            + " it (default 5).")
    Integer turns;

    @Option(
            names = "--think-time",
            description =
                    "multi-turn: pause between a reply and the session's next turn, e.g. 2s or"
                            + " 500ms (default 0s).")
    String thinkTime;

    @Option(
            names = "--think-time-distribution",
            description =
                    "multi-turn: fixed (every pause is --think-time) or exponential (drawn with"
                            + " that mean from --seed); default fixed.")
    String thinkTimeDistribution;

    @Option(
            names = "--output-len",
            description = "For sharegpt/jsonl: ask every request for this many output tokens.")
    Integer outputLen;

    @Option(
            names = "--prompt-format",
            description =
                    "auto, text or token-ids (auto: with random, prefix_repetition or trace prompts, no --tokenizer and a vllm/sglang server whose /tokenize answers, token ids from that tokenizer for the completions API; else text).",
            defaultValue = "auto")
    String promptFormat;

    @Option(names = "--no-stream", description = "Ask for complete (non-streamed) responses.")
    boolean noStream;

    @Option(
            names = "--ignore-eos",
            arity = "0..1",
            fallbackValue = "true",
            description =
                    "Send ignore_eos, so each request generates exactly its output length (an"
                            + " extension of vLLM, SGLang, LMDeploy, TensorRT-LLM; default true for"
                            + " every backend but openai, which sends only OpenAI API fields; as"
                            + " workload.ignoreEos in a BenchmarkRun).")
    Boolean ignoreEos;

    @Option(names = "--temperature", description = "Sampling temperature (default 0).")
    Double temperature;

    @Option(names = "--top-p", description = "Nucleus sampling top_p.")
    Double topP;

    @Option(
            names = "--top-k",
            description = "top_k sampling (an extension: not a field of OpenAI's API).")
    Integer topK;

    @Option(names = "--seed", description = "Seed for prompts and arrivals (default 0).")
    Long seed;

    /**
     * A copy of the config's workload with the flags laid over it. The config's tokenizer is
     * dropped: the command line reads one from {@code --tokenizer}.
     */
    public WorkloadSpec layOver(WorkloadSpec config) {
        WorkloadSpec w =
                config == null ? new WorkloadSpec() : COPY.convertValue(config, WorkloadSpec.class);
        w.setTokenizer(null);
        DatasetSpec d = w.getDataset() == null ? new DatasetSpec() : w.getDataset();
        w.setDataset(d);
        boolean multiTurn = multiTurn();
        if (datasetName != null) {
            d.setType(
                    switch (datasetName.toLowerCase(Locale.ROOT)) {
                        case "random", "multi-turn", "multi_turn" -> DatasetType.RANDOM;
                        case "prefix_repetition" -> DatasetType.PREFIX_REPETITION;
                        case "sharegpt" -> DatasetType.SHAREGPT;
                        case "jsonl" -> DatasetType.JSONL;
                        case "trace" -> DatasetType.TRACE;
                        default ->
                                throw new Main.UsageError(
                                        "--dataset-name: '"
                                                + datasetName
                                                + "' is not one of random, prefix_repetition,"
                                                + " multi-turn, sharegpt, jsonl, trace");
                    });
        }
        DatasetType type = d.getType() == null ? DatasetType.RANDOM : d.getType();
        checkFlags(type);
        if (multiTurnShareGpt && type != DatasetType.SHAREGPT) {
            throw new Main.UsageError(
                    "--multi-turn: applies to --dataset-name sharegpt (synthetic conversations are"
                            + " --dataset-name multi-turn)");
        }
        if (datasetName != null && !multiTurn) {
            // --dataset-name random asks for independent prompts, whatever the config says.
            d.setConversation(null);
        }
        if (multiTurn) {
            d.setConversation(conversationFlags(d.getConversation()));
        } else if (d.getConversation() == null) {
            refuseAny(
                    ": applies only to --dataset-name multi-turn or sharegpt --multi-turn",
                    "--turns",
                    turns,
                    "--think-time",
                    thinkTime,
                    "--think-time-distribution",
                    thinkTimeDistribution);
        } else {
            // The config's conversation, the flags laid over it.
            d.setConversation(conversationFlags(d.getConversation()));
        }
        if (datasetName != null && config != null) {
            // A config's fields of another kind of dataset do not apply to the one asked for.
            if (type.synthetic()) {
                d.setSource(null);
            }
            if (type != DatasetType.RANDOM) {
                d.setInputTokens(null);
            }
            if (type != DatasetType.PREFIX_REPETITION) {
                d.setPrefixRepetition(null);
            }
            if (type != DatasetType.TRACE) {
                d.setTrace(null);
            }
        }
        if (type == DatasetType.TRACE) {
            d.setTrace(traceFlags(d.getTrace()));
        }
        if (type.synthetic() && datasetPath != null) {
            throw new Main.UsageError(
                    "--dataset-path: needs --dataset-name sharegpt or jsonl (with "
                            + type.wireName()
                            + " prompts the file would be ignored)");
        }
        if (type == DatasetType.RANDOM) {
            if (randomRangeRatio != null && !(randomRangeRatio >= 0 && randomRangeRatio < 1)) {
                throw new Main.UsageError(
                        "--random-range-ratio: must be within [0, 1), got " + randomRangeRatio);
            }
            d.setInputTokens(
                    lengths(
                            "--random-input-len",
                            randomInputLen,
                            randomInputStddev,
                            d.getInputTokens(),
                            DatasetSpec.DEFAULT_INPUT_TOKENS));
            d.setOutputTokens(
                    lengths(
                            "--random-output-len",
                            randomOutputLen,
                            randomOutputStddev,
                            d.getOutputTokens(),
                            DatasetSpec.DEFAULT_OUTPUT_TOKENS));
        } else if (type == DatasetType.PREFIX_REPETITION) {
            PrefixRepetitionSpec shape = d.resolvedPrefixRepetition();
            if (prefixLen != null) {
                shape.setPrefixTokens(prefixLen);
            }
            if (suffixLen != null) {
                shape.setSuffixTokens(suffixLen);
            }
            if (numPrefixes != null) {
                shape.setPrefixes(numPrefixes);
            }
            d.setPrefixRepetition(shape);
            if (prefixOutputLen != null) {
                d.setOutputTokens(TokenDistribution.fixed(prefixOutputLen));
            }
        } else {
            if (datasetPath != null) {
                if (!Files.isRegularFile(datasetPath)) {
                    throw new Main.UsageError("--dataset-path: no such file: " + datasetPath);
                }
                DatasetSource source = new DatasetSource();
                source.setUrl(datasetPath.toAbsolutePath().toUri().toString());
                d.setSource(source);
            }
            if (d.getSource() == null) {
                throw new Main.UsageError(
                        "--dataset-path: required for --dataset-name " + type.wireName());
            }
            if (type == DatasetType.TRACE) {
                if (outputLen != null || randomOutputLen != null) {
                    throw new Main.UsageError(
                            (outputLen != null ? "--output-len" : "--random-output-len")
                                    + ": a trace's requests ask for their recorded output length");
                }
            }
            Integer override = outputLen != null ? outputLen : randomOutputLen;
            if (override != null) {
                d.setOutputTokens(TokenDistribution.fixed(override));
            }
        }
        if (minInputLen != null) {
            d.setMinInputTokens(minInputLen);
        }
        if (maxInputLen != null) {
            d.setMaxInputTokens(maxInputLen);
        }
        if (minOutputLen != null) {
            d.setMinOutputTokens(minOutputLen);
        }
        if (maxOutputLen != null) {
            d.setMaxOutputTokens(maxOutputLen);
        }
        if (seed != null) {
            d.setSeed(seed);
        }
        if (modelMix != null) {
            w.setModels(modelMixFlag());
        }
        if (noStream) {
            w.setStreaming(false);
        }
        if (ignoreEos != null) {
            w.setIgnoreEos(ignoreEos);
        }
        if (temperature != null || topP != null || topK != null) {
            if (temperature != null && !(temperature >= 0 && temperature <= 2)) {
                throw new Main.UsageError(
                        "--temperature: must be between 0 and 2, got " + temperature);
            }
            SamplingSpec sampling = w.getSampling() == null ? new SamplingSpec() : w.getSampling();
            if (temperature != null) {
                sampling.setTemperature(temperature);
            }
            if (topP != null) {
                sampling.setTopP(topP);
            }
            if (topK != null) {
                sampling.setTopK(topK);
            }
            w.setSampling(sampling);
        }
        return w;
    }

    /** The models of {@code --model-mix}, each named once with a weight above 0. */
    private java.util.List<WeightedModel> modelMixFlag() {
        java.util.List<WeightedModel> models = new java.util.ArrayList<>();
        java.util.Set<String> names = new java.util.HashSet<>();
        for (String item : modelMix) {
            String text = item.trim();
            int colon = text.lastIndexOf(':');
            String name = colon < 0 ? text : text.substring(0, colon).trim();
            double weight = 1.0;
            if (colon >= 0) {
                try {
                    weight = Double.parseDouble(text.substring(colon + 1).trim());
                } catch (NumberFormatException e) {
                    throw new Main.UsageError(
                            "--model-mix: '"
                                    + TerminalText.oneLine(item)
                                    + "': the weight after ':' is not a number");
                }
            }
            if (name.isEmpty()) {
                throw new Main.UsageError("--model-mix: an entry has no model name");
            }
            if (!(weight > 0) || Double.isInfinite(weight)) {
                throw new Main.UsageError(
                        "--model-mix: " + TerminalText.oneLine(name) + "'s weight must be > 0");
            }
            if (!names.add(name)) {
                throw new Main.UsageError(
                        "--model-mix: " + TerminalText.oneLine(name) + " is listed twice");
            }
            models.add(WeightedModel.of(name, weight));
        }
        if (models.size() > WorkloadSpec.MAX_MODELS) {
            throw new Main.UsageError(
                    "--model-mix: at most " + WorkloadSpec.MAX_MODELS + " models");
        }
        return models;
    }

    /** Whether {@code --model-mix} is given. */
    boolean mixesModels() {
        return modelMix != null;
    }

    /**
     * Whether the flags ask for conversations: {@code --dataset-name multi-turn} or {@code
     * --multi-turn}.
     */
    boolean multiTurn() {
        return multiTurnShareGpt
                || datasetName != null
                        && (datasetName.equalsIgnoreCase("multi-turn")
                                || datasetName.equalsIgnoreCase("multi_turn"));
    }

    /** The {@code --turns} and {@code --think-time*} flags laid over the config's conversation. */
    private ConversationSpec conversationFlags(ConversationSpec fromConfig) {
        ConversationSpec conversation = fromConfig == null ? new ConversationSpec() : fromConfig;
        if (turns != null) {
            positive("--turns", turns);
            if (turns > ConversationSpec.MAX_TURNS) {
                throw new Main.UsageError(
                        "--turns: at most " + ConversationSpec.MAX_TURNS + ", got " + turns);
            }
            conversation.setTurns(turns);
        }
        if (thinkTime != null) {
            conversation.setThinkTime(flagDuration("--think-time", thinkTime));
        }
        if (thinkTimeDistribution != null) {
            ThinkTimeDistribution distribution =
                    ThinkTimeDistribution.byName(thinkTimeDistribution);
            if (distribution == null) {
                throw new Main.UsageError(
                        "--think-time-distribution: '"
                                + thinkTimeDistribution
                                + "' is not one of fixed, exponential");
            }
            conversation.setThinkTimeDistribution(distribution);
        }
        return conversation;
    }

    /** Whether {@code --dataset-name trace} is given. */
    boolean replaysTrace() {
        return "trace".equalsIgnoreCase(datasetName);
    }

    /** The {@code --trace-*} flags laid over the config's trace section. */
    private TraceSpec traceFlags(TraceSpec fromConfig) {
        TraceSpec trace = fromConfig == null ? new TraceSpec() : fromConfig;
        if (traceFormat != null) {
            TraceFormat format = TraceFormat.byName(traceFormat);
            if (format == null) {
                throw new Main.UsageError(
                        "--trace-format: '"
                                + traceFormat
                                + "' is not one of mooncake, azure, burstgpt");
            }
            trace.setFormat(format);
        }
        if (traceTimeScale != null) {
            if (!(traceTimeScale >= TraceSpec.MIN_TIME_SCALE
                    && traceTimeScale <= TraceSpec.MAX_TIME_SCALE)) {
                throw new Main.UsageError(
                        "--trace-time-scale: must be within [0.0001, 10000] (offsets are"
                                + " multiplied by it), got "
                                + traceTimeScale);
            }
            trace.setTimeScale(traceTimeScale);
        }
        if (traceStart != null) {
            trace.setStart(flagDuration("--trace-start", traceStart));
        }
        if (traceEnd != null) {
            trace.setEnd(flagDuration("--trace-end", traceEnd));
        }
        if (traceBlockSize != null) {
            positive("--trace-block-size", traceBlockSize);
            trace.setBlockTokens(traceBlockSize);
        }
        if (trace.getStart() != null
                && trace.getEnd() != null
                && Durations.parse(trace.getStart()).compareTo(Durations.parse(trace.getEnd()))
                        >= 0) {
            throw new Main.UsageError(
                    (traceStart != null ? "--trace-start" : "workload.dataset.trace.start")
                            + ": must be before the end ("
                            + trace.getStart()
                            + " is not before "
                            + trace.getEnd()
                            + ")");
        }
        return trace;
    }

    private static String flagDuration(String flag, String text) {
        try {
            Durations.parse(text.equals("0") ? "0s" : text);
            return text.equals("0") ? "0s" : text;
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(
                    flag + ": '" + text + "' is not a duration; use e.g. 500ms, 30s, 5m, 1h30m");
        }
    }

    /** What the flags give, checked with their names (the spec's rules would name its fields). */
    private void checkFlags(DatasetType type) {
        java.util.Map<String, Integer> counts = new java.util.LinkedHashMap<>();
        counts.put("--output-len", outputLen);
        counts.put("--min-input-len", minInputLen);
        counts.put("--max-input-len", maxInputLen);
        counts.put("--min-output-len", minOutputLen);
        counts.put("--max-output-len", maxOutputLen);
        counts.forEach(
                (flag, value) -> {
                    positive(flag, value);
                    if (value != null && type.synthetic()) {
                        // As with --dataset-path: a flag synthetic prompts would ignore.
                        throw new Main.UsageError(
                                flag
                                        + ": applies to --dataset-name sharegpt or jsonl; "
                                        + type.wireName()
                                        + " prompts take "
                                        + (type == DatasetType.RANDOM
                                                ? "--random-input-len and --random-output-len"
                                                : "the --prefix-repetition-* flags"));
                    }
                });
        java.util.Map<String, Integer> shape = new java.util.LinkedHashMap<>();
        shape.put("--prefix-repetition-prefix-len", prefixLen);
        shape.put("--prefix-repetition-suffix-len", suffixLen);
        shape.put("--prefix-repetition-num-prefixes", numPrefixes);
        shape.put("--prefix-repetition-output-len", prefixOutputLen);
        shape.forEach(
                (flag, value) -> {
                    positive(flag, value);
                    if (value != null && type != DatasetType.PREFIX_REPETITION) {
                        throw new Main.UsageError(
                                flag + ": applies only to --dataset-name prefix_repetition");
                    }
                });
        if (type != DatasetType.TRACE) {
            refuseAny(
                    ": applies only to --dataset-name trace",
                    "--trace-format",
                    traceFormat,
                    "--trace-time-scale",
                    traceTimeScale,
                    "--trace-start",
                    traceStart,
                    "--trace-end",
                    traceEnd,
                    "--trace-block-size",
                    traceBlockSize);
        } else {
            refuseAny(
                    ": a trace's requests keep their recorded lengths; narrow the replay with"
                            + " --trace-start, --trace-end and --num-prompts",
                    "--random-input-len",
                    randomInputLen,
                    "--random-range-ratio",
                    randomRangeRatio,
                    "--random-input-stddev",
                    randomInputStddev,
                    "--random-output-stddev",
                    randomOutputStddev,
                    "--min-input-len",
                    minInputLen,
                    "--max-input-len",
                    maxInputLen,
                    "--min-output-len",
                    minOutputLen,
                    "--max-output-len",
                    maxOutputLen);
        }
        if (type == DatasetType.PREFIX_REPETITION) {
            refuseAny(
                    ": applies to --dataset-name random; prefix_repetition prompts take the"
                            + " --prefix-repetition-* flags",
                    "--random-input-len",
                    randomInputLen,
                    "--random-output-len",
                    randomOutputLen,
                    "--random-range-ratio",
                    randomRangeRatio,
                    "--random-input-stddev",
                    randomInputStddev,
                    "--random-output-stddev",
                    randomOutputStddev);
        }
        if (!type.synthetic()) {
            positive("--random-output-len", randomOutputLen);
        }
        if (minInputLen != null && maxInputLen != null && minInputLen > maxInputLen) {
            throw new Main.UsageError(
                    "--min-input-len: "
                            + minInputLen
                            + " is greater than --max-input-len "
                            + maxInputLen);
        }
        if (minOutputLen != null && maxOutputLen != null && minOutputLen > maxOutputLen) {
            throw new Main.UsageError(
                    "--min-output-len: "
                            + minOutputLen
                            + " is greater than --max-output-len "
                            + maxOutputLen);
        }
        if (topP != null && !(topP > 0 && topP <= 1)) {
            throw new Main.UsageError("--top-p: must be within (0, 1], got " + topP);
        }
        if (topK != null && topK < -1) {
            throw new Main.UsageError("--top-k: must be >= -1 (-1 disables it), got " + topK);
        }
        if (seed != null && seed < 0) {
            throw new Main.UsageError("--seed: must be >= 0, got " + seed);
        }
    }

    /**
     * Refuses the first of the given flags that is set, naming it before {@code why}.
     *
     * @param flagsAndValues a flag's name, then its value, for each flag
     */
    private static void refuseAny(String why, Object... flagsAndValues) {
        for (int i = 0; i < flagsAndValues.length; i += 2) {
            if (flagsAndValues[i + 1] != null) {
                throw new Main.UsageError(flagsAndValues[i] + why);
            }
        }
    }

    private static void positive(String flag, Integer value) {
        if (value != null && value < 1) {
            throw new Main.UsageError(flag + ": must be >= 1, got " + value);
        }
    }

    /**
     * The flags' lengths of random prompts as a spec distribution: {@code --random-*-len} with a
     * standard deviation (normal), a range ratio (uniform) or neither (fixed); without any of them
     * the config's distribution stays.
     */
    private TokenDistribution lengths(
            String flag, Integer mean, Double stddev, TokenDistribution fromConfig, int fallback) {
        if (stddev != null && !(stddev >= 0)) {
            throw new Main.UsageError(
                    flag.replace("-len", "-stddev") + ": must be >= 0, got " + stddev);
        }
        if (mean == null && stddev == null && randomRangeRatio == null) {
            return fromConfig;
        }
        int length =
                mean != null
                        ? mean
                        : (fromConfig != null && fromConfig.getMean() != null
                                ? fromConfig.getMean()
                                : fallback);
        if (length < 1) {
            throw new Main.UsageError(flag + ": must be >= 1, got " + length);
        }
        if (stddev != null) {
            return TokenDistribution.normal(length, stddev);
        }
        double ratio = randomRangeRatio == null ? 0 : randomRangeRatio;
        if (ratio <= 0) {
            return TokenDistribution.fixed(length);
        }
        TokenDistribution uniform = new TokenDistribution();
        uniform.setType(DistributionType.UNIFORM);
        uniform.setMean(length);
        uniform.setMin(Math.max(1, (int) Math.floor(length * (1 - ratio))));
        uniform.setMax((int) Math.ceil(length * (1 + ratio)));
        return uniform;
    }

    /** Whether synthetic prompts are sent as token ids ({@code --prompt-format}). */
    public boolean tokenIds(
            WireProtocol wire,
            boolean synthetic,
            boolean localTokenizer,
            ServerTokenizer serverTokenizer) {
        switch (promptFormat.toLowerCase(Locale.ROOT)) {
            case "text":
                return false;
            case "token-ids":
                if (!wire.protocol().acceptsTokenIds() || !synthetic) {
                    throw new Main.UsageError(
                            "--prompt-format: token-ids needs the completions API and --dataset-name random, prefix_repetition or trace");
                }
                return true;
            case "auto":
                return PromptSource.tokenIdsByDefault(
                        wire, synthetic, localTokenizer, serverTokenizer);
            default:
                throw new Main.UsageError(
                        "--prompt-format: '"
                                + promptFormat
                                + "' is not one of auto, text, token-ids");
        }
    }

    /** Checks {@code --prompt-format} before anything is sent. */
    public void checkPromptFormat() {
        String f = promptFormat.toLowerCase(Locale.ROOT);
        if (!f.equals("auto") && !f.equals("text") && !f.equals("token-ids")) {
            throw new Main.UsageError(
                    "--prompt-format: '" + promptFormat + "' is not one of auto, text, token-ids");
        }
    }

    /**
     * The file of a sharegpt or jsonl dataset on this machine: {@code --dataset-path} (as a file:
     * URL), a file: URL or the inline text of the config.
     */
    public Path datasetFile(DatasetPlan dataset) throws IOException {
        DatasetSource source = dataset.source();
        if (source != null && source.getInline() != null) {
            Path tmp = Files.createTempFile("inferencebench-dataset", ".txt");
            tmp.toFile().deleteOnExit();
            Files.writeString(tmp, source.getInline(), StandardCharsets.UTF_8);
            return tmp;
        }
        String url = source == null ? null : source.getUrl();
        if (url != null && url.startsWith("file:")) {
            Path path = Path.of(java.net.URI.create(url));
            if (!Files.isRegularFile(path)) {
                throw new Main.UsageError(
                        (datasetPath != null ? "--dataset-path" : "workload.dataset.source.url")
                                + ": no such file: "
                                + path);
            }
            return path;
        }
        throw new Main.UsageError(
                "workload.dataset.source: the command line reads datasets from --dataset-path, source.inline or a file: URL");
    }

    /** The flag or field to name when the dataset file cannot be read. */
    public String datasetField() {
        return datasetPath != null ? "--dataset-path" : "workload.dataset.source";
    }
}
