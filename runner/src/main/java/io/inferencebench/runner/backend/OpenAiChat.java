package io.inferencebench.runner.backend;

import com.fasterxml.jackson.core.JsonGenerator;
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
        OpenAiJson.parse(data, length, nanos, state, true);
    }

    @Override
    public int shortcutEvent(byte[] b, int from, int end, long nanos, ResponseState state) {
        return OpenAiJson.shortcut(b, from, end, nanos, state);
    }

    @Override
    public void parseBody(byte[] body, int length, long nanos, ResponseState state)
            throws IOException {
        OpenAiJson.parse(body, length, nanos, state, true);
    }
}
