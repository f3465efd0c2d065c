package io.inferencebench.runner.backend;

import io.inferencebench.runner.dataset.Prompt;
import java.io.IOException;

/** OpenAI /v1/completions (vLLM, SGLang, TGI, trtllm-serve and other compatible servers). */
public final class OpenAiCompletions extends OpenAiProtocol {

    public OpenAiCompletions() {
        super(false);
    }

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
                    writeCommon(g, prompt, params);
                });
    }
}
