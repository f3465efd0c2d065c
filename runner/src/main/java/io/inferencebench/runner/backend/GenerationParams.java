package io.inferencebench.runner.backend;

import java.util.Map;

/**
 * Request parameters shared by every prompt of a run.
 *
 * @param model model name sent in the body (OpenAI APIs)
 * @param stream ask for a streamed (SSE) response
 * @param ignoreEos ask the server to generate exactly max_tokens (an extension of vLLM, SGLang and
 *     others: {@link RequestFields})
 * @param temperature null leaves the server default
 * @param extraBody further top-level body fields, added as given
 */
public record GenerationParams(
        String model,
        boolean stream,
        boolean ignoreEos,
        Double temperature,
        Double topP,
        Integer topK,
        Map<String, Object> extraBody) {

    public GenerationParams {
        extraBody = extraBody == null ? Map.of() : Map.copyOf(extraBody);
    }

    public GenerationParams withModel(String newModel) {
        return new GenerationParams(
                newModel, stream, ignoreEos, temperature, topP, topK, extraBody);
    }
}
