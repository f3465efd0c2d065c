package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Locates model-sim, the project's llm-d-inference-sim compatible simulator: env {@code
 * IB_MODEL_SIM} when it names an executable, else the path printed by {@code
 * e2e/scripts/provision-model-sim.sh} (found by walking up from the working directory; it builds on
 * a cache miss), else {@code model-sim} on the PATH.
 */
public final class ModelSim {

    private static volatile Path cached;

    private ModelSim() {}

    public static synchronized Path binary() {
        if (cached != null) {
            return cached;
        }
        String env = System.getenv("IB_MODEL_SIM");
        if (env != null && Files.isExecutable(Path.of(env))) {
            return cached = Path.of(env);
        }
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path script = dir.resolve("e2e/scripts/provision-model-sim.sh");
            if (Files.isRegularFile(script)) {
                return cached = provision(script);
            }
            dir = dir.getParent();
        }
        return cached = Path.of("model-sim");
    }

    private static Path provision(Path script) {
        try {
            Process process =
                    new ProcessBuilder("bash", script.toString())
                            .redirectError(ProcessBuilder.Redirect.INHERIT)
                            .start();
            byte[] out = process.getInputStream().readAllBytes();
            if (!process.waitFor(30, TimeUnit.MINUTES) || process.exitValue() != 0) {
                throw new IllegalStateException(script + " failed with " + process.exitValue());
            }
            String[] lines = new String(out, StandardCharsets.UTF_8).strip().split("\n");
            return Path.of(lines[lines.length - 1].strip());
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + script, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
