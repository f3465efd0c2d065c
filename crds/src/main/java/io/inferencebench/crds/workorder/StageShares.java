package io.inferencebench.crds.workorder;

import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.StageSpec;
import java.util.ArrayList;
import java.util.List;

/** Splits each stage across runner pods. */
public final class StageShares {

    private StageShares() {}

    /**
     * The resolved stages of a load with each pod's share.
     *
     * @param load the load spec
     * @param parallelism number of runner pods, at least 1
     * @return one share per stage, in order
     */
    public static List<StageShare> of(LoadSpec load, int parallelism) {
        return of(load, parallelism, false);
    }

    /**
     * Splits every stage of a load, whose arrivals a trace sets when {@code replaysTrace} ({@link
     * LoadSpec#replayStages}: a replay stage has neither rate nor concurrency).
     *
     * @param load the load spec
     * @param parallelism number of runner pods, at least 1
     * @param replaysTrace whether the workload is a trace
     * @return one share per stage, in order
     */
    public static List<StageShare> of(LoadSpec load, int parallelism, boolean replaysTrace) {
        if (parallelism < 1) {
            throw new IllegalArgumentException("parallelism must be at least 1: " + parallelism);
        }
        List<StageShare> shares = new ArrayList<>();
        List<StageSpec> stages = replaysTrace ? load.replayStages() : load.resolvedStages();
        for (int i = 0; i < stages.size(); i++) {
            StageSpec stage = stages.get(i);
            shares.add(
                    new StageShare(
                            i + 1,
                            stage.getRequestRate(),
                            stage.getConcurrency(),
                            stage.getNumPrompts(),
                            stage.getDuration(),
                            stage.getRequestRate() == null
                                    ? null
                                    : stage.getRequestRate() / parallelism,
                            stage.getConcurrency() == null
                                    ? null
                                    : split(stage.getConcurrency(), parallelism),
                            stage.getNumPrompts() == null
                                    ? null
                                    : split(stage.getNumPrompts(), parallelism)));
        }
        return List.copyOf(shares);
    }

    /**
     * Splits a count into {@code parts} integers differing by at most one, larger ones first.
     *
     * @param total the count
     * @param parts number of parts
     * @return the parts, summing to total
     */
    public static List<Integer> split(int total, int parts) {
        List<Integer> split = new ArrayList<>(parts);
        int base = total / parts;
        int remainder = total % parts;
        for (int i = 0; i < parts; i++) {
            split.add(base + (i < remainder ? 1 : 0));
        }
        return List.copyOf(split);
    }
}
