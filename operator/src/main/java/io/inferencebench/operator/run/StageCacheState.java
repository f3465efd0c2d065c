package io.inferencebench.operator.run;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.PrefixCacheSpec;
import io.inferencebench.crds.v1alpha1.PrefixRepetitionSpec;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.operator.CacheStateCondition;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.StatusAggregator;
import io.inferencebench.profile.cache.CacheStateCheck;
import io.inferencebench.profile.cache.PrefixCacheReset;
import io.inferencebench.profile.lpg.PrefixCacheHits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The prefix-cache state each stage starts from, with {@code spec.workload.prefixCache}: just
 * before a stage's barrier opens every ready endpoint is reset, and the outcome is kept in {@code
 * status.stagePrefixCache} (a line per stage, beside {@code stageStartTimes}) until the stage is
 * assembled, when it goes into the stage's result and profile. Between the reset and the barrier
 * the runners are idle (every runner finished the stage before), so nothing refills the cache.
 *
 * <p>A warm state has a second step: the endpoints reset ({@code status.stageWarmTargets},
 * published with the barrier) are sent the workload's shared prefixes by the first runner pod,
 * which has the prompts, before the barrier; the barrier is set {@link #WARMING_LEAD} further ahead
 * for it. The pod reports how it went in its part ({@link PartReport#stageWarmedKey}), read when
 * the stage is assembled: a stage whose warming failed or ended after its barrier started
 * undeclared.
 */
final class StageCacheState {

    static final String COLD = "cold";
    static final String WARM = "warm";
    static final String UNDECLARED = "undeclared";

    /** Time the first runner has between a warm stage's publication and its barrier to warm. */
    static final Duration WARMING_LEAD = Duration.ofSeconds(10);

    /** Event reason of a stage whose endpoints were not all reset. */
    static final String NOT_RESET = "PrefixCacheNotReset";

    private StageCacheState() {}

    /** The time a stage's barrier is set further ahead for the warming, zero without one. */
    static Duration warmingLead(BenchmarkRun run) {
        return warm(run) ? WARMING_LEAD : Duration.ZERO;
    }

    private static boolean warm(BenchmarkRun run) {
        PrefixCacheSpec declared = run.getSpec().getWorkload().getPrefixCache();
        return declared != null && declared.getState() == PrefixCacheSpec.State.WARM;
    }

    /**
     * Resets the target's prefix caches before {@code stage} when the run declares a state (unless
     * {@code prefixCache.reset} is false), and names the endpoints to warm when it is warm.
     */
    static void beforeBarrier(RunTurn turn, RunCluster cluster, int stage) {
        BenchmarkRun run = turn.run();
        if (run.getSpec().getWorkload().getPrefixCache() == null) {
            return;
        }
        boolean resets = run.getSpec().getWorkload().getPrefixCache().resetsBeforeStage();
        PrefixCacheReset.Round round;
        try {
            // prefixCache.reset false (warm only): the endpoints to warm, none emptied
            round = resets ? cluster.resetPrefixCache(run) : cluster.prefixCacheEndpoints(run);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            round =
                    new PrefixCacheReset.Round(
                            List.of(new PrefixCacheReset.Outcome("target", null, "interrupted")));
        }
        String line =
                round.failures().isEmpty()
                        ? (warm(run) ? WARM : COLD)
                        : UNDECLARED + ": " + round.describeFailures();
        if (!round.failures().isEmpty()) {
            cluster.event(
                    run,
                    EventRecorder.WARNING,
                    NOT_RESET,
                    "stage "
                            + stage
                            + (resets
                                    ? ": prefix cache not reset: "
                                    : ": prefix cache not warmed: ")
                            + round.describeFailures());
        }
        String targets =
                round.outcomes().stream()
                        .map(PrefixCacheReset.Outcome::target)
                        .collect(java.util.stream.Collectors.joining(","));
        turn.status()
                .apply(
                        s -> {
                            s.setStagePrefixCache(
                                    atStage(
                                            s.getStagePrefixCache(),
                                            stage,
                                            line,
                                            UNDECLARED + ": no reset recorded"));
                            if (warm(run)) {
                                s.setStageWarmTargets(
                                        atStage(s.getStageWarmTargets(), stage, targets, ""));
                            }
                        });
    }

    /** {@code lines} with {@code line} at {@code stage}, gaps filled with {@code gap}. */
    private static List<String> atStage(List<String> lines, int stage, String line, String gap) {
        List<String> updated = new ArrayList<>(lines == null ? List.of() : lines);
        while (updated.size() < stage - 1) {
            updated.add(gap);
        }
        if (updated.size() >= stage) {
            updated.set(stage - 1, line);
        } else {
            updated.add(line);
        }
        return List.copyOf(updated);
    }

    /**
     * Puts the state {@code stage}'s barrier recorded into its result ({@code prefixCacheState},
     * {@code prefixCacheMessage}) and its profile ({@code dimensions.prefix_cache}, as the command
     * line writes it), and checks it against the replicas' own counters ({@code
     * prefixCacheHitRateByReplica}, {@code prefixCacheVerified}) and the rate the workload implies
     * ({@code prefixCacheImpliedHitRate}).
     *
     * @param warmed what the first runner reported of the stage's warming ({@link
     *     PartReport#stageWarmedKey}), or {@code null}
     */
    static void annotate(
            StatusAggregator status,
            BenchmarkRun run,
            int stage,
            ObjectNode profile,
            StageSummary result,
            String warmed) {
        List<String> lines = status.view().getStagePrefixCache();
        if (lines == null || lines.size() < stage) {
            return;
        }
        String line = lines.get(stage - 1);
        String state = line.equals(COLD) || line.equals(WARM) ? line : UNDECLARED;
        String notDeclared = null;
        if (state.equals(UNDECLARED)) {
            int colon = line.indexOf(": ");
            notDeclared = colon < 0 ? line : line.substring(colon + 2);
        } else if (state.equals(WARM) && !PartReport.WARMED.equals(warmed)) {
            state = UNDECLARED;
            notDeclared =
                    CacheStateCondition.NOT_WARMED
                            + (warmed == null
                                    ? "the first runner reported no warming before the stage"
                                    : warmed);
        }
        result.setPrefixCacheState(state);
        PrefixCacheHits hits =
                profile == null
                        ? null
                        : PrefixCacheHits.fromProfile(profile.at("/metrics/prefix_cache"));
        CacheStateCheck.Verification check =
                CacheStateCheck.verify(notDeclared, hits, implied(run));
        result.setPrefixCacheMessage(check.message());
        result.setPrefixCacheVerified(check.verified());
        result.setPrefixCacheHitRateByReplica(check.hitRates().isEmpty() ? null : check.hitRates());
        result.setPrefixCacheImpliedHitRate(check.impliedRate());
        if (profile != null) {
            if (profile.get("dimensions") instanceof ObjectNode dimensions) {
                dimensions.put("prefix_cache", state);
            }
            CacheStateCheck.annotate(profile, check);
        }
    }

    /**
     * The hit rate a run's stages imply: none for a cold stage of prompts that share no prefix,
     * each prompt's prefix share for a warm stage; {@code null} where it depends on which replica
     * served which prompt first (shared prefixes on a cold cache).
     */
    static CacheStateCheck.Implied implied(BenchmarkRun run) {
        var dataset = run.getSpec().getWorkload().getDataset();
        if (warm(run)) {
            PrefixRepetitionSpec prefixes =
                    dataset.getPrefixRepetition() == null
                            ? new PrefixRepetitionSpec()
                            : dataset.getPrefixRepetition();
            return CacheStateCheck.warmImplied(
                    prefixes.resolvedPrefixTokens(), prefixes.resolvedSuffixTokens());
        }
        return dataset.getType().sharesNoPrefix(dataset.getConversation() != null)
                ? CacheStateCheck.COLD_REUSE_FREE
                : null;
    }
}
