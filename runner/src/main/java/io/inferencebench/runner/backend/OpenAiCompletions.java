package io.inferencebench.runner.backend;

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
        OpenAiJson.parse(data, length, nanos, state, false);
    }

    @Override
    public int shortcutEvent(byte[] b, int from, int end, long nanos, ResponseState state) {
        return OpenAiJson.shortcut(b, from, end, nanos, state);
    }

    @Override
    public void parseBody(byte[] body, int length, long nanos, ResponseState state)
            throws IOException {
        OpenAiJson.parse(body, length, nanos, state, false);
    }
}
