package io.inferencebench.runner.plan;

import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.runner.dataset.FileDatasets;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.dataset.PrefixRepetitionDataset;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.RandomDataset;
import io.inferencebench.runner.dataset.ServerRandomPrompts;
import io.inferencebench.runner.dataset.ServerTokenizer;
import io.inferencebench.runner.dataset.SyntheticTokens;
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
            case SHAREGPT -> FileDatasets.shareGpt(file, count, dataset.filters(), tokenizer, seed);
            case JSONL -> FileDatasets.jsonl(file, count, dataset.filters(), null, tokenizer, seed);
        };
    }

    private static List<Prompt> synthetic(
            DatasetPlan dataset, int count, SyntheticTokens tokens, long seed)
            throws IOException, InterruptedException {
        if (dataset.type() == DatasetType.PREFIX_REPETITION) {
            return PrefixRepetitionDataset.generate(
                    count, dataset.prefixes(), dataset.outputTokens(), tokens, seed);
        }
        return RandomDataset.generate(
                count, dataset.inputTokens(), dataset.outputTokens(), tokens, seed);
    }
}
