package io.inferencebench.profile.lpg;

import java.time.Instant;
import java.util.Map;

/**
 * What the profile says about the run besides the measurements: LPG's {@code dimensions} and {@code
 * config}.
 *
 * @param backend backend name as in LPG ({@code vllm}, {@code sglang}, {@code tgi}, {@code
 *     jetstream}, {@code triton}, {@code openai})
 * @param modelId model sent in requests, e.g. {@code google/gemma-7b}
 * @param tokenizerId tokenizer used for token counts (often the model id)
 * @param modelServer model server name for {@code config.model_server} (often the backend)
 * @param startTime run start (UTC); used for {@code date} and {@code start_time} when the stage has
 *     no dispatch instant
 * @param runName BenchmarkRun name, {@code null} for CLI runs
 * @param namespace namespace, {@code null} for CLI runs
 * @param parallelism number of runner pods (or {@code 1})
 * @param runnerVersion runner version string
 * @param extraDimensions further string dimensions, copied into {@code dimensions}
 */
public record ProfileContext(
        String backend,
        String modelId,
        String tokenizerId,
        String modelServer,
        Instant startTime,
        String runName,
        String namespace,
        int parallelism,
        String runnerVersion,
        Map<String, String> extraDimensions) {

    /** Normalizes {@code null} extra dimensions to an empty map. */
    public ProfileContext {
        extraDimensions = extraDimensions == null ? Map.of() : Map.copyOf(extraDimensions);
    }

    /**
     * This context with one more dimension (replacing one of the same name), e.g. a state that
     * differs from stage to stage.
     */
    public ProfileContext withDimension(String name, String value) {
        Map<String, String> dimensions = new java.util.HashMap<>(extraDimensions);
        dimensions.put(name, value);
        return new ProfileContext(
                backend,
                modelId,
                tokenizerId,
                modelServer,
                startTime,
                runName,
                namespace,
                parallelism,
                runnerVersion,
                dimensions);
    }

    /**
     * The last path segment of the model id ({@code google/gemma-7b} gives {@code gemma-7b}).
     *
     * @return the model basename, {@code "model"} when unknown or only slashes
     */
    public String modelBasename() {
        if (modelId == null || modelId.isBlank()) {
            return "model";
        }
        String trimmed = modelId.replaceAll("/+$", "");
        int slash = trimmed.lastIndexOf('/');
        String basename = slash >= 0 ? trimmed.substring(slash + 1) : trimmed;
        return basename.isBlank() ? "model" : basename;
    }
}
