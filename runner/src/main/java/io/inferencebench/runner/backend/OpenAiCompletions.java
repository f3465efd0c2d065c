package io.inferencebench.runner.backend;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.runner.dataset.Prompt;
import java.io.IOException;

/** OpenAI /v1/completions (vLLM, SGLang, TGI, trtllm-serve and other compatible servers). */
public final class OpenAiCompletions implements Protocol {

    @Override
    public String name() {
        return "openai-completions";
    }

    @Override
    public String defaultPath() {
        return "/v1/completions";
    }

    @Override
    public boolean acceptsTokenIds() {
        return true;
    }

    @Override
    public byte[] requestBody(Prompt prompt, GenerationParams params) throws IOException {
        return Json.object(
                g -> {
                    g.writeStringField("model", params.model());
                    if (prompt.tokenIds() != null) {
                        g.writeFieldName("prompt");
                        g.writeArray(prompt.tokenIds(), 0, prompt.tokenIds().length);
                    } else {
                        g.writeStringField("prompt", prompt.promptText());
                    }
                    OpenAiChat.writeCommon(g, prompt, params);
                });
    }

    @Override
    public void parseEvent(byte[] data, int length, long nanos, ResponseState state)
            throws IOException {
        if (Json.isDone(data, length)) {
            state.onDone();
            return;
        }
        parse(Json.parse(data, length), nanos, state);
    }

    @Override
    public void parseBody(byte[] body, int length, long nanos, ResponseState state)
            throws IOException {
        parse(Json.parse(body, length), nanos, state);
    }

    private static void parse(JsonNode node, long nanos, ResponseState state) throws IOException {
        String error = Json.errorMessage(node);
        if (error != null) {
            state.onErrorPayload(error);
            return;
        }
        JsonNode choices = node.get("choices");
        if (choices == null || !choices.isArray()) {
            throw new IOException("completion without a choices array");
        }
        if (!choices.isEmpty()) {
            JsonNode text = choices.get(0).get("text");
            if (text != null && text.isTextual() && !text.asText().isEmpty()) {
                state.onContent(text.asText(), nanos);
            }
        }
        Json.usage(node, state);
    }
}
