package io.inferencebench.runner.backend;

import io.inferencebench.runner.dataset.Prompt;
import java.io.IOException;

/** OpenAI /v1/chat/completions. */
public final class OpenAiChat extends OpenAiProtocol {

    public OpenAiChat() {
        super(true);
    }

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
}
