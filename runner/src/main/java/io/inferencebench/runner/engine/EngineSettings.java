package io.inferencebench.runner.engine;

import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.Protocol;
import java.time.Duration;

/**
 * What a {@link LoadEngine} sends and how it records it: one value, so the command line, a runner
 * pod and the self warm-up build their engines alike instead of passing a long list of arguments in
 * an order each caller must get right.
 *
 * @param protocol request and response format
 * @param params the generation parameters of every request (model, streaming, sampling)
 * @param path the request path on the target
 * @param slo goodput thresholds a request is judged by
 * @param sampleCap most samples kept per metric (reservoir size)
 * @param seed seeds the arrival schedules and the prompt order
 * @param requestTimeout per-request timeout
 * @param conversations the prompts' sessions when they are sent as conversations, else {@code null}
 * @param models the models each request draws one of, or {@code null} when every request asks for
 *     the model of {@code params}
 */
public record EngineSettings(
        Protocol protocol,
        GenerationParams params,
        String path,
        Slo slo,
        int sampleCap,
        long seed,
        Duration requestTimeout,
        Conversations conversations,
        ModelMix models) {

    /** Settings of an engine whose prompts are independent requests. */
    public EngineSettings(
            Protocol protocol,
            GenerationParams params,
            String path,
            Slo slo,
            int sampleCap,
            long seed,
            Duration requestTimeout) {
        this(protocol, params, path, slo, sampleCap, seed, requestTimeout, null, null);
    }
}
