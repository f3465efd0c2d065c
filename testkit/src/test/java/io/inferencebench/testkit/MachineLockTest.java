package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The machine lock against real flock(1) holders, as the scripts take it. */
class MachineLockTest {

    @TempDir Path dir;
    Path file;

    @BeforeEach
    void needsFlock() {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/flock")), "flock(1) installed");
        file = dir.resolve("e2e.lock");
    }

    /** A script's `flock FILE cmd` holding the lock until its stdin closes. */
    private Process scriptHolding() throws Exception {
        Files.writeString(file, "");
        Process p =
                new ProcessBuilder(
                                "flock",
                                file.toString(),
                                "sh",
                                "-c",
                                "echo held; exec cat >/dev/null")
                        .start();
        assertThat(new String(p.getInputStream().readNBytes(5), StandardCharsets.UTF_8))
                .isEqualTo("held\n");
        return p;
    }

    @Test
    void anotherHolderMakesTheWaitRunOutWithItsPidInTheMessage() throws Exception {
        Process script = scriptHolding();
        try {
            assertThatThrownBy(() -> MachineLock.acquire(file, Duration.ofSeconds(2), "a test"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(file.toString())
                    .hasMessageContaining("not free within PT2S")
                    .hasMessageContaining("pid " + script.pid());
        } finally {
            script.getOutputStream().close();
            script.waitFor(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aWaitingStartTakesTheLockWhenTheHolderLetsGoAndHoldsItAgainstScripts() throws Exception {
        Process script = scriptHolding();
        CompletableFuture<MachineLock> waiting =
                CompletableFuture.supplyAsync(
                        () -> MachineLock.acquire(file, Duration.ofMinutes(1), "a test"));
        Thread.sleep(1500);
        assertThat(waiting).as("still waiting while the script holds the lock").isNotDone();
        script.getOutputStream().close();
        assertThat(script.waitFor(5, TimeUnit.SECONDS)).isTrue();
        try (MachineLock lock = waiting.get(30, TimeUnit.SECONDS)) {
            assertThat(lock.ownsLock()).isTrue();
            var probe = Command.run(List.of("flock", "-n", file.toString(), "true"), TEN_S);
            assertThat(probe.exitCode()).as("a script's flock -n while we hold it").isEqualTo(1);
        }
        var after = Command.run(List.of("flock", "-n", file.toString(), "true"), TEN_S);
        assertThat(after.exitCode()).as("free again after close: " + after.output()).isZero();
    }

    @Test
    void nestedAcquisitionsInOneJvmShareTheLockUntilTheLastClose() throws Exception {
        MachineLock outer = MachineLock.acquire(file, Duration.ofSeconds(5), "a fixture");
        MachineLock inner = MachineLock.acquire(file, Duration.ofSeconds(5), "its node");
        assertThat(inner).isSameAs(outer);
        inner.close();
        var probe = Command.run(List.of("flock", "-n", file.toString(), "true"), TEN_S);
        assertThat(probe.exitCode()).as("still held after the inner close").isEqualTo(1);
        outer.close();
        outer.close();
        var after = Command.run(List.of("flock", "-n", file.toString(), "true"), TEN_S);
        assertThat(after.exitCode()).as("free after the outer close: " + after.output()).isZero();
    }

    @Test
    void underACallerHoldingTheLockNothingIsTakenAndNothingWaits() throws Exception {
        Files.writeString(file, "");
        Path probe = dir.resolve("Probe.java");
        Files.writeString(
                probe,
"""
                import io.inferencebench.testkit.MachineLock;
                import java.nio.file.Path;
                import java.time.Duration;
import java.util.List;
                public class Probe {
                    public static void main(String[] a) {
                        try (MachineLock l = MachineLock.acquire(Path.of(a[0]), Duration.ofSeconds(3), "probe")) {
                            System.out.print(l.ownsLock() ? "took it" : "inherited");
                        }
                    }
                }
                """);
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p =
                new ProcessBuilder(
                                "flock",
                                file.toString(),
                                java,
                                "-cp",
                                System.getProperty("java.class.path"),
                                probe.toString(),
                                file.toString())
                        .redirectErrorStream(false)
                        .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(err).isZero();
        assertThat(out).isEqualTo("inherited");
        assertThat(err).contains("held by the calling process pid");
    }

    private static final Duration TEN_S = Duration.ofSeconds(10);
}
