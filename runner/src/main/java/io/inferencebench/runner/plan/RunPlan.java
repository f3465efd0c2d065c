package io.inferencebench.runner.plan;

import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.engine.EngineSettings;
import io.inferencebench.runner.engine.ModelMix;
import io.inferencebench.runner.engine.Slo;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.http.TlsOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What the engine runs, resolved from a BenchmarkRun-shaped spec by {@link PlanResolver}: a value,
 * so the command line and a runner pod given the same spec can be compared whole.
 *
 * <p>Not in it: the base URL (the operator resolves a Service, the command line takes {@code
 * --base-url} or {@code target.url}), credentials, and what only one road has (the command line's
 * output and engine flags, a pod's part ConfigMaps).
 *
 * @param wire backend, request format, path and streaming
 * @param model the model to ask for, or {@code null} to discover it ({@link ModelDiscovery})
 * @param headers extra request headers (no credentials)
 * @param tls certificate checks of an https target
 * @param dataset the prompts
 * @param ignoreEos whether requests ask the server to ignore end-of-sequence (the spec's
 *     workload.ignoreEos, else {@link
 *     io.inferencebench.runner.backend.RequestFields#ignoreEosByDefault})
 * @param temperature sampling temperature
 * @param topP nucleus sampling, or {@code null}
 * @param topK top-k sampling, or {@code null}
 * @param stages the stages in order (a runner pod: its share of each, {@code null} for none)
 * @param maxConcurrency cap on requests in flight of rate stages and the warm-up, or {@code null}
 * @param warmupRequests requests sent before the first stage and excluded from results
 * @param requestTimeout per-request timeout
 * @param cooldown pause between stages
 * @param maxFailureRatio share of failed requests above which a stage did not deliver its load
 * @param slo thresholds for goodput
 * @param models the models each request draws one of, or {@code null} when every request asks for
 *     {@code model}
 * @param repeats how many times over {@code stages} runs one list of stages ({@code load.repeats},
 *     1 without)
 */
public record RunPlan(
        WireProtocol wire,
        String model,
        Map<String, String> headers,
        TlsOptions tls,
        DatasetPlan dataset,
        boolean ignoreEos,
        Double temperature,
        Double topP,
        Integer topK,
        List<StagePlan> stages,
        Integer maxConcurrency,
        int warmupRequests,
        Duration requestTimeout,
        Duration cooldown,
        double maxFailureRatio,
        Slo slo,
        ModelMix models,
        int repeats) {

    public RunPlan {
        headers = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(headers));
        // A pod's stage without a share is null, which List.copyOf refuses.
        stages = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(stages));
    }

    /** Whether the model is to be discovered from the server. */
    public boolean discoverModel() {
        return model == null;
    }

    /**
     * One runner pod's share of this plan.
     *
     * @param shares the pod's stages ({@code null} where its share is empty)
     * @param podCap the pod's share of {@link #maxConcurrency}, or {@code null}
     * @param podWarmups the pod's share of the warm-up requests
     * @param podSeed the pod's seed (its own stream of prompts and arrivals)
     */
    public RunPlan share(List<StagePlan> shares, Integer podCap, int podWarmups, long podSeed) {
        return new RunPlan(
                wire,
                model,
                headers,
                tls,
                dataset.withSeed(podSeed),
                ignoreEos,
                temperature,
                topP,
                topK,
                shares,
                podCap,
                podWarmups,
                requestTimeout,
                cooldown,
                maxFailureRatio,
                slo,
                models,
                repeats);
    }

    /** Whether the stages send a trace's requests (bound by {@link #replaying} once it is read). */
    public boolean replaysTrace() {
        return stages.stream().anyMatch(s -> s != null && s.replay() != null);
    }

    /**
     * The most of a trace's requests any stage sends: the largest stage's {@code numPrompts}, or
     * {@code 0} when a stage has no cap (it may send the whole trace).
     */
    public long traceCap() {
        long cap = 0;
        for (StagePlan p : stages) {
            if (p == null || p.numPrompts() <= 0) {
                return 0;
            }
            cap = Math.max(cap, p.numPrompts());
        }
        return cap;
    }

    /**
     * This plan with its stages bound to the trace read: each sends the trace's requests (see
     * {@link StagePlan#replaying}) at their mean rate.
     *
     * @param recordedNanos each request's recorded offset, in the order of the prompts
     */
    public RunPlan replaying(long[] recordedNanos) {
        return replaying(
                recordedNanos, recordedNanos.length, recordedNanos[recordedNanos.length - 1]);
    }

    /**
     * This plan of one runner pod bound to its share of the trace read: each replay stands for its
     * share of the whole replay's mean rate, so the pods' rates add up to it.
     *
     * @param recordedNanos this pod's requests' recorded offsets from the whole replay's first
     * @param wholeCount requests of the whole replay
     * @param wholeSpanNanos recorded offset of the whole replay's last request
     */
    public RunPlan replaying(long[] recordedNanos, int wholeCount, long wholeSpanNanos) {
        List<StagePlan> bound = new java.util.ArrayList<>();
        for (StagePlan s : stages) {
            if (s == null || s.replay() == null) {
                bound.add(s);
                continue;
            }
            Double nominal = null;
            if (!s.closedLoop()) {
                double span = wholeSpanNanos * s.replay().timeScale() / 1e9;
                double wholeMean =
                        wholeCount < 2 || span <= 0
                                ? Double.POSITIVE_INFINITY
                                : (wholeCount - 1) / span;
                nominal = wholeMean * recordedNanos.length / wholeCount;
            }
            bound.add(s.replaying(recordedNanos, nominal));
        }
        return new RunPlan(
                wire,
                model,
                headers,
                tls,
                dataset,
                ignoreEos,
                temperature,
                topP,
                topK,
                bound,
                maxConcurrency,
                warmupRequests,
                requestTimeout,
                cooldown,
                maxFailureRatio,
                slo,
                models,
                repeats);
    }

    /** This plan without what runner pods share out (stages, cap, warm-up, seed), to compare. */
    public RunPlan withoutShares() {
        return share(List.of(), null, 0, 0);
    }

    /** The generation parameters of every request, for the given (possibly discovered) model. */
    public GenerationParams generation(String modelName) {
        return new GenerationParams(
                modelName, wire.stream(), ignoreEos, temperature, topP, topK, null);
    }

    /**
     * The settings of an engine that runs this plan.
     *
     * @param params the generation parameters ({@link #generation}) of the model asked for
     * @param sampleCap most samples kept per metric
     */
    public EngineSettings engine(GenerationParams params, int sampleCap) {
        return new EngineSettings(
                wire.protocol(),
                params,
                wire.path(),
                slo,
                sampleCap,
                dataset.seed(),
                requestTimeout,
                dataset.conversation(),
                models);
    }

    /**
     * Prompts to prepare: the largest stage (times the turns of a session, for conversations), 1000
     * for a stage bounded by duration only; a trace's requests up to the largest cap of its stages
     * (all, up to {@link #MAX_PROMPTS}, when a stage has none).
     */
    public int datasetSize() {
        if (replaysTrace()) {
            long cap = traceCap();
            return (int) (cap == 0 ? MAX_PROMPTS : Math.min(cap, MAX_PROMPTS));
        }
        long max = 1;
        for (StagePlan p : stages) {
            if (p != null) {
                max = Math.max(max, p.numPrompts() > 0 ? p.numPrompts() : DURATION_STAGE_PROMPTS);
            }
        }
        if (dataset.conversation() != null) {
            // A stage's numPrompts counts sessions: every turn of each is a prompt.
            return (int) Math.min(max * dataset.conversation().turns(), MAX_PROMPTS);
        }
        return (int) Math.min(max, MAX_PROMPTS);
    }

    /** Prompts prepared for a stage bounded by duration only. */
    public static final int DURATION_STAGE_PROMPTS = 1000;

    /** Upper bound of prompts held in memory. */
    public static final int MAX_PROMPTS = 200_000;
}
