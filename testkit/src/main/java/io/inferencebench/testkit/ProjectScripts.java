package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The project's files as the fixtures find them (walking up from the working directory, so a
 * module's tests find {@code e2e/scripts/...} of the checkout), and its provisioning scripts as
 * they run them: bash, their messages passed through, the last line of their output the answer.
 */
public final class ProjectScripts {

    private ProjectScripts() {}

    /**
     * The file at {@code path} (relative to the project root) above the working directory, or null.
     */
    public static Path find(String path) {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path candidate = dir.resolve(path);
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
            dir = dir.getParent();
        }
        return null;
    }

    /**
     * Runs provisioning {@code script} and returns the path on the last line of its output (what it
     * installed); fails naming the script when it fails or takes longer than {@code timeout}.
     */
    public static Path provision(Path script, Duration timeout) {
        try {
            Process process =
                    new ProcessBuilder("bash", script.toString())
                            .redirectError(ProcessBuilder.Redirect.INHERIT)
                            .start();
            byte[] out = process.getInputStream().readAllBytes();
            if (!process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)
                    || process.exitValue() != 0) {
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
