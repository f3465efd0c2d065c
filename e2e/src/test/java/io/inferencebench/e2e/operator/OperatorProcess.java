package io.inferencebench.e2e.operator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The packaged operator ({@code quarkus-run.jar}) as a child process against the local control
 * plane, the way it runs in a cluster: its own JVM, prod profile (leader election on), the cluster
 * reached through a kubeconfig. A separate process lets a test stop and restart it mid-run.
 */
final class OperatorProcess implements AutoCloseable {

    private final Process process;
    private final Path log;

    private OperatorProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    static OperatorProcess start(
            Path quarkusRunJar, Path kubeconfig, String runnerImage, Path log) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder =
                new ProcessBuilder(
                        List.of(
                                java,
                                "-Xmx256m",
                                "-XX:+UseSerialGC",
                                "-XX:TieredStopAtLevel=1",
                                "-Dquarkus.http.port=0",
                                "-jar",
                                quarkusRunJar.toString()));
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        builder.environment().put("RUNNER_IMAGE", runnerImage);
        builder.environment().remove("KUBERNETES_SERVICE_HOST");
        builder.redirectErrorStream(true);
        builder.redirectOutput(log.toFile());
        try {
            Files.createDirectories(log.getParent());
            return new OperatorProcess(builder.start(), log);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the operator " + quarkusRunJar, e);
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no operator log: " + e + ")";
        }
    }

    /** SIGTERM (graceful: the leader releases its lease), SIGKILL after {@code grace}. */
    void stop(Duration grace) {
        process.destroy();
        try {
            if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop(Duration.ofSeconds(10));
    }
}
