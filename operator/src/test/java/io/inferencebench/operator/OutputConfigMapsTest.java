package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import org.junit.jupiter.api.Test;

class OutputConfigMapsTest {

    /** What the ConfigMap's data weigh against its limit, by {@link OutputConfigMaps#bytes}. */
    static long dataBytes(ConfigMap map) {
        long total = 0;
        for (Map.Entry<String, String> e : map.getData().entrySet()) {
            total += OutputConfigMaps.bytes(e.getKey(), e.getValue());
        }
        return total;
    }

    @Test
    void smallRunsKeepOneConfigMapWithOneKeyPerStage() {
        BenchmarkRun run = TestRuns.sweep();
        SequencedMap<String, String> profiles = new LinkedHashMap<>();
        profiles.put("vllm-5.0qps-gemma-7b-20261129-120002.json", "{\"metrics\":{}}");
        profiles.put("vllm-10.0qps-gemma-7b-20261129-120100.json", "{\"metrics\":{}}");
        List<ConfigMap> maps = OutputConfigMaps.pack(run, profiles);
        assertThat(maps)
                .singleElement()
                .satisfies(
                        m -> {
                            assertThat(m.getMetadata().getName()).isEqualTo("sweep-profile");
                            assertThat(m.getMetadata().getLabels())
                                    .containsEntry(Labels.COMPONENT, "profile");
                            assertThat(m.getMetadata().getOwnerReferences())
                                    .singleElement()
                                    .satisfies(o -> assertThat(o.getUid()).isEqualTo("uid-1"));
                            assertThat(m.getData()).containsOnlyKeys(profiles.keySet());
                        });
        run.getSpec().getOutput().setConfigMapName("my-results");
        run.getSpec().getOutput().setRetain(true);
        ConfigMap retained = OutputConfigMaps.pack(run, profiles).getFirst();
        assertThat(retained.getMetadata().getName()).isEqualTo("my-results");
        assertThat(retained.getMetadata().getOwnerReferences()).isEmpty();
    }

    @Test
    void largeRunsFillConfigMapsInStageOrderUnderTheGuard() {
        BenchmarkRun run = TestRuns.sweep();
        SequencedMap<String, String> profiles = new LinkedHashMap<>();
        String body = "x".repeat(100 * 1024);
        for (int stage = 1; stage <= 30; stage++) {
            profiles.put(String.format("stage-%02d.json", stage), body);
        }
        List<ConfigMap> maps = OutputConfigMaps.pack(run, profiles);
        // 8 profiles of 100 KiB fit in 900 KiB: 8 + 8 + 8 + 6
        assertThat(maps)
                .extracting(m -> m.getMetadata().getName())
                .containsExactly(
                        "sweep-profile", "sweep-profile-2", "sweep-profile-3", "sweep-profile-4");
        assertThat(maps)
                .allSatisfy(
                        m ->
                                assertThat(dataBytes(m))
                                        .isLessThanOrEqualTo(OutputConfigMaps.MAX_DATA_BYTES));
        assertThat(maps.get(1).getData().keySet()).first().isEqualTo("stage-09.json");
        assertThat(maps.stream().mapToInt(m -> m.getData().size()).sum()).isEqualTo(30);

        profiles.put("huge.json", "y".repeat(OutputConfigMaps.MAX_DATA_BYTES));
        assertThatThrownBy(() -> OutputConfigMaps.pack(run, profiles))
                .hasMessageContaining("huge.json");
    }
}
