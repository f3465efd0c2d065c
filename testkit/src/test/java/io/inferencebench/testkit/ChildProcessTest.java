package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChildProcessTest {

    @TempDir Path dir;

    @Test
    void stopTerminatesTheWholeTreeAndKeepsTheLog() throws Exception {
        ChildProcess process =
                ChildProcess.start(
                        "tree",
                        List.of("sh", "-c", "echo parent; sleep 300 & sleep 300 & wait"),
                        Map.of(),
                        false,
                        dir,
                        dir.resolve("logs/tree.log"));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (process.process().descendants().count() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        List<ProcessHandle> children = process.process().descendants().toList();
        assertThat(children).hasSizeGreaterThanOrEqualTo(2);

        int exit = process.stop(Duration.ofSeconds(5));

        assertThat(exit).isEqualTo(143);
        for (ProcessHandle child : children) {
            child.onExit().get(5, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(child.isAlive()).isFalse();
        }
        assertThat(Files.readString(dir.resolve("logs/tree.log"))).contains("parent");
    }

    @Test
    void stopEscalatesToSigkillAfterTheGracePeriod() throws Exception {
        ChildProcess process =
                ChildProcess.start(
                        "stubborn",
                        List.of(
                                "sh",
                                "-c",
                                "trap '' TERM; echo up; while true; do sleep 0.1; done"),
                        Map.of(),
                        false,
                        dir,
                        dir.resolve("logs/stubborn.log"));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!Files.readString(dir.resolve("logs/stubborn.log")).contains("up")
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        long start = System.nanoTime();

        int exit = process.stop(Duration.ofMillis(700));

        assertThat(exit).isEqualTo(137);
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isGreaterThanOrEqualTo(Duration.ofMillis(650));
    }
}
