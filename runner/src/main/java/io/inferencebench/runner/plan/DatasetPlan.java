package io.inferencebench.runner.plan;

import io.inferencebench.crds.v1alpha1.DatasetSource;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.runner.dataset.FileDatasets;
import io.inferencebench.runner.dataset.LengthDistribution;

/**
 * Where the prompts come from and how they are shaped.
 *
 * @param type random, sharegpt or jsonl
 * @param inputTokens prompt lengths of random prompts, {@code null} for a file dataset
 * @param outputTokens requested output lengths of random prompts, {@code null} for a file dataset
 * @param filters length filters and output override of a file dataset, {@code null} for random
 * @param source the file dataset's source as specified, {@code null} for random
 * @param seed the run's seed (runner pod i adds its own offset)
 */
public record DatasetPlan(
        DatasetType type,
        LengthDistribution inputTokens,
        LengthDistribution outputTokens,
        FileDatasets.Filters filters,
        DatasetSource source,
        long seed) {

    /** Whether the prompts are synthetic. */
    public boolean random() {
        return type == DatasetType.RANDOM;
    }

    /** The name used in logs and profile dimensions: random, sharegpt or jsonl. */
    public String typeName() {
        return type.wireName();
    }
}
