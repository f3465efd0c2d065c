package io.inferencebench.runner.stub;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * An OpenAI-compatible streaming completions server with exact injected delays: the first token
 * {@code ttftMs} after the request was read, then one token every {@code itlMs}. It records when it
 * wrote each token, on the same nanoTime clock the client uses (same JVM).
 */
public final class OpenAiStub implements StubServer.Handler {

    /** Server-side instants of one response. */
    public record Written(long requestRead, long[] tokenWrites, long end) {
        /** From reading the request to the first token's write, ms (none: the whole response). */
        public double ttftMs() {
            return ((tokenWrites.length == 0 ? end : tokenWrites[0]) - requestRead) / 1e6;
        }

        /** From reading the request to the end of the response, ms. */
        public double latencyMs() {
            return (end - requestRead) / 1e6;
        }
    }

    private final double ttftMs;
    private final double itlMs;
    private final boolean usage;
    public final ConcurrentLinkedQueue<Written> written = new ConcurrentLinkedQueue<>();
    public final ConcurrentLinkedQueue<JsonNode> bodies = new ConcurrentLinkedQueue<>();

    private boolean ignoresStream;

    public OpenAiStub(double ttftMs, double itlMs, boolean usage) {
        this.ttftMs = ttftMs;
        this.itlMs = itlMs;
        this.usage = usage;
    }

    /**
     * A server that answers every request with one complete JSON body, even when asked to stream.
     */
    public static OpenAiStub ignoringStream(double ttftMs, double itlMs) {
        OpenAiStub stub = new OpenAiStub(ttftMs, itlMs, true);
        stub.ignoresStream = true;
        return stub;
    }

    @Override
    public void handle(StubServer.Request request, StubServer.Exchange exchange)
            throws IOException {
        long read = System.nanoTime();
        JsonNode body = request.json();
        bodies.add(body);
        int maxTokens = body.path("max_tokens").asInt(16);
        boolean chat = request.path().contains("chat");
        boolean stream = !ignoresStream && body.path("stream").asBoolean(false);
        int promptTokens =
                body.path("prompt").isArray()
                        ? body.path("prompt").size()
                        : body.has("messages")
                                ? messageWords(body.path("messages"))
                                : body.path("prompt").asText("").split(" ").length;
        if (!stream) {
            StubServer.sleepUntil(read + (long) ((ttftMs + itlMs * (maxTokens - 1)) * 1e6));
            String text = "tok ".repeat(maxTokens);
            exchange.respond(
                    200,
                    "application/json",
                    chat
                            ? "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\""
                                    + text
                                    + "\"}}],\"usage\":"
                                    + usageJson(promptTokens, maxTokens)
                                    + "}"
                            : "{\"choices\":[{\"text\":\""
                                    + text
                                    + "\"}],\"usage\":"
                                    + usageJson(promptTokens, maxTokens)
                                    + "}");
            written.add(new Written(read, new long[0], System.nanoTime()));
            return;
        }
        exchange.startSse();
        long[] writes = new long[maxTokens];
        if (chat) {
            exchange.chunk(
                    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n");
        }
        for (int i = 0; i < maxTokens; i++) {
            StubServer.sleepUntil(read + (long) ((ttftMs + itlMs * i) * 1e6));
            String piece = "t" + i + " ";
            writes[i] =
                    exchange.chunk(
                            chat
                                    ? "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\""
                                            + piece
                                            + "\"},\"finish_reason\":null}],\"usage\":null}\n\n"
                                    : "data: {\"choices\":[{\"index\":0,\"text\":\""
                                            + piece
                                            + "\",\"finish_reason\":null}],\"usage\":null}\n\n");
        }
        if (usage) {
            exchange.chunk(
                    "data: {\"choices\":[],\"usage\":"
                            + usageJson(promptTokens, maxTokens)
                            + "}\n\n");
        }
        exchange.chunk("data: [DONE]\n\n");
        exchange.endChunked();
        written.add(new Written(read, writes, System.nanoTime()));
    }

    /** A chat's prompt tokens as this stub counts them: the words of all its messages. */
    private static int messageWords(JsonNode messages) {
        int words = 0;
        for (JsonNode m : messages) {
            String content = m.path("content").asText("").trim();
            words += content.isEmpty() ? 0 : content.split("\\s+").length;
        }
        return words;
    }

    static String usageJson(int prompt, int completion) {
        return "{\"prompt_tokens\":"
                + prompt
                + ",\"completion_tokens\":"
                + completion
                + ",\"total_tokens\":"
                + (prompt + completion)
                + "}";
    }
}
