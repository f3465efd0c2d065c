package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ImageMapTest {

    @Test
    void exactThenRepositoryThenLongestPrefix() {
        ImageMap map =
                new ImageMap()
                        .put("ghcr.io/x/runner:1.0", "exact")
                        .put("ghcr.io/x/runner", "repo")
                        .put("ghcr.io/*", "short")
                        .put("ghcr.io/x/*", "long");

        assertThat(map.resolve("ghcr.io/x/runner:1.0").orElseThrow().entrypoint())
                .containsExactly("exact");
        assertThat(map.resolve("ghcr.io/x/runner:2.0").orElseThrow().entrypoint())
                .containsExactly("repo");
        assertThat(map.resolve("ghcr.io/x/runner@sha256:abc").orElseThrow().entrypoint())
                .containsExactly("repo");
        assertThat(map.resolve("ghcr.io/x/other:1").orElseThrow().entrypoint())
                .containsExactly("long");
        assertThat(map.resolve("ghcr.io/y/other:1").orElseThrow().entrypoint())
                .containsExactly("short");
        assertThat(map.resolve("docker.io/z:1")).isEmpty();
    }

    @Test
    void lazyMappingIsComputedOnceOnFirstMatch() {
        var calls = new java.util.concurrent.atomic.AtomicInteger();
        ImageMap map =
                new ImageMap()
                        .putLazy(
                                "sim*",
                                () -> {
                                    calls.incrementAndGet();
                                    return ImageMap.Mapping.of("/bin/sim");
                                });

        assertThat(map.resolve("other")).isEmpty();
        assertThat(calls).hasValue(0);
        assertThat(map.resolve("sim:1").orElseThrow().entrypoint()).containsExactly("/bin/sim");
        assertThat(map.resolve("sim:2").orElseThrow().entrypoint()).containsExactly("/bin/sim");
        assertThat(calls).hasValue(1);
    }

    @Test
    void failingLazyMappingIsRetriedLater() {
        var calls = new java.util.concurrent.atomic.AtomicInteger();
        ImageMap map =
                new ImageMap()
                        .putLazy(
                                "sim*",
                                () -> {
                                    if (calls.incrementAndGet() == 1) {
                                        throw new IllegalStateException("not built yet");
                                    }
                                    return ImageMap.Mapping.of("/bin/sim");
                                });

        assertThatThrownBy(() -> map.resolve("sim:1")).hasMessage("not built yet");
        assertThat(map.resolve("sim:1").orElseThrow().entrypoint()).containsExactly("/bin/sim");
    }

    @Test
    void repositoryKeepsRegistryPort() {
        assertThat(ImageMap.repository("localhost:5000/app:1.2")).isEqualTo("localhost:5000/app");
        assertThat(ImageMap.repository("localhost:5000/app")).isEqualTo("localhost:5000/app");
    }

    @Test
    void parsesFileFormWithEnvAndComments() {
        ImageMap map =
                ImageMap.parse(
                        List.of(
                                "# runner",
                                "ghcr.io/ib/runner* = env.MODE=test java -jar /tmp/r.jar  # jar",
                                "",
                                "busybox* ="));

        var runner = map.resolve("ghcr.io/ib/runner:0.1").orElseThrow();
        assertThat(runner.entrypoint()).containsExactly("java", "-jar", "/tmp/r.jar");
        assertThat(runner.env()).isEqualTo(Map.of("MODE", "test"));
        assertThat(map.resolve("busybox:1.36").orElseThrow().entrypoint()).isEmpty();
    }

    @Test
    void badLineNamesLineNumber() {
        assertThatThrownBy(() -> ImageMap.parse(List.of("ok = x", "no equals sign")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("line 2");
    }
}
