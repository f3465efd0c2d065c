package io.inferencebench.runner.plan;

import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.TraceSpec;
import io.inferencebench.runner.dataset.ConversationDataset;
import io.inferencebench.runner.dataset.FileDatasets;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.dataset.PrefixRepetitionDataset;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.RandomDataset;
import io.inferencebench.runner.dataset.ServerRandomPrompts;
import io.inferencebench.runner.dataset.ServerTokenizer;
import io.inferencebench.runner.dataset.SyntheticTokens;
import io.inferencebench.runner.dataset.TraceDataset;
import io.inferencebench.runner.dataset.TraceFile;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * The prompts of a {@link DatasetPlan}, the same way for both roads; only where a file dataset is
 * found differs (a flag or an inline source on the command line, a mounted or downloaded file in a
 * pod).
 */
public final class PromptSource {

    private PromptSource() {}

    /**
     * Whether synthetic prompts are sent as token ids without being asked: only ids the server's
     * own tokenizer made (blind ids may not exist in the model), to a vLLM or SGLang completions
     * API.
     */
    public static boolean tokenIdsByDefault(
            WireProtocol wire,
            boolean synthetic,
            boolean localTokenizer,
            ServerTokenizer serverTokenizer) {
        return synthetic
                && !localTokenizer
                && serverTokenizer != null
                && wire.protocol().acceptsTokenIds()
                && (wire.backend().equals("vllm") || wire.backend().equals("sglang"));
    }

    /** Synthetic prompts built with the server's tokenizer endpoints. */
    public static List<Prompt> fromServer(
            DatasetPlan dataset, int count, boolean tokenIds, ServerTokenizer server, long seed)
            throws IOException, InterruptedException {
        return synthetic(dataset, count, ServerRandomPrompts.tokens(server, tokenIds), seed);
    }

    /**
     * Synthetic prompts made here, or those of a file dataset.
     *
     * @param file the file of a sharegpt or jsonl dataset; ignored for synthetic prompts
     */
    public static List<Prompt> load(
            DatasetPlan dataset,
            Path file,
            int count,
            boolean tokenIds,
            HfTokenizer tokenizer,
            long seed)
            throws IOException, InterruptedException {
        return switch (dataset.type()) {
            case RANDOM, PREFIX_REPETITION ->
                    synthetic(dataset, count, RandomDataset.local(tokenIds, tokenizer), seed);
            case SHAREGPT ->
                    dataset.conversation() == null
                            ? FileDatasets.shareGpt(file, count, dataset.filters(), tokenizer, seed)
                            : FileDatasets.shareGptConversations(
                                    file,
                                    Math.max(1, count / dataset.conversation().turns()),
                                    dataset.conversation().turns(),
                                    dataset.filters(),
                                    tokenizer,
                                    seed);
            case JSONL -> FileDatasets.jsonl(file, count, dataset.filters(), null, tokenizer, seed);
            case TRACE ->
                    throw new IllegalArgumentException(
                            "a trace's prompts come with its arrival times: see PromptSource.trace");
        };
    }

    /**
     * A trace read from {@code file} and the prompts of this runner's requests, in order.
     *
     * @param trace the requests of the whole replay
     * @param mine this runner's share of them (the whole replay on the command line)
     * @param prompts one per request of {@code mine}
     */
    public record TracePrompts(TraceFile trace, TraceFile mine, List<Prompt> prompts) {

        /** This runner's plan bound to its share of the replay. */
        public RunPlan bind(RunPlan plan) {
            long[] whole = trace.offsetsNanos();
            return plan.replaying(mine.offsetsNanos(), whole.length, whole[whole.length - 1]);
        }
    }

    /**
     * Reads the trace of {@code dataset} and makes its requests' prompts.
     *
     * @param cap the most requests replayed ({@link RunPlan#traceCap}), {@code 0} for all of its
     *     window (at most {@link RunPlan#MAX_PROMPTS})
     * @param tokens how synthetic tokens are made ({@link #tokens})
     * @param tokenizer counts recorded prompt text, or {@code null}
     * @param runSeed the run's seed, from which every hash's tokens are drawn
     * @param index this runner's index among {@code pods} (0 of 1 on the command line): it sends
     *     the requests at positions index, index + pods, ...
     */
    public static TracePrompts trace(
            DatasetPlan dataset,
            Path file,
            long cap,
            SyntheticTokens tokens,
            HfTokenizer tokenizer,
            long runSeed,
            int index,
            int pods)
            throws IOException, InterruptedException {
        TraceSpec spec = dataset.trace();
        TraceFile trace =
                TraceFile.read(
                        file,
                        spec.getFormat(),
                        new TraceFile.Window(
                                spec.getStart() == null ? null : Durations.parse(spec.getStart()),
                                spec.getEnd() == null ? null : Durations.parse(spec.getEnd()),
                                cap,
                                RunPlan.MAX_PROMPTS));
        TraceFile mine = trace.share(index, pods);
        return new TracePrompts(
                trace,
                mine,
                mine.requests().isEmpty()
                        ? List.of()
                        : TraceDataset.prompts(
                                mine,
                                spec.resolvedBlockTokens(),
                                tokens,
                                tokenizer,
                                runSeed,
                                dataset.seed()));
    }

    /**
     * How synthetic tokens are made: with the server's tokenizer endpoints when there are some,
     * else here (ids, text a local tokenizer counts, or common words).
     *
     * @param server the server's tokenizer endpoints, or {@code null}
     */
    public static SyntheticTokens tokens(
            ServerTokenizer server, boolean tokenIds, HfTokenizer tokenizer)
            throws IOException, InterruptedException {
        return server != null
                ? ServerRandomPrompts.tokens(server, tokenIds)
                : RandomDataset.local(tokenIds, tokenizer);
    }

    /**
     * What warms a prefix cache before each stage ({@code prefixCache.state: warm}): the shared
     * prefixes of the {@code count} prompts of a prefix_repetition dataset, each alone as a prompt;
     * empty for a dataset that declares no shared prefix.
     *
     * @param tokens how the prompts' synthetic tokens were made ({@link #tokens})
     */
    public static List<Prompt> warmingPrompts(
            DatasetPlan dataset, int count, SyntheticTokens tokens)
            throws IOException, InterruptedException {
        return dataset.type() == DatasetType.PREFIX_REPETITION
                ? PrefixRepetitionDataset.warmingPrompts(count, dataset.prefixes(), tokens)
                : List.of();
    }

    private static List<Prompt> synthetic(
            DatasetPlan dataset, int count, SyntheticTokens tokens, long seed)
            throws IOException, InterruptedException {
        if (dataset.conversation() != null) {
            int turns = dataset.conversation().turns();
            return ConversationDataset.generate(
                    Math.max(1, count / turns),
                    turns,
                    dataset.inputTokens(),
                    dataset.outputTokens(),
                    tokens,
                    seed);
        }
        if (dataset.type() == DatasetType.PREFIX_REPETITION) {
            return PrefixRepetitionDataset.generate(
                    count, dataset.prefixes(), dataset.outputTokens(), tokens, seed);
        }
        return RandomDataset.generate(
                count, dataset.inputTokens(), dataset.outputTokens(), tokens, seed);
    }
}
