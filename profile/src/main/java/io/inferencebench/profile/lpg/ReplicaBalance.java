package io.inferencebench.profile.lpg;

import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * How evenly the replicas behind a target served one stage, from each replica's own request counter
 * over the stage window (the server's truth, whatever the client or a proxy did).
 *
 * <p>The judgement: {@code balanced} is false when, among the replicas scraped through the whole
 * window, the busiest served more than {@value #MAX_MIN_RATIO}× the least busy at {@value
 * #JUDGED_PER_REPLICA} or more requests per replica, or one served nothing while an even share
 * would have been {@value #ZERO_JUDGED_PER_REPLICA} or more (the chance of that under even random
 * picks is below (1 - 1/k)^(20k), under 10^-3 for any k). Below those counts there is no verdict
 * (too few requests to tell a skew from chance). A replica scraped for only part of the window
 * (joined or left mid-stage: fewer than {@value #PRESENT_RATIO} of the best-covered replica's
 * scrapes, or its increase left out) is named in {@code partial} and not judged.
 *
 * @param metric the counter the served requests come from, e.g. {@code vllm:request_success_total}
 * @param served requests each replica served in the window (0 for one scraped without the counter)
 * @param partial replicas present for only part of the window, not judged
 * @param balanced the verdict, or {@code null} when there is none
 * @param reason why not balanced, or why there is no verdict; {@code null} when balanced
 */
public record ReplicaBalance(
        String metric,
        Map<String, Long> served,
        List<String> partial,
        Boolean balanced,
        String reason) {

    /** Busiest over least busy above which the shares are uneven. */
    public static final double MAX_MIN_RATIO = 1.25;

    /** Requests per replica (an even share) from which the ratio is judged. */
    public static final int JUDGED_PER_REPLICA = 100;

    /** An even share from which a replica that served nothing makes the stage uneven. */
    public static final int ZERO_JUDGED_PER_REPLICA = 20;

    /** Share of the best-covered replica's scrapes below which a replica was there for part. */
    public static final double PRESENT_RATIO = 0.8;

    /** Each backend's counter of requests served, in the order they are looked for. */
    static final List<String> SERVED_COUNTERS =
            List.of(
                    "vllm:request_success_total",
                    "sglang:num_requests_total",
                    "tgi_request_success",
                    "jetstream_request_success_count_total",
                    "nv_inference_request_success",
                    "trtllm_request_success_total");

    /**
     * The balance of a stage's window, or {@code null} when fewer than two replicas were scraped or
     * none exposes a served-requests counter.
     */
    public static ReplicaBalance of(ServerMetricsReport report) {
        if (report == null || report.perReplica().size() < 2) {
            return null;
        }
        String metric = servedCounter(report);
        if (metric == null) {
            return null;
        }
        ScrapeCoverage coverage = report.coverage();
        int mostScrapes = 0;
        if (coverage != null) {
            for (int n : coverage.succeededByReplica().values()) {
                mostScrapes = Math.max(mostScrapes, n);
            }
        }
        Map<String, Long> served = new TreeMap<>();
        List<String> partial = new ArrayList<>();
        for (Map.Entry<String, List<ServerMetricSummary>> e : report.perReplica().entrySet()) {
            String replica = e.getKey();
            Double increase = null;
            for (ServerMetricSummary s : e.getValue()) {
                if (s.name().equals(metric) && s.increase() != null) {
                    increase = s.increase();
                }
            }
            boolean leftOut = coverage != null && coverage.increasesLeftOut().contains(replica);
            int scrapes =
                    coverage == null ? 0 : coverage.succeededByReplica().getOrDefault(replica, 0);
            if (leftOut || (coverage != null && scrapes < PRESENT_RATIO * mostScrapes)) {
                partial.add(replica);
            }
            if (!leftOut) {
                // a replica scraped in the window without the counter has served nothing yet
                // (vLLM exposes a label set on its first success)
                served.put(replica, increase == null ? 0L : Math.round(increase));
            }
        }
        Map<String, Long> judged = new LinkedHashMap<>(served);
        partial.forEach(judged::remove);
        Verdict verdict = judge(judged);
        return new ReplicaBalance(metric, served, partial, verdict.balanced(), verdict.reason());
    }

    private record Verdict(Boolean balanced, String reason) {}

    /** The verdict on the replicas there for the whole stage. */
    private static Verdict judge(Map<String, Long> judged) {
        if (judged.size() < 2) {
            return new Verdict(null, "fewer than two replicas were there for the whole stage");
        }
        long max = judged.values().stream().mapToLong(Long::longValue).max().orElse(0);
        long min = judged.values().stream().mapToLong(Long::longValue).min().orElse(0);
        double even = judged.values().stream().mapToLong(Long::longValue).average().orElse(0);
        String busiest = keyOf(judged, max);
        String idlest = keyOf(judged, min);
        if (min == 0 && even >= ZERO_JUDGED_PER_REPLICA) {
            return new Verdict(
                    false,
                    String.format(
                            Locale.ROOT,
                            "replica %s served nothing while %s served %d (an even share: %.0f)",
                            idlest,
                            busiest,
                            max,
                            even));
        }
        if (even < JUDGED_PER_REPLICA) {
            return new Verdict(
                    null,
                    String.format(
                            Locale.ROOT,
                            "%.0f requests per replica: fewer than %d to judge",
                            even,
                            JUDGED_PER_REPLICA));
        }
        double ratio = (double) max / min;
        if (ratio > MAX_MIN_RATIO) {
            return new Verdict(
                    false,
                    String.format(
                            Locale.ROOT,
                            "replica %s served %d, %.2fx replica %s's %d (more than %.2fx)",
                            busiest,
                            max,
                            ratio,
                            idlest,
                            min,
                            MAX_MIN_RATIO));
        }
        return new Verdict(true, null);
    }

    /** Each replica's share of the requests served (of those not left out). */
    public Map<String, Double> shares() {
        long total = served.values().stream().mapToLong(Long::longValue).sum();
        Map<String, Double> shares = new TreeMap<>();
        served.forEach((replica, n) -> shares.put(replica, total == 0 ? 0.0 : (double) n / total));
        return shares;
    }

    /**
     * The shares for a terminal column, busiest first, whole percent: {@code 34/33/33 %}; over more
     * than eight replicas the largest and smallest: {@code 12 replicas, 11-6 %}.
     */
    public String display() {
        List<Double> shares = new ArrayList<>(shares().values());
        shares.sort(java.util.Comparator.reverseOrder());
        if (shares.size() > 8) {
            return String.format(
                    Locale.ROOT,
                    "%d replicas, %.0f-%.0f %%",
                    shares.size(),
                    100 * shares.getFirst(),
                    100 * shares.getLast());
        }
        StringBuilder sb = new StringBuilder();
        for (double share : shares) {
            sb.append(sb.isEmpty() ? "" : "/")
                    .append(String.format(Locale.ROOT, "%.0f", 100 * share));
        }
        return sb.append(" %").toString();
    }

    private static String servedCounter(ServerMetricsReport report) {
        for (String name : SERVED_COUNTERS) {
            for (List<ServerMetricSummary> summaries : report.perReplica().values()) {
                for (ServerMetricSummary s : summaries) {
                    if (s.name().equals(name) && s.increase() != null) {
                        return name;
                    }
                }
            }
        }
        return null;
    }

    private static String keyOf(Map<String, Long> counts, long value) {
        return counts.entrySet().stream()
                .filter(e -> e.getValue() == value)
                .map(Map.Entry::getKey)
                .findFirst()
                .orElseThrow();
    }
}
