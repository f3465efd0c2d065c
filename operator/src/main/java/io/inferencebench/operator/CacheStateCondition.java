package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.StageSummary;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The run's {@code CacheStateVerified} condition from its stages' declared prefix-cache state,
 * decided per stage when it is assembled ({@code prefixCacheVerified}): {@code False} naming every
 * stage whose endpoints were not all reset (or, for a warm state, not all warmed before the stage)
 * or whose replicas' own counters contradict the declared state, {@code Unknown} when the state was
 * established but no counters were read, {@code True} otherwise. No condition without {@code
 * spec.workload.prefixCache}.
 *
 * @param status {@code True}, {@code False} or {@code Unknown}
 * @param reason {@code Verified}, {@code NotReset}, {@code NotWarmed}, {@code UnexpectedHits}
 *     (counters contradict the state, either way) or {@code NoCounters}
 * @param message the stages, endpoints and figures
 */
public record CacheStateCondition(String status, String reason, String message) {

    /** Start of a stage's message when its endpoints were reset but not all warmed. */
    public static final String NOT_WARMED = "not warmed: ";

    /** The condition of a run's assembled stages, or {@code null} when none declared a state. */
    public static CacheStateCondition of(List<StageSummary> results) {
        List<StageSummary> declared =
                results == null
                        ? List.of()
                        : results.stream().filter(r -> r.getPrefixCacheState() != null).toList();
        if (declared.isEmpty()) {
            return null;
        }
        List<StageSummary> contradicted =
                declared.stream()
                        .filter(r -> Boolean.FALSE.equals(r.getPrefixCacheVerified()))
                        .toList();
        if (!contradicted.isEmpty()) {
            List<StageSummary> undeclared =
                    contradicted.stream()
                            .filter(r -> UNDECLARED.equals(r.getPrefixCacheState()))
                            .toList();
            String reason =
                    undeclared.isEmpty()
                            ? "UnexpectedHits"
                            : undeclared.stream()
                                            .allMatch(
                                                    r ->
                                                            r.getPrefixCacheMessage() != null
                                                                    && r.getPrefixCacheMessage()
                                                                            .startsWith(NOT_WARMED))
                                    ? "NotWarmed"
                                    : "NotReset";
            return new CacheStateCondition(
                    "False",
                    reason,
                    contradicted.stream()
                                    .map(
                                            r ->
                                                    "stage "
                                                            + r.getStage()
                                                            + ": "
                                                            + r.getPrefixCacheMessage())
                                    .collect(Collectors.joining("; "))
                            + "; those stages did not start from the declared prefix-cache state,"
                            + " so their latencies are not comparable with those of a run that"
                            + " did");
        }
        List<StageSummary> unread =
                declared.stream().filter(r -> r.getPrefixCacheVerified() == null).toList();
        if (!unread.isEmpty()) {
            return new CacheStateCondition(
                    "Unknown",
                    "NoCounters",
                    "every ready endpoint acknowledged the reset"
                            + (declared.stream()
                                            .anyMatch(r -> "warm".equals(r.getPrefixCacheState()))
                                    ? " and took the warming"
                                    : "")
                            + " before each stage, but "
                            + (unread.size() == declared.size()
                                    ? "no stage's prefix-cache counters were read"
                                    : "the prefix-cache counters of stage(s) "
                                            + unread.stream()
                                                    .map(r -> String.valueOf(r.getStage()))
                                                    .collect(Collectors.joining(", "))
                                            + " were not read")
                            + " (vLLM's prefix_cache_queries_total and prefix_cache_hits_total,"
                            + " with server metrics on) to check it by");
        }
        return new CacheStateCondition(
                "True",
                "Verified",
                "every stage started from the declared "
                        + declared.getFirst().getPrefixCacheState()
                        + " prefix cache on every ready endpoint; hit rates per replica: "
                        + declared.stream()
                                .map(r -> "stage " + r.getStage() + " " + rates(r))
                                .collect(Collectors.joining("; ")));
    }

    private static final String UNDECLARED = "undeclared";

    private static String rates(StageSummary r) {
        Map<String, Double> rates = r.getPrefixCacheHitRateByReplica();
        if (rates == null || rates.isEmpty()) {
            return "(none read)";
        }
        return rates.entrySet().stream()
                        .map(
                                e ->
                                        String.format(
                                                Locale.ROOT,
                                                "%s %.1f %%",
                                                e.getKey(),
                                                100 * e.getValue()))
                        .collect(Collectors.joining(", ", "(", ")"))
                + (r.getPrefixCacheImpliedHitRate() == null
                        ? ""
                        : String.format(
                                Locale.ROOT,
                                " against %.1f %% implied",
                                100 * r.getPrefixCacheImpliedHitRate()));
    }
}
