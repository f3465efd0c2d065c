package io.inferencebench.runner.backend;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.runner.dataset.Prompt;
import java.io.IOException;

/**
 * Text Generation Inference's native API: {@code /generate_stream} (SSE, one event per token, the
 * last one carrying {@code generated_text} and {@code details}) and {@code /generate}.
 */
public final class TgiGenerate implements Protocol {

    private final boolean stream;

    public TgiGenerate(boolean stream) {
        this.stream = stream;
    }

    @Override
    public String name() {
        return "tgi-generate";
    }

    @Override
    public String defaultPath() {
        return stream ? "/generate_stream" : "/generate";
    }

    @Override
    public boolean acceptsTokenIds() {
        return false;
    }

    @Override
    public byte[] requestBody(Prompt prompt, GenerationParams params) throws IOException {
        return Json.object(
                g -> {
                    g.writeStringField("inputs", prompt.promptText());
                    g.writeObjectFieldStart("parameters");
                    if (prompt.maxTokens() > 0) {
                        g.writeNumberField("max_new_tokens", prompt.maxTokens());
                    }
                    g.writeBooleanField("details", true);
                    // TGI rejects temperature 0; greedy decoding is do_sample=false instead.
                    boolean sample = params.temperature() != null && params.temperature() > 0;
                    g.writeBooleanField("do_sample", sample);
                    if (sample) {
                        g.writeNumberField("temperature", params.temperature());
                    }
                    Json.writeTopPAndTopK(g, params);
                    g.writeEndObject();
                    Json.writeExtra(g, params.extraBody());
                });
    }

    @Override
    public void parseEvent(byte[] data, int length, long nanos, ResponseState state)
            throws IOException {
        if (Json.endsStream(data, length, state)) {
            return;
        }
        JsonNode node = Json.parse(data, length);
        String error = Json.errorMessage(node);
        if (error != null) {
            state.onErrorPayload(error);
            return;
        }
        JsonNode token = node.get("token");
        if (token == null || !token.isObject()) {
            throw new IOException("generate_stream event without a token");
        }
        JsonNode special = token.get("special");
        JsonNode text = token.get("text");
        if ((special == null || !special.asBoolean())
                && text != null
                && text.isTextual()
                && !text.asText().isEmpty()) {
            state.onContent(text.asText(), nanos);
        }
        details(node, state);
        JsonNode generated = node.get("generated_text");
        if (generated != null && !generated.isNull()) {
            state.onDone();
        }
    }

    @Override
    public void parseBody(byte[] body, int length, long nanos, ResponseState state)
            throws IOException {
        JsonNode node = Json.parse(body, length);
        if (node.isArray() && !node.isEmpty()) {
            node = node.get(0);
        }
        String error = Json.errorMessage(node);
        if (error != null) {
            state.onErrorPayload(error);
            return;
        }
        JsonNode generated = node.get("generated_text");
        if (generated == null || !generated.isTextual()) {
            throw new IOException("generate response without generated_text");
        }
        if (!generated.asText().isEmpty()) {
            state.onContent(generated.asText(), nanos);
        }
        details(node, state);
    }

    private static void details(JsonNode node, ResponseState state) {
        JsonNode details = node.get("details");
        if (details != null && details.isObject()) {
            JsonNode generatedTokens = details.get("generated_tokens");
            if (generatedTokens != null && generatedTokens.isNumber()) {
                state.onUsage(-1, generatedTokens.intValue());
            }
        }
    }
}
