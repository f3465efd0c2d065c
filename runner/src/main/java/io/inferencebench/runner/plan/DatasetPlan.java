package io.inferencebench.runner.plan;

import io.inferencebench.crds.v1alpha1.DatasetSource;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.TraceSpec;
import io.inferencebench.runner.dataset.FileDatasets;
import io.inferencebench.runner.dataset.LengthDistribution;
import io.inferencebench.runner.dataset.PrefixRepetitionDataset;
import io.inferencebench.runner.engine.Conversations;

/**
 * Where the prompts come from and how they are shaped.
 *
 * @param type random, prefix_repetition, sharegpt or jsonl
 * @param inputTokens prompt lengths of random prompts, {@code null} otherwise
 * @param prefixes the shared prefixes of prefix_repetition prompts, {@code null} otherwise
 * @param outputTokens requested output lengths of synthetic prompts, {@code null} for a file
 *     dataset
 * @param filters length filters and output override of a file dataset, {@code null} for synthetic
 *     prompts
 * @param source the file dataset's source as specified, {@code null} for synthetic prompts
 * @param trace how a trace is read and replayed, {@code null} for any other dataset
 * @param seed the run's seed (runner pod i adds its own offset; the prefixes keep the run's)
 * @param conversation the sessions random prompts are sent as, {@code null} for independent prompts
 */
public record DatasetPlan(
        DatasetType type,
        LengthDistribution inputTokens,
        PrefixRepetitionDataset.Shape prefixes,
        LengthDistribution outputTokens,
        FileDatasets.Filters filters,
        DatasetSource source,
        TraceSpec trace,
        long seed,
        Conversations conversation) {

    /** Whether the prompts' tokens are made up to lengths (synthetic prompts, a trace's). */
    public boolean tokensMadeUp() {
        return type.tokensMadeUp();
    }

    /** Whether a stage's prompts share no prefix ({@link DatasetType#sharesNoPrefix}). */
    public boolean reuseFree() {
        return type.sharesNoPrefix(conversation != null);
    }

    /** Whether the prompts are synthetic (no file to read). */
    public boolean synthetic() {
        return type.synthetic();
    }

    /** This plan with another seed for the pod's own draws; the prefixes keep the run's seed. */
    public DatasetPlan withSeed(long podSeed) {
        return new DatasetPlan(
                type,
                inputTokens,
                prefixes,
                outputTokens,
                filters,
                source,
                trace,
                podSeed,
                conversation);
    }

    /** The name used in logs and profile dimensions: random, sharegpt, ... */
    public String typeName() {
        return type.wireName();
    }
}
