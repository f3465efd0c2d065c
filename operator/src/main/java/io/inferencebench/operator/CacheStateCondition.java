package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.StageSummary;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The run's {@code CacheStateVerified} condition from its stages' declared prefix-cache state,
 * decided per stage when it is assembled ({@code prefixCacheVerified}): {@code False} naming every
 * stage whose endpoints were not all reset or whose replicas' own counters contradict a cold start,
 * {@code Unknown} when the resets were acknowledged but no counters were read, {@code True}
 * otherwise. No condition without {@code spec.workload.prefixCache}.
 *
 * @param status {@code True}, {@code False} or {@code Unknown}
 * @param reason {@code Verified}, {@code NotReset}, {@code UnexpectedHits} or {@code NoCounters}
 * @param message the stages, endpoints and figures
 */
public record CacheStateCondition(String status, String reason, String message) {

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
            boolean notReset =
                    contradicted.stream().anyMatch(r -> !"cold".equals(r.getPrefixCacheState()));
            return new CacheStateCondition(
                    "False",
                    notReset ? "NotReset" : "UnexpectedHits",
                    contradicted.stream()
                                    .map(
                                            r ->
                                                    "stage "
                                                            + r.getStage()
                                                            + ": "
                                                            + r.getPrefixCacheMessage())
                                    .collect(Collectors.joining("; "))
                            + "; those stages did not start from the declared cold cache, so their"
                            + " latencies are not comparable with a cold run's");
        }
        List<StageSummary> unread =
                declared.stream().filter(r -> r.getPrefixCacheVerified() == null).toList();
        if (!unread.isEmpty()) {
            return new CacheStateCondition(
                    "Unknown",
                    "NoCounters",
                    "every ready endpoint acknowledged the reset before each stage, but "
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
                "every stage started from a cold prefix cache on every ready endpoint; hit rates"
                        + " per replica: "
                        + declared.stream()
                                .map(r -> "stage " + r.getStage() + " " + rates(r))
                                .collect(Collectors.joining("; ")));
    }

    private static String rates(StageSummary r) {
        Map<String, Double> rates = r.getPrefixCacheHitRateByReplica();
        if (rates == null || rates.isEmpty()) {
            return "(none read)";
        }
        return rates.entrySet().stream()
                .map(e -> String.format(Locale.ROOT, "%s %.1f %%", e.getKey(), 100 * e.getValue()))
                .collect(Collectors.joining(", ", "(", ")"));
    }
}
