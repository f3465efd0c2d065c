package io.inferencebench.runner.backend;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.runner.dataset.Prompt;
import java.io.IOException;

/** OpenAI /v1/chat/completions. */
public final class OpenAiChat implements Protocol {

    @Override
    public String name() {
        return "openai-chat";
    }

    @Override
    public String defaultPath() {
        return "/v1/chat/completions";
    }

    @Override
    public boolean acceptsTokenIds() {
        return false;
    }

    @Override
    public byte[] requestBody(Prompt prompt, GenerationParams params) throws IOException {
        return Json.object(
                g -> {
                    g.writeStringField("model", params.model());
                    g.writeArrayFieldStart("messages");
                    for (Prompt.ChatMessage m : prompt.chatMessages()) {
                        g.writeStartObject();
                        g.writeStringField("role", m.role());
                        g.writeStringField("content", m.content());
                        g.writeEndObject();
                    }
                    g.writeEndArray();
                    writeCommon(g, prompt, params);
                });
    }

    static void writeCommon(JsonGenerator g, Prompt prompt, GenerationParams params)
            throws IOException {
        if (prompt.maxTokens() > 0) {
            g.writeNumberField("max_tokens", prompt.maxTokens());
        }
        g.writeBooleanField("stream", params.stream());
        if (params.stream()) {
            g.writeObjectFieldStart("stream_options");
            g.writeBooleanField("include_usage", true);
            g.writeEndObject();
        }
        if (params.ignoreEos()) {
            g.writeBooleanField("ignore_eos", true);
        }
        if (params.temperature() != null) {
            g.writeNumberField("temperature", params.temperature());
        }
        if (params.topP() != null) {
            g.writeNumberField("top_p", params.topP());
        }
        if (params.topK() != null) {
            g.writeNumberField("top_k", params.topK());
        }
        Json.writeExtra(g, params.extraBody());
    }

    @Override
    public void parseEvent(byte[] data, int length, long nanos, ResponseState state)
            throws IOException {
        if (Json.isDone(data, length)) {
            state.onDone();
            return;
        }
        JsonNode node = Json.parse(data, length);
        String error = Json.errorMessage(node);
        if (error != null) {
            state.onErrorPayload(error);
            return;
        }
        JsonNode choices = node.get("choices");
        if (choices == null || !choices.isArray()) {
            throw new IOException("chat chunk without a choices array");
        }
        if (!choices.isEmpty()) {
            JsonNode delta = choices.get(0).get("delta");
            if (delta != null) {
                String text = firstText(delta, "content", "reasoning_content", "reasoning");
                if (text != null) {
                    state.onContent(text, nanos);
                }
            }
        }
        Json.usage(node, state);
    }

    @Override
    public void parseBody(byte[] body, int length, long nanos, ResponseState state)
            throws IOException {
        JsonNode node = Json.parse(body, length);
        String error = Json.errorMessage(node);
        if (error != null) {
            state.onErrorPayload(error);
            return;
        }
        JsonNode choices = node.get("choices");
        if (choices == null || !choices.isArray()) {
            throw new IOException("chat completion without a choices array");
        }
        if (!choices.isEmpty()) {
            JsonNode message = choices.get(0).get("message");
            if (message != null) {
                String text = firstText(message, "content", "reasoning_content", "reasoning");
                if (text != null) {
                    state.onContent(text, nanos);
                }
            }
        }
        Json.usage(node, state);
    }

    private static String firstText(JsonNode node, String... fields) {
        for (String field : fields) {
            JsonNode value = node.get(field);
            if (value != null && value.isTextual() && !value.asText().isEmpty()) {
                return value.asText();
            }
        }
        return null;
    }
}
