package io.inferencebench.runner.plan;

import io.inferencebench.runner.backend.OpenAiChat;
import io.inferencebench.runner.backend.OpenAiCompletions;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.backend.TgiGenerate;
import java.util.List;
import java.util.Locale;

/**
 * The wire protocol and request path for a backend, API and optional path.
 *
 * <p>TGI: {@code completions} (the spec's default API) and {@code generate} mean TGI's native
 * {@code /generate_stream}, {@code chat} its OpenAI-compatible {@code /v1/chat/completions}; a path
 * containing {@code generate} always means the native API.
 *
 * <p>A value: two roads that resolve the same choices get equal records (the request format is
 * named by {@link #api()}, {@link #protocol()} makes it).
 *
 * @param backend the backend wire name ({@code openai-chat} becomes {@code openai})
 * @param api the request format: {@code completions}, {@code chat} or {@code generate}
 * @param path the request path
 * @param stream whether responses are streamed
 */
public record WireProtocol(String backend, String api, String path, boolean stream) {

    /** A new instance of the request and response format. */
    public Protocol protocol() {
        return switch (api) {
            case "chat" -> new OpenAiChat();
            case "generate" -> new TgiGenerate(stream);
            default -> new OpenAiCompletions();
        };
    }

    /** Backends accepted by both roads. */
    public static final List<String> BACKENDS =
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

    /** Names of the three inputs in the caller's terms (flags or work-order fields). */
    public record Fields(String backend, String api, String path) {}

    /**
     * Resolves the protocol.
     *
     * @param backendName backend, case-insensitive
     * @param apiName completions, chat or generate; {@code null} to derive it
     * @param path request path, or {@code null}/blank for the protocol's default
     * @param stream whether responses are streamed
     * @param fields names for error messages
     * @throws IllegalArgumentException naming the field and what is allowed
     */
    public static WireProtocol resolve(
            String backendName, String apiName, String path, boolean stream, Fields fields) {
        String backend = backendName == null ? "vllm" : backendName.toLowerCase(Locale.ROOT);
        if (!BACKENDS.contains(backend)) {
            throw new IllegalArgumentException(
                    fields.backend()
                            + ": '"
                            + backendName
                            + "' is not one of "
                            + String.join(", ", BACKENDS));
        }
        String api = apiName == null ? null : apiName.toLowerCase(Locale.ROOT);
        if (api != null && !List.of("completions", "chat", "generate").contains(api)) {
            throw new IllegalArgumentException(
                    fields.api() + ": '" + apiName + "' is not one of completions, chat, generate");
        }
        boolean hasPath = path != null && !path.isBlank();
        if (hasPath && path.contains("chat/completions") && api == null) {
            api = "chat";
        } else if (hasPath && path.contains("generate")) {
            api = "generate";
        } else if (backend.equals("openai-chat") && api == null) {
            api = "chat";
        } else if (backend.equals("tgi") && (api == null || api.equals("completions"))) {
            api = "generate";
        } else if (api == null) {
            api = "completions";
        }
        if (backend.equals("openai-chat")) {
            backend = "openai";
        }
        WireProtocol withoutPath = new WireProtocol(backend, api, "/", stream);
        String resolvedPath = hasPath ? path : withoutPath.protocol().defaultPath();
        if (!resolvedPath.startsWith("/")) {
            throw new IllegalArgumentException(
                    fields.path() + ": must start with '/', got '" + path + "'");
        }
        return new WireProtocol(backend, api, resolvedPath, stream);
    }
}
