package io.inferencebench.operator.run;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.profile.cache.ColdCacheCheck;
import io.inferencebench.profile.cache.PrefixCacheReset;
import io.inferencebench.profile.lpg.PrefixCacheHits;
import java.util.ArrayList;
import java.util.List;

/**
 * The prefix-cache state each stage starts from, with {@code spec.workload.prefixCache}: just
 * before a stage's barrier opens every ready endpoint is reset, and the outcome is kept in {@code
 * status.stagePrefixCache} (a line per stage, beside {@code stageStartTimes}) until the stage is
 * assembled, when it goes into the stage's result and profile. Between the reset and the barrier
 * the runners are idle (every runner finished the stage before), so nothing refills the cache.
 */
final class StageCacheState {

    static final String COLD = "cold";
    static final String UNDECLARED = "undeclared";

    /** Event reason of a stage whose endpoints were not all reset. */
    static final String NOT_RESET = "PrefixCacheNotReset";

    private StageCacheState() {}

    /** Resets the target's prefix caches before {@code stage} when the run declares a state. */
    static void beforeBarrier(RunTurn turn, RunCluster cluster, int stage) {
        BenchmarkRun run = turn.run();
        if (run.getSpec().getWorkload().getPrefixCache() == null) {
            return;
        }
        PrefixCacheReset.Round round;
        try {
            round = cluster.resetPrefixCache(run);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            round =
                    new PrefixCacheReset.Round(
                            List.of(new PrefixCacheReset.Outcome("target", null, "interrupted")));
        }
        String line =
                round.failures().isEmpty() ? COLD : UNDECLARED + ": " + round.describeFailures();
        if (!round.failures().isEmpty()) {
            cluster.event(
                    run,
                    EventRecorder.WARNING,
                    NOT_RESET,
                    "stage " + stage + ": prefix cache not reset: " + round.describeFailures());
        }
        turn.status()
                .apply(
                        s -> {
                            List<String> lines =
                                    new ArrayList<>(
                                            s.getStagePrefixCache() == null
                                                    ? List.of()
                                                    : s.getStagePrefixCache());
                            while (lines.size() < stage - 1) {
                                lines.add(UNDECLARED + ": no reset recorded");
                            }
                            if (lines.size() >= stage) {
                                lines.set(stage - 1, line);
                            } else {
                                lines.add(line);
                            }
                            s.setStagePrefixCache(List.copyOf(lines));
                        });
    }

    /**
     * Puts the state {@code stage}'s barrier recorded into its result ({@code prefixCacheState},
     * {@code prefixCacheMessage}) and its profile ({@code dimensions.prefix_cache}, as the command
     * line writes it), and checks it against the replicas' own counters ({@code
     * prefixCacheHitRateByReplica}, {@code prefixCacheVerified}).
     *
     * @param reuseFree whether the stage's prompts share no prefix (see {@link #reuseFree})
     */
    static void annotate(
            StatusAggregator status,
            int stage,
            ObjectNode profile,
            StageSummary result,
            boolean reuseFree) {
        List<String> lines = status.view().getStagePrefixCache();
        if (lines == null || lines.size() < stage) {
            return;
        }
        String line = lines.get(stage - 1);
        String state = line.equals(COLD) ? COLD : UNDECLARED;
        result.setPrefixCacheState(state);
        String notReset = null;
        if (!state.equals(COLD)) {
            int colon = line.indexOf(": ");
            notReset = colon < 0 ? line : line.substring(colon + 2);
        }
        PrefixCacheHits hits =
                profile == null
                        ? null
                        : PrefixCacheHits.fromProfile(profile.at("/metrics/prefix_cache"));
        ColdCacheCheck.Verification check = ColdCacheCheck.verify(notReset, hits, reuseFree);
        result.setPrefixCacheMessage(check.message());
        result.setPrefixCacheVerified(check.verified());
        result.setPrefixCacheHitRateByReplica(check.hitRates().isEmpty() ? null : check.hitRates());
        if (profile != null && profile.get("dimensions") instanceof ObjectNode dimensions) {
            dimensions.put("prefix_cache", state);
        }
    }

    /** Whether a run's prompts share no prefix within a stage ({@code sharesNoPrefix}). */
    static boolean reuseFree(BenchmarkRun run) {
        var dataset = run.getSpec().getWorkload().getDataset();
        return dataset.getType().sharesNoPrefix(dataset.getConversation() != null);
    }
}
