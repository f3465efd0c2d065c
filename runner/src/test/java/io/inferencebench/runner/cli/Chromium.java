package io.inferencebench.runner.cli;

import io.inferencebench.testkit.ProjectScripts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Debian's Chromium, headless: provisioned by {@code e2e/scripts/provision-chromium.sh} (a no-op
 * when {@code /usr/bin/chromium} exists), run with a fresh profile directory and no network
 * features, and stopped when it overruns.
 */
final class Chromium {

    private static Path binary;
    private static String unavailable;

    private Chromium() {}

    /** The browser, or {@code null} with {@link #whyUnavailable()} saying why. */
    static synchronized Path binary() {
        if (binary != null || unavailable != null) {
            return binary;
        }
        Path script = ProjectScripts.find("e2e/scripts/provision-chromium.sh");
        if (script == null) {
            unavailable =
                    "e2e/scripts/provision-chromium.sh not found above "
                            + Path.of("").toAbsolutePath();
            return null;
        }
        Path log = null;
        try {
            log = Files.createTempFile("provision-chromium", ".log");
            Process p =
                    new ProcessBuilder("bash", script.toString())
                            .redirectError(log.toFile())
                            .start();
            String out =
                    new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(15, TimeUnit.MINUTES) || p.exitValue() != 0 || out.isEmpty()) {
                unavailable = "chromium could not be installed: " + Files.readString(log).strip();
                return null;
            }
            binary = Path.of(out.lines().reduce((a, b) -> b).orElseThrow());
            return binary;
        } catch (IOException e) {
            unavailable = "cannot run " + script + ": " + e.getMessage();
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            unavailable = "interrupted";
            return null;
        } finally {
            deleteQuietly(log);
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            if (file != null) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            // reported by the test class's TempDirCheck if it stays
        }
    }

    static String whyUnavailable() {
        return unavailable;
    }

    /**
     * Runs the browser on a page with extra flags; returns its standard output. Its standard error
     * goes next to {@code profileDir} (in the caller's temporary directory) and is deleted here.
     */
    static String run(Path page, Path profileDir, String... flags) throws Exception {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                binary().toString(),
                                "--headless",
                                "--no-sandbox",
                                "--disable-gpu",
                                "--disable-quic",
                                "--no-first-run",
                                "--disable-background-networking",
                                "--disable-component-update",
                                "--disable-sync",
                                "--user-data-dir=" + profileDir));
        command.addAll(List.of(flags));
        command.add(page.toUri().toString());
        Path err = profileDir.resolveSibling(profileDir.getFileName() + ".err");
        try {
            Process p = new ProcessBuilder(command).redirectError(err.toFile()).start();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException(
                        "chromium did not finish: " + Files.readString(err));
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(
                        "chromium exited " + p.exitValue() + ": " + Files.readString(err));
            }
            return new String(out, StandardCharsets.UTF_8);
        } finally {
            deleteQuietly(err);
        }
    }
}
