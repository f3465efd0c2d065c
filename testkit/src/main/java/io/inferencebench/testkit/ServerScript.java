package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One of the scripts that run a real model server for a test tier ({@code e2e/scripts/vllm-cpu.sh},
 * {@code e2e/scripts/transformers-serve.sh}: {@code up}, {@code status}, {@code down}, ...) and the
 * state file it keeps ({@code KEY=value} lines): what {@link VllmCpu} and {@link TransformersServe}
 * share to start, describe and stop their server.
 *
 * @param relativePath the script, relative to the project root
 * @param stateDirVariable the variable that names the script's state directory
 * @param defaultStateDir the state directory when that variable is unset
 * @param stateName what the state file is called in errors
 */
record ServerScript(
        String relativePath, String stateDirVariable, String defaultStateDir, String stateName) {

    /** A command's exit status and its standard output, stripped. */
    record Result(int exit, String out) {}

    /** The script, found by walking up from the working directory. */
    Path path() {
        Path script = ProjectScripts.find(relativePath);
        if (script == null) {
            throw new IllegalStateException(relativePath + " not found above " + Path.of(""));
        }
        return script;
    }

    /**
     * Brings the server up unless {@code status} finds it running; returns whether this call
     * started it, and then has {@code stop} run when the JVM exits (a JVM that dies mid-run).
     */
    boolean upUnlessRunning(Runnable stop, String hookName) {
        if (run("status", 30).exit == 0) {
            return false;
        }
        Result up = run("up", 30 * 60);
        if (up.exit != 0) {
            throw new IllegalStateException(
                    relativePath + " up failed (exit " + up.exit + "); see its log above");
        }
        Runtime.getRuntime().addShutdownHook(new Thread(stop, hookName));
        return true;
    }

    /**
     * Has {@code stop} run when the whole test run ends, passed or failed (a root-store resource).
     */
    static void stopWhenRunEnds(ExtensionContext context, Class<?> owner, Runnable stop) {
        context.getRoot()
                .getStore(ExtensionContext.Namespace.create(owner))
                .getOrComputeIfAbsent(
                        "server",
                        k -> (ExtensionContext.Store.CloseableResource) stop::run,
                        ExtensionContext.Store.CloseableResource.class);
    }

    /** {@code START_SECONDS} of the state: how long the server took to answer, or null. */
    static Double startSeconds(Map<String, String> state) {
        String start = state.get("START_SECONDS");
        return start == null || start.isBlank() ? null : Double.valueOf(start);
    }

    private Path stateDir() {
        String env = System.getenv(stateDirVariable);
        return Path.of(env != null && !env.isBlank() ? env : defaultStateDir);
    }

    /** The state file's keys and values, in order. */
    Map<String, String> readState() {
        Map<String, String> out = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(stateDir().resolve("env"))) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    out.put(line.substring(0, eq), line.substring(eq + 1));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "the " + stateName + " state file " + stateDir() + "/env", e);
        }
        return out;
    }

    /** Runs {@code command}, its errors passed through, within {@code timeoutSeconds}. */
    Result run(String command, long timeoutSeconds) {
        String name = Path.of(relativePath).getFileName().toString();
        try {
            Process p =
                    new ProcessBuilder(List.of("bash", path().toString(), command))
                            .redirectError(ProcessBuilder.Redirect.INHERIT)
                            .start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        name + " " + command + " took more than " + timeoutSeconds + " s");
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8).strip());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
