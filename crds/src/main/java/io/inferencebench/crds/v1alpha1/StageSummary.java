package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** The result of one stage; the full LPG profile is in status.profiles and the output ConfigMap. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StageSummary {

    @JsonPropertyDescription("1-based stage number.")
    private Integer stage;

    @JsonPropertyDescription("Requested rate, requests/s; absent for concurrency stages.")
    private Double requestRate;

    @JsonPropertyDescription("Requested concurrency; absent for rate stages.")
    private Integer concurrency;

    @JsonPropertyDescription("Start barrier instant (RFC 3339).")
    private String startTime;

    @JsonPropertyDescription("Last completion instant (RFC 3339).")
    private String endTime;

    @JsonPropertyDescription("Requests sent.")
    private Long sent;

    @JsonPropertyDescription(
            "Requests due in the schedule the stage drew (rate stages): with random arrivals"
                    + " (poisson, gamma) the draw asks for more or fewer than the nominal rate,"
                    + " and delivery is judged against what it asked for.")
    private Long requestsDue;

    @JsonPropertyDescription("Requests completed successfully.")
    private Long completed;

    @JsonPropertyDescription("Requests failed.")
    private Long failed;

    @JsonPropertyDescription("Achieved send rate, requests/s.")
    private Double achievedRate;

    @JsonPropertyDescription(
            "Rate of the schedule the stage drew, first to last due instant, requests/s: the"
                    + " requested rate for constant arrivals, the draw's own for random ones.")
    private Double scheduledRate;

    @JsonPropertyDescription("Completed requests per second of benchmark time.")
    private Double throughput;

    @JsonPropertyDescription("Output tokens per second of benchmark time.")
    private Double outputTokensPerSecond;

    @JsonPropertyDescription("First dispatch to last completion, seconds.")
    private Double benchmarkTimeSeconds;

    @JsonPropertyDescription("Time to first token, ms.")
    private LatencySummary ttftMs;

    @JsonPropertyDescription("Time per output token after the first, ms.")
    private LatencySummary tpotMs;

    @JsonPropertyDescription("Inter-token latency, ms.")
    private LatencySummary itlMs;

    @JsonPropertyDescription("End-to-end request latency, ms.")
    private LatencySummary latencyMs;

    @JsonPropertyDescription("99th percentile of send time minus due time, ms.")
    private Double scheduleLagP99Ms;

    @JsonPropertyDescription(
            "Every request due in the drawn schedule sent, achieved rate within 5 % of the drawn"
                    + " schedule's rate (scheduledRate, not the nominal one), p99 schedule lag at"
                    + " most 100 ms, failed requests at most spec.load.maxFailureRatio of the"
                    + " finished ones and no runner out of CPU. Absent when the stage was too"
                    + " short to judge (reason ScheduleTooShort).")
    private Boolean loadDelivered;

    @JsonPropertyDescription(
            "Why loadDelivered is what it is: Delivered, TooManyFailures, RunnerSaturated,"
                    + " RateNotAchieved, ScheduleLagged, ConcurrencyLimited (a max-concurrency cap"
                    + " held the schedule back) or ScheduleTooShort (indeterminate) - the first"
                    + " rule that failed.")
    private String loadDeliveredReason;

    @JsonPropertyDescription("Every rule that failed, in the order of loadDeliveredReason's list.")
    private java.util.List<String> loadDeliveredReasons;

    @JsonPropertyDescription(
            "The figures behind loadDeliveredReason when the load was not delivered, naming every"
                    + " rule that failed and its limit.")
    private String loadDeliveredMessage;

    @JsonPropertyDescription(
            "Whether the replicas behind the target served even shares of the stage, by their own"
                    + " request counters over the stage window: false when the busiest served"
                    + " more than 1.25x the least busy at 100 or more requests per replica, or one"
                    + " served nothing; absent with fewer than two replicas scraped or too few"
                    + " requests to judge (loadBalancedMessage says which). Each profile's"
                    + " metrics.replica_balance has the counts.")
    private Boolean loadBalanced;

    @JsonPropertyDescription("Why loadBalanced is false or absent, with the replicas and counts.")
    private String loadBalancedMessage;

    @JsonPropertyDescription(
            "Each replica's share of the requests it served in the stage, busiest first, e.g."
                    + " 34/33/33 % (over 8 replicas: the largest and smallest).")
    private String replicaShares;

    @JsonPropertyDescription(
            "Prompt tokens the servers found in their prefix caches over the prompt tokens they"
                    + " looked up, in the stage window, summed over the replicas scraped (vLLM's"
                    + " prefix_cache_hits_total and prefix_cache_queries_total); absent without"
                    + " those counters or with nothing looked up. Per replica: each profile's"
                    + " metrics.prefix_cache.")
    private Double prefixCacheHitRate;

    @JsonPropertyDescription(
            "With spec.workload.prefixCache: cold when every ready endpoint's prefix cache was"
                    + " reset before the stage, undeclared when one was not (prefixCacheMessage"
                    + " names it).")
    private String prefixCacheState;

    @JsonPropertyDescription(
            "The endpoints whose prefix cache was not reset, and why; or the replicas whose own"
                    + " counters contradict the declared state (prefixCacheVerified false).")
    private String prefixCacheMessage;

    @JsonPropertyDescription(
            "Each replica's prefix-cache hit rate over the stage window, by its own counters"
                    + " (vLLM's prefix_cache_hits_total over prefix_cache_queries_total), keyed by"
                    + " replica; absent without those counters.")
    private java.util.Map<String, Double> prefixCacheHitRateByReplica;

    @JsonPropertyDescription(
            "The prefix-cache hit rate the workload implies for each replica, counted in tokens:"
                    + " 0 for a cold stage of prompts that share no prefix, each prompt's prefix"
                    + " share for a warm stage of prefix_repetition prompts; absent where it"
                    + " depends on which replica served which prompt first. A replica further"
                    + " from it than the stated tolerance makes prefixCacheVerified false.")
    private Double prefixCacheImpliedHitRate;

    @JsonPropertyDescription(
            "With spec.workload.prefixCache: true when every ready endpoint was reset before the"
                    + " stage and no replica's own counters contradict it; false when an endpoint"
                    + " was not reset, or when a replica found more than 5 % of its prompt tokens"
                    + " cached in a stage whose prompts share no prefix (random prompts without"
                    + " conversations: from an empty cache they can hit nothing), naming it in"
                    + " prefixCacheMessage; absent when the replicas' counters were not read.")
    private Boolean prefixCacheVerified;

    @JsonPropertyDescription("Failed requests as a share of finished (completed + failed) ones.")
    private Double failureRatio;

    @JsonPropertyDescription(
            "Failed requests by class (connect, timeout, tls, http_429, http_4xx, http_5xx, reset,"
                    + " malformed_stream, error_payload, empty_response, other); only classes that"
                    + " occurred.")
    private java.util.Map<String, Long> errorsByClass;

    @JsonPropertyDescription(
            "Share of requests meeting every SLO objective (when spec.slo is set).")
    private Double sloAttainment;

    @JsonPropertyDescription("sloAttainment >= spec.slo.minAttainment.")
    private Boolean sloMet;

    @JsonPropertyDescription(
            "How statistics were computed: exact (one runner, all samples) or merged (across runners: moments exact; a percentile exact where every runner sent that metric's samples, else from the merged histograms, within 0.1 %).")
    private String statistics;

    @JsonPropertyDescription("Key of this stage's profile in the output ConfigMap.")
    private String profileKey;

    @JsonPropertyDescription(
            "Key of this stage's Benchmark Report v0.2 in the output ConfigMap, beside the profile"
                    + " (when spec.output.formats includes br0.2).")
    private String benchmarkReportKey;

    public Integer getStage() {
        return stage;
    }

    public void setStage(Integer stage) {
        this.stage = stage;
    }

    public Double getRequestRate() {
        return requestRate;
    }

    public void setRequestRate(Double requestRate) {
        this.requestRate = requestRate;
    }

    public Integer getConcurrency() {
        return concurrency;
    }

    public void setConcurrency(Integer concurrency) {
        this.concurrency = concurrency;
    }

    public String getStartTime() {
        return startTime;
    }

    public void setStartTime(String startTime) {
        this.startTime = startTime;
    }

    public String getEndTime() {
        return endTime;
    }

    public void setEndTime(String endTime) {
        this.endTime = endTime;
    }

    public Long getSent() {
        return sent;
    }

    public void setSent(Long sent) {
        this.sent = sent;
    }

    public Long getCompleted() {
        return completed;
    }

    public void setCompleted(Long completed) {
        this.completed = completed;
    }

    public Long getFailed() {
        return failed;
    }

    public void setFailed(Long failed) {
        this.failed = failed;
    }

    public Double getAchievedRate() {
        return achievedRate;
    }

    public void setAchievedRate(Double achievedRate) {
        this.achievedRate = achievedRate;
    }

    public Double getThroughput() {
        return throughput;
    }

    public void setThroughput(Double throughput) {
        this.throughput = throughput;
    }

    public Double getOutputTokensPerSecond() {
        return outputTokensPerSecond;
    }

    public void setOutputTokensPerSecond(Double outputTokensPerSecond) {
        this.outputTokensPerSecond = outputTokensPerSecond;
    }

    public Double getBenchmarkTimeSeconds() {
        return benchmarkTimeSeconds;
    }

    public void setBenchmarkTimeSeconds(Double benchmarkTimeSeconds) {
        this.benchmarkTimeSeconds = benchmarkTimeSeconds;
    }

    public LatencySummary getTtftMs() {
        return ttftMs;
    }

    public void setTtftMs(LatencySummary ttftMs) {
        this.ttftMs = ttftMs;
    }

    public LatencySummary getTpotMs() {
        return tpotMs;
    }

    public void setTpotMs(LatencySummary tpotMs) {
        this.tpotMs = tpotMs;
    }

    public LatencySummary getItlMs() {
        return itlMs;
    }

    public void setItlMs(LatencySummary itlMs) {
        this.itlMs = itlMs;
    }

    public LatencySummary getLatencyMs() {
        return latencyMs;
    }

    public void setLatencyMs(LatencySummary latencyMs) {
        this.latencyMs = latencyMs;
    }

    public Double getScheduleLagP99Ms() {
        return scheduleLagP99Ms;
    }

    public void setScheduleLagP99Ms(Double scheduleLagP99Ms) {
        this.scheduleLagP99Ms = scheduleLagP99Ms;
    }

    public Boolean getLoadDelivered() {
        return loadDelivered;
    }

    public void setLoadDelivered(Boolean loadDelivered) {
        this.loadDelivered = loadDelivered;
    }

    public Boolean getLoadBalanced() {
        return loadBalanced;
    }

    public void setLoadBalanced(Boolean loadBalanced) {
        this.loadBalanced = loadBalanced;
    }

    public String getLoadBalancedMessage() {
        return loadBalancedMessage;
    }

    public void setLoadBalancedMessage(String loadBalancedMessage) {
        this.loadBalancedMessage = loadBalancedMessage;
    }

    public String getReplicaShares() {
        return replicaShares;
    }

    public void setReplicaShares(String replicaShares) {
        this.replicaShares = replicaShares;
    }

    public Double getPrefixCacheHitRate() {
        return prefixCacheHitRate;
    }

    public void setPrefixCacheHitRate(Double prefixCacheHitRate) {
        this.prefixCacheHitRate = prefixCacheHitRate;
    }

    public String getPrefixCacheState() {
        return prefixCacheState;
    }

    public void setPrefixCacheState(String prefixCacheState) {
        this.prefixCacheState = prefixCacheState;
    }

    public Double getPrefixCacheImpliedHitRate() {
        return prefixCacheImpliedHitRate;
    }

    public void setPrefixCacheImpliedHitRate(Double prefixCacheImpliedHitRate) {
        this.prefixCacheImpliedHitRate = prefixCacheImpliedHitRate;
    }

    public java.util.Map<String, Double> getPrefixCacheHitRateByReplica() {
        return prefixCacheHitRateByReplica;
    }

    public void setPrefixCacheHitRateByReplica(
            java.util.Map<String, Double> prefixCacheHitRateByReplica) {
        this.prefixCacheHitRateByReplica = prefixCacheHitRateByReplica;
    }

    public Boolean getPrefixCacheVerified() {
        return prefixCacheVerified;
    }

    public void setPrefixCacheVerified(Boolean prefixCacheVerified) {
        this.prefixCacheVerified = prefixCacheVerified;
    }

    public String getPrefixCacheMessage() {
        return prefixCacheMessage;
    }

    public void setPrefixCacheMessage(String prefixCacheMessage) {
        this.prefixCacheMessage = prefixCacheMessage;
    }

    public String getLoadDeliveredReason() {
        return loadDeliveredReason;
    }

    public void setLoadDeliveredReason(String loadDeliveredReason) {
        this.loadDeliveredReason = loadDeliveredReason;
    }

    public String getLoadDeliveredMessage() {
        return loadDeliveredMessage;
    }

    public void setLoadDeliveredMessage(String loadDeliveredMessage) {
        this.loadDeliveredMessage = loadDeliveredMessage;
    }

    public Double getSloAttainment() {
        return sloAttainment;
    }

    public void setSloAttainment(Double sloAttainment) {
        this.sloAttainment = sloAttainment;
    }

    public Boolean getSloMet() {
        return sloMet;
    }

    public void setSloMet(Boolean sloMet) {
        this.sloMet = sloMet;
    }

    public String getStatistics() {
        return statistics;
    }

    public void setStatistics(String statistics) {
        this.statistics = statistics;
    }

    public String getProfileKey() {
        return profileKey;
    }

    public void setProfileKey(String profileKey) {
        this.profileKey = profileKey;
    }

    public String getBenchmarkReportKey() {
        return benchmarkReportKey;
    }

    public void setBenchmarkReportKey(String benchmarkReportKey) {
        this.benchmarkReportKey = benchmarkReportKey;
    }

    public Double getFailureRatio() {
        return failureRatio;
    }

    public void setFailureRatio(Double failureRatio) {
        this.failureRatio = failureRatio;
    }

    public java.util.Map<String, Long> getErrorsByClass() {
        return errorsByClass;
    }

    public void setErrorsByClass(java.util.Map<String, Long> errorsByClass) {
        this.errorsByClass = errorsByClass;
    }

    public Long getRequestsDue() {
        return requestsDue;
    }

    public void setRequestsDue(Long requestsDue) {
        this.requestsDue = requestsDue;
    }

    public Double getScheduledRate() {
        return scheduledRate;
    }

    public void setScheduledRate(Double scheduledRate) {
        this.scheduledRate = scheduledRate;
    }

    public java.util.List<String> getLoadDeliveredReasons() {
        return loadDeliveredReasons;
    }

    public void setLoadDeliveredReasons(java.util.List<String> loadDeliveredReasons) {
        this.loadDeliveredReasons = loadDeliveredReasons;
    }
}
