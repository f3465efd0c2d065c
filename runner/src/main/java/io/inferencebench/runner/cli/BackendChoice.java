package io.inferencebench.runner.cli;

import io.inferencebench.runner.backend.OpenAiChat;
import io.inferencebench.runner.backend.OpenAiCompletions;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.backend.TgiGenerate;
import java.util.List;
import java.util.Locale;

/** Maps vLLM-style --backend/--api/--endpoint choices to a wire protocol. */
record BackendChoice(String backend, Protocol protocol, String path) {

    static final List<String> BACKENDS =
            List.of(
                    "vllm",
                    "sglang",
                    "tgi",
                    "jetstream",
                    "triton",
                    "openai",
                    "openai-chat",
                    "lmdeploy",
                    "trtllm");

    static BackendChoice resolve(
            String backendFlag, String apiFlag, String endpoint, boolean stream) {
        String backend = backendFlag.toLowerCase(Locale.ROOT);
        if (!BACKENDS.contains(backend)) {
            throw new Main.UsageError(
                    "--backend: '"
                            + backendFlag
                            + "' is not one of "
                            + String.join(", ", BACKENDS));
        }
        String api = apiFlag == null ? null : apiFlag.toLowerCase(Locale.ROOT);
        if (api != null && !List.of("completions", "chat", "generate").contains(api)) {
            throw new Main.UsageError(
                    "--api: '" + apiFlag + "' is not one of completions, chat, generate");
        }
        if (api == null) {
            if (endpoint != null && endpoint.contains("chat/completions")) {
                api = "chat";
            } else if (endpoint != null && endpoint.contains("generate")) {
                api = "generate";
            } else if (backend.equals("openai-chat")) {
                api = "chat";
            } else if (backend.equals("tgi")) {
                api = "generate";
            } else {
                api = "completions";
            }
        }
        if (backend.equals("openai-chat")) {
            backend = "openai";
        }
        Protocol protocol =
                switch (api) {
                    case "chat" -> new OpenAiChat();
                    case "generate" -> new TgiGenerate(stream);
                    default -> new OpenAiCompletions();
                };
        String path = endpoint == null || endpoint.isBlank() ? protocol.defaultPath() : endpoint;
        if (!path.startsWith("/")) {
            throw new Main.UsageError("--endpoint: must start with '/', got '" + endpoint + "'");
        }
        return new BackendChoice(backend, protocol, path);
    }
}
