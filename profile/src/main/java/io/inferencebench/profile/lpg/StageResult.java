package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import io.inferencebench.profile.stats.MetricRecorder;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Everything one runner (or a merge of runners) measured in one load stage.
 *
 * <p>A mutable data holder: the runner fills it during the stage, then it is serialized with
 * Jackson (recorders as compact {@link io.inferencebench.profile.stats.RecorderSnapshot}s, an
 * unbounded rate as {@code "inf"}) into the part ConfigMap, read back by the operator and {@link
 * #merge merged}.
 *
 * <p>Rates, concurrency and prompt counts are this runner's own share; merging adds the shares.
 * Instants are wall-clock epoch nanoseconds (runner pods start on a shared barrier); all durations
 * inside recorders come from {@link System#nanoTime()}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public final class StageResult {

    /** Error classes counted in {@link #errorsByClass}. */
    public static final List<String> ERROR_CLASSES =
            List.of(
                    "connect",
                    "timeout",
                    "tls",
                    "http_429",
                    "http_4xx",
                    "http_5xx",
                    "reset",
                    "malformed_stream",
                    "error_payload",
                    "empty_response",
                    "other");

    /** 0-based index of the stage in the run. */
    public int stageIndex;

    /** Requested arrival rate in req/s; {@link Double#POSITIVE_INFINITY} when unbounded. */
    @JsonSerialize(using = RequestRate.Serializer.class)
    @JsonDeserialize(using = RequestRate.Deserializer.class)
    public double requestedRate = Double.POSITIVE_INFINITY;

    /**
     * Fixed concurrency of a closed-loop stage, or the max-concurrency cap; {@code null} if none.
     */
    public Integer concurrency;

    /** Prompts requested for the stage ({@code 0} for a duration-bounded stage). */
    public long numPromptsRequested;

    /** Requests sent (excluding warm-up requests). */
    public long sent;

    /** Requests that completed successfully. */
    public long completed;

    /** Requests that failed (any error class). */
    public long failed;

    /** Warm-up requests sent and excluded from the statistics. */
    public long warmupExcluded;

    /**
     * Requests aborted because the stage was cancelled (in flight or not yet sent); counted neither
     * as completed nor as failed.
     */
    public long cancelledRequests;

    /** The stage was cancelled before it finished: its figures cover only part of it. */
    public boolean partial;

    /** Failed requests by class; keys from {@link #ERROR_CLASSES}. */
    @JsonSetter(nulls = Nulls.SKIP)
    public Map<String, Long> errorsByClass = new TreeMap<>();

    /**
     * Wall-clock epoch nanos of the first dispatch of the stage; {@code 0} when nothing was sent.
     */
    public long firstDispatchEpochNanos;

    /**
     * Wall-clock epoch nanos of the last dispatch of the stage; {@code 0} when nothing was sent.
     */
    public long lastDispatchEpochNanos;

    /**
     * Requests due in the schedule this stage drew (open loop at a finite rate): every arrival of
     * the seeded schedule inside the stage's bounds (its number of prompts, its duration, or the
     * moment it was cancelled). {@code 0} when the stage had no schedule (closed loop, unbounded
     * rate). With random arrivals this is what the client was asked to send, not the nominal rate
     * times the duration: delivery is judged against it.
     */
    public long due;

    /** Wall-clock epoch nanos of the first due instant of the drawn schedule; {@code 0} if none. */
    public long firstDueEpochNanos;

    /** Wall-clock epoch nanos of the last due instant of the drawn schedule; {@code 0} if none. */
    public long lastDueEpochNanos;

    /** Wall-clock epoch nanos of the last completion (success or failure); {@code 0} if none. */
    public long lastCompletionEpochNanos;

    /** Sum of input (prompt) tokens over successful requests. */
    public long totalInputTokens;

    /** Sum of output tokens over successful requests. */
    public long totalOutputTokens;

    /**
     * Where output token counts came from: {@code usage}, {@code tokenizer} or {@code
     * content_events}.
     */
    public String outputTokenSource;

    /** Where input token counts came from: {@code usage}, {@code tokenizer} or {@code dataset}. */
    public String inputTokenSource;

    /** End-to-end latency per successful request, ms. */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder latencyMs;

    /** Time to first content token, ms. */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder ttftMs;

    /** Inter-token latency (gap between content events), ms. */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder itlMs;

    /** Time per output token after the first, (latency - ttft) / (out - 1), ms. */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder tpotMs;

    /** latency / (input + output tokens), seconds. */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder perTokenLatencySec;

    /** latency / output tokens, ms. */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder perOutputTokenLatencyMs;

    /** Input tokens per successful request. */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder inputLen;

    /** Output tokens per successful request. */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder outputLen;

    /** Due instant to actual send, ms (includes {@link #slotWaitMs}). */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder scheduleLagMs;

    /** Time spent waiting for a max-concurrency slot, ms. */
    @JsonSetter(nulls = Nulls.SKIP)
    public MetricRecorder slotWaitMs;

    /**
     * Successful requests whose response was not an event stream with content (asked for without
     * streaming, or a server that ignored {@code "stream": true}): they have no TTFT, ITL or TPOT
     * and are left out of those statistics.
     */
    public long nonStreamedRequests;

    /** Highest number of requests in flight at once (merge: sum of per-runner peaks). */
    public long inFlightPeak;

    /** TTFT SLO threshold, ms; {@code null} when not configured. */
    public Double sloTtftMs;

    /** TPOT SLO threshold, ms; {@code null} when not configured. */
    public Double sloTpotMs;

    /** End-to-end latency SLO threshold, ms; {@code null} when not configured. */
    public Double sloE2elMs;

    /** Successful requests meeting every configured SLO. */
    public long goodputRequests;

    /** Number of runners merged into this result ({@code 1} for a single runner). */
    public int runnerCount = 1;

    /**
     * The runner's own CPU figures for the stage (merge: the most starved runner's); {@code null}
     * when not measured.
     */
    public RunnerCpu runnerCpu;

    /**
     * The ramp of a ramped stage and its windows; {@code null} for a constant rate. A merge of
     * several runners has none: each runner's windows are its own.
     */
    public RampProfile rampUp;

    /**
     * The sessions and per-turn figures of a stage sent as conversations, or {@code null} for a
     * stage of independent prompts; a merge of several runners adds their sessions and turns.
     */
    public ConversationProfile conversation;

    /**
     * Per model of a model mix (requests, outcomes, latencies), or {@code null} when every request
     * asked for one model; a merge of several runners adds their models up.
     */
    public ModelMixProfile byModel;

    /**
     * Requests sent to each address the runner spread its load over ({@code ip:port}, in the order
     * given), or {@code null} when it sent to one URL's host. A merge sums them per address, and
     * has none unless every runner spread.
     */
    public Map<String, Long> requestsPerAddress;

    /**
     * Addresses that joined the spread during the stage, with the seconds after the stage start
     * they did (the earliest over runners in a merge), or {@code null} when none did.
     */
    public Map<String, Double> addressesJoinedAt;

    /** Addresses that left the spread during the stage, as {@link #addressesJoinedAt}. */
    public Map<String, Double> addressesLeftAt;

    /**
     * Requests of a spread stage moved to another address because theirs refused the connection
     * (nothing had been sent), or {@code null} when it sent to one URL's host; summed in a merge.
     */
    public Long requestsRedirected;

    /** Creates an empty result with recorders of {@link MetricRecorder#DEFAULT_SAMPLE_CAP}. */
    public StageResult() {
        this(MetricRecorder.DEFAULT_SAMPLE_CAP);
    }

    /**
     * Creates an empty result.
     *
     * @param sampleCap exact-sample cap for every recorder
     */
    public StageResult(int sampleCap) {
        latencyMs = new MetricRecorder(sampleCap);
        ttftMs = new MetricRecorder(sampleCap);
        itlMs = new MetricRecorder(sampleCap);
        tpotMs = new MetricRecorder(sampleCap);
        perTokenLatencySec = new MetricRecorder(sampleCap);
        perOutputTokenLatencyMs = new MetricRecorder(sampleCap);
        inputLen = new MetricRecorder(sampleCap);
        outputLen = new MetricRecorder(sampleCap);
        scheduleLagMs = new MetricRecorder(sampleCap);
        slotWaitMs = new MetricRecorder(sampleCap);
    }

    /**
     * Counts one failure of the given class (also increments {@link #failed}).
     *
     * @param errorClass one of {@link #ERROR_CLASSES}; anything else counts as {@code other}
     */
    public void countFailure(String errorClass) {
        String key = ERROR_CLASSES.contains(errorClass) ? errorClass : "other";
        errorsByClass.merge(key, 1L, Long::sum);
        failed++;
    }

    /**
     * Share of the requests that finished (completed or failed) that failed; cancelled requests are
     * neither.
     *
     * @return the ratio in [0, 1], {@code 0} when nothing finished
     */
    @JsonIgnore
    public double failureRatio() {
        long finished = completed + failed;
        return finished == 0 ? 0.0 : (double) failed / finished;
    }

    /**
     * The failure classes that occurred, most frequent first, e.g. {@code "http_429: 32, timeout:
     * 3"}.
     *
     * @return the classes with their counts; empty when nothing failed
     */
    @JsonIgnore
    public String failureClassesText() {
        if (errorsByClass == null) {
            return "";
        }
        return errorsByClass.entrySet().stream()
                .filter(e -> e.getValue() != null && e.getValue() > 0)
                .sorted(
                        Map.Entry.<String, Long>comparingByValue()
                                .reversed()
                                .thenComparing(Map.Entry.comparingByKey()))
                .map(e -> e.getKey() + ": " + e.getValue())
                .collect(java.util.stream.Collectors.joining(", "));
    }

    /**
     * All recorders by their Java field name, in a fixed order.
     *
     * @return the recorders
     */
    @JsonIgnore
    public Map<String, MetricRecorder> recorders() {
        Map<String, MetricRecorder> m = new java.util.LinkedHashMap<>();
        m.put("latencyMs", latencyMs);
        m.put("ttftMs", ttftMs);
        m.put("itlMs", itlMs);
        m.put("tpotMs", tpotMs);
        m.put("perTokenLatencySec", perTokenLatencySec);
        m.put("perOutputTokenLatencyMs", perOutputTokenLatencyMs);
        m.put("inputLen", inputLen);
        m.put("outputLen", outputLen);
        m.put("scheduleLagMs", scheduleLagMs);
        m.put("slotWaitMs", slotWaitMs);
        return m;
    }

    /**
     * Whether every recorder still gives exact percentiles.
     *
     * @return {@code true} when all recorders are exact (or empty)
     */
    @JsonIgnore
    public boolean allExact() {
        for (MetricRecorder r : recorders().values()) {
            if (r.count() > 0 && !r.exact()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Merges the results of several runners for the same stage into a new result: counts, tokens,
     * rates, concurrency and prompt counts add up; the time window spans all runners; recorders
     * merge (exact moments, histogram percentiles when more than one runner contributed).
     *
     * @param parts results of one stage from one or more runners
     * @return the merged result
     * @throws IllegalArgumentException when {@code parts} is empty or mixes stage indexes
     */
    public static StageResult merge(List<StageResult> parts) {
        if (parts == null || parts.isEmpty()) {
            throw new IllegalArgumentException("no stage results to merge");
        }
        StageResult first = parts.get(0);
        int cap = first.latencyMs.exactSampleCap();
        StageResult m = new StageResult(cap);
        m.stageIndex = first.stageIndex;
        m.requestedRate = 0.0;
        m.runnerCount = 0;
        m.sloTtftMs = first.sloTtftMs;
        m.sloTpotMs = first.sloTpotMs;
        m.sloE2elMs = first.sloE2elMs;
        TreeSet<String> outputSources = new TreeSet<>();
        TreeSet<String> inputSources = new TreeSet<>();
        Integer concurrency = null;
        for (StageResult p : parts) {
            if (p.stageIndex != first.stageIndex) {
                throw new IllegalArgumentException(
                        "cannot merge stage " + p.stageIndex + " into stage " + first.stageIndex);
            }
            m.requestedRate += p.requestedRate;
            if (p.concurrency != null) {
                concurrency = (concurrency == null ? 0 : concurrency) + p.concurrency;
            }
            m.numPromptsRequested += p.numPromptsRequested;
            m.sent += p.sent;
            m.completed += p.completed;
            m.failed += p.failed;
            m.warmupExcluded += p.warmupExcluded;
            m.cancelledRequests += p.cancelledRequests;
            m.partial |= p.partial;
            if (p.errorsByClass != null) {
                p.errorsByClass.forEach((k, v) -> m.errorsByClass.merge(k, v, Long::sum));
            }
            m.firstDispatchEpochNanos =
                    minNonZero(m.firstDispatchEpochNanos, p.firstDispatchEpochNanos);
            m.lastDispatchEpochNanos = Math.max(m.lastDispatchEpochNanos, p.lastDispatchEpochNanos);
            m.lastCompletionEpochNanos =
                    Math.max(m.lastCompletionEpochNanos, p.lastCompletionEpochNanos);
            m.due += p.due;
            m.firstDueEpochNanos = minNonZero(m.firstDueEpochNanos, p.firstDueEpochNanos);
            m.lastDueEpochNanos = Math.max(m.lastDueEpochNanos, p.lastDueEpochNanos);
            m.totalInputTokens += p.totalInputTokens;
            m.totalOutputTokens += p.totalOutputTokens;
            if (p.outputTokenSource != null) {
                outputSources.add(p.outputTokenSource);
            }
            if (p.inputTokenSource != null) {
                inputSources.add(p.inputTokenSource);
            }
            Map<String, MetricRecorder> target = m.recorders();
            p.recorders()
                    .forEach(
                            (name, recorder) -> {
                                if (recorder != null) {
                                    target.get(name).merge(recorder);
                                }
                            });
            m.inFlightPeak += p.inFlightPeak;
            m.goodputRequests += p.goodputRequests;
            m.nonStreamedRequests += p.nonStreamedRequests;
            m.runnerCount += Math.max(1, p.runnerCount);
            if (!Objects.equals(p.sloTtftMs, first.sloTtftMs)
                    || !Objects.equals(p.sloTpotMs, first.sloTpotMs)
                    || !Objects.equals(p.sloE2elMs, first.sloE2elMs)) {
                throw new IllegalArgumentException(
                        "runners of stage " + first.stageIndex + " used different SLO thresholds");
            }
        }
        m.concurrency = concurrency;
        // A runner pod with nothing to send in the stage reports an empty result without a ramp; it
        // ramped nothing, so only the others' ramps add up.
        m.rampUp =
                RampProfile.merge(
                        parts.stream()
                                .filter(p -> p.rampUp != null || p.sent > 0)
                                .map(p -> p.rampUp)
                                .toList());
        if (parts.stream().allMatch(p -> p.requestsPerAddress != null)) {
            m.requestsPerAddress = new java.util.LinkedHashMap<>();
            for (StageResult p : parts) {
                p.requestsPerAddress.forEach((k, v) -> m.requestsPerAddress.merge(k, v, Long::sum));
            }
            m.addressesJoinedAt = earliest(parts.stream().map(p -> p.addressesJoinedAt).toList());
            m.addressesLeftAt = earliest(parts.stream().map(p -> p.addressesLeftAt).toList());
            m.requestsRedirected =
                    parts.stream().allMatch(p -> p.requestsRedirected != null)
                            ? parts.stream().mapToLong(p -> p.requestsRedirected).sum()
                            : null;
        }
        m.runnerCpu = RunnerCpu.worst(parts.stream().map(p -> p.runnerCpu).toList());
        m.byModel =
                ModelMixProfile.merge(
                        parts.stream()
                                .filter(p -> p.byModel != null || p.sent > 0)
                                .map(p -> p.byModel)
                                .toList());
        // As with ramps: a pod with nothing to send in the stage ran no conversation.
        m.conversation =
                ConversationProfile.merge(
                        parts.stream()
                                .filter(p -> p.conversation != null || p.sent > 0)
                                .map(p -> p.conversation)
                                .toList());
        m.outputTokenSource = outputSources.isEmpty() ? null : String.join("+", outputSources);
        m.inputTokenSource = inputSources.isEmpty() ? null : String.join("+", inputSources);
        return m;
    }

    /**
     * Per address the earliest of the runners' instants (each applied a change when it heard of
     * it), or {@code null} when none has any.
     */
    private static Map<String, Double> earliest(List<Map<String, Double>> perRunner) {
        Map<String, Double> merged = new TreeMap<>();
        for (Map<String, Double> one : perRunner) {
            if (one != null) {
                one.forEach((address, at) -> merged.merge(address, at, Math::min));
            }
        }
        return merged.isEmpty() ? null : merged;
    }

    private static long minNonZero(long a, long b) {
        if (a == 0) {
            return b;
        }
        if (b == 0) {
            return a;
        }
        return Math.min(a, b);
    }
}
