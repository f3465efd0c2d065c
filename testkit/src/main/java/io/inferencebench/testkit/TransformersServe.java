package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Hugging Face {@code transformers serve} on the CPU for the {@code *TransformersIT} tier, run by
 * {@code e2e/scripts/transformers-serve.sh} (cached venv, the project's tiny random-weight Llama,
 * continuous batching, loopback): a real third-party OpenAI-compatible server that any x86-64
 * machine runs, with a strict request schema (HTTP 422 for fields outside OpenAI's API), streams
 * without {@code data: [DONE]}, no model listed by {@code /v1/models} and no {@code /metrics}.
 *
 * <p>As a JUnit extension ({@code @ExtendWith(TransformersServe.class)}) it starts the server once
 * per test JVM and stops it when the whole run ends, passed or failed (a root-store resource, plus
 * a shutdown hook for a JVM that dies). A server that was already up ({@code status}) is used and
 * left running: whoever started it stops it.
 */
public final class TransformersServe implements BeforeAllCallback {

    /** The running server, as the script's state file describes it. */
    public record Server(
            String baseUrl,
            Path modelDir,
            Path venv,
            String transformersVersion,
            String torchVersion,
            Path log,
            Double startSeconds,
            boolean startedHere) {
        /**
         * The name requests must carry: the model directory, as the server was given it (it lists
         * no model, so a client cannot discover the name).
         */
        public String modelName() {
            return modelDir.toString();
        }

        /** The model's tokenizer.json (what {@code --tokenizer} takes). */
        public Path tokenizerJson() {
            return modelDir.resolve("tokenizer.json");
        }

        /** The server's log as far as it is written now (uvicorn's access lines among it). */
        public String logText() {
            try {
                return Files.readString(log, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException("the server log " + log, e);
            }
        }
    }

    private static final Pattern ACCESS_LINE =
            Pattern.compile("\"(GET|POST|PUT|DELETE|HEAD) (\\S+) HTTP/[0-9.]+\" (\\d{3})");

    /** One of uvicorn's access-log lines: method, path and status the server itself logged. */
    public record AccessLine(String method, String path, int status) {}

    /** The access-log lines of {@code text} (part of {@link Server#logText()}), in order. */
    public static List<AccessLine> accessLines(String text) {
        Matcher m = ACCESS_LINE.matcher(text);
        List<AccessLine> out = new java.util.ArrayList<>();
        while (m.find()) {
            out.add(new AccessLine(m.group(1), m.group(2), Integer.parseInt(m.group(3))));
        }
        return out;
    }

    private static final ServerScript SCRIPT =
            new ServerScript(
                    "e2e/scripts/transformers-serve.sh",
                    "IB_TRANSFORMERS_STATE_DIR",
                    "/tmp/inferencebench-transformers",
                    "transformers-serve");

    private static Server server;

    /** Starts the server unless it runs; idempotent within a JVM. */
    public static synchronized Server server() {
        if (server != null) {
            return server;
        }
        boolean startedHere =
                SCRIPT.upUnlessRunning(TransformersServe::stop, "ib-transformers-down");
        Map<String, String> state = SCRIPT.readState();
        server =
                new Server(
                        state.get("URL"),
                        Path.of(state.get("MODEL_DIR")),
                        Path.of(state.get("VENV")),
                        state.get("TRANSFORMERS_VERSION"),
                        state.get("TORCH_VERSION"),
                        Path.of(state.get("LOG")),
                        ServerScript.startSeconds(state),
                        startedHere);
        return server;
    }

    /** Stops the server if this JVM started it. */
    public static synchronized void stop() {
        if (server != null && server.startedHere()) {
            SCRIPT.run("down", 120);
        }
        server = null;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        server();
        ServerScript.stopWhenRunEnds(context, TransformersServe.class, TransformersServe::stop);
    }

    /** The script, found by walking up from the working directory. */
    public static Path script() {
        return SCRIPT.path();
    }
}
