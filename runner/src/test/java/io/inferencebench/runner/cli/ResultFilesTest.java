package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Profiles written into one result directory by several writers at once. */
class ResultFilesTest {

    private static final ProfileContext CONTEXT =
            new ProfileContext(
                    "openai",
                    "acme/m",
                    null,
                    "openai",
                    Instant.parse("2026-01-01T00:00:00Z"),
                    null,
                    null,
                    1,
                    "test",
                    Map.of());

    @Test
    void writersOfTheSameNameAtTheSameTimeKeepEveryProfile(@TempDir Path dir) throws Exception {
        int writers = 16;
        int rounds = 60;
        ResultFiles files = ResultFiles.prepare(dir);
        CyclicBarrier together = new CyclicBarrier(writers);
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        List<Future<List<Path>>> futures = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            int writer = w;
            futures.add(
                    pool.submit(
                            () -> {
                                List<Path> paths = new ArrayList<>();
                                for (int r = 0; r < rounds; r++) {
                                    // Every stage has the same rate and start second: one name.
                                    StageResult stage = new StageResult();
                                    stage.stageIndex = writer * rounds + r;
                                    stage.requestedRate = Double.POSITIVE_INFINITY;
                                    stage.firstDispatchEpochNanos = 1_767_225_600_000_000_000L;
                                    together.await();
                                    ResultFiles.Written written =
                                            files.write(stage, CONTEXT, null, reason -> {});
                                    assertThat(written.ok()).as(written.failure()).isTrue();
                                    paths.add(written.path());
                                }
                                return paths;
                            }));
        }
        Set<Path> printed = new HashSet<>();
        for (Future<List<Path>> f : futures) {
            printed.addAll(f.get());
        }
        pool.shutdown();
        // Before: two writers that found the same name free both wrote it; one profile lost
        // (16 x 60 writes here lost 13).
        assertThat(printed.size()).as("distinct paths returned").isEqualTo(writers * rounds);
        List<Path> onDisk;
        try (Stream<Path> list = Files.list(dir)) {
            onDisk = list.toList();
        }
        assertThat(onDisk.size()).as("files in the directory").isEqualTo(writers * rounds);
        assertThat(new HashSet<>(onDisk)).isEqualTo(printed);
        Set<Integer> stages = new HashSet<>();
        for (Path p : onDisk) {
            assertThat(p.getFileName().toString())
                    .matches("openai-infqps-m-20260101-000000(-\\d+)?\\.json");
            stages.add(new ObjectMapper().readTree(p.toFile()).at("/metrics/stage_index").asInt());
        }
        assertThat(stages).hasSize(writers * rounds);
    }
}
