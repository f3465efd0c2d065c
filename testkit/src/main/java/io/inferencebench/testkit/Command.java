package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a host command to its end or a timeout, for fixtures that drive host tools. */
public final class Command {

    private Command() {}

    /**
     * Runs {@code argv} with stdin closed, stdout and stderr combined; a command still running at
     * {@code timeout} is killed and reported as exit code -1. Never throws for a failed command.
     */
    public static Result run(List<String> argv, Duration timeout) {
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            p.getOutputStream().close();
            var out = new java.io.ByteArrayOutputStream();
            Thread reader =
                    Thread.ofVirtual()
                            .start(
                                    () -> {
                                        try {
                                            p.getInputStream().transferTo(out);
                                        } catch (IOException ignored) {
                                            // killed
                                        }
                                    });
            boolean exited = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            if (!exited) {
                p.destroyForcibly();
            }
            reader.join(Duration.ofSeconds(5));
            String text = out.toString(StandardCharsets.UTF_8);
            return exited
                    ? new Result(p.exitValue(), text)
                    : new Result(-1, text + "\n(timed out after " + timeout + ")");
        } catch (IOException e) {
            return new Result(-1, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, e.toString());
        }
    }

    /** A command's exit code and combined output. */
    public record Result(int exitCode, String output) {
        public boolean ok() {
            return exitCode == 0;
        }
    }
}
