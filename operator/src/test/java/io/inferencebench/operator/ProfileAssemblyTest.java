package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The ConfigMap keys of profiles, made from their LPG file names. */
class ProfileAssemblyTest {

    /** What the API server accepts as a ConfigMap data key. */
    private static final String CONFIG_MAP_KEY = "[-._a-zA-Z0-9]{1,253}";

    @Test
    void aLongOrOddModelIdStillGivesValidDistinctConfigMapKeys() {
        StageResult stage = new StageResult();
        stage.requestedRate = 20;
        stage.firstDispatchEpochNanos = 1_700_000_000_000_000_000L;
        Set<String> used = new HashSet<>();
        List<String> models =
                List.of(
                        "acme/" + "m".repeat(300),
                        "acme/" + "\u6a21\u578b".repeat(120),
                        "acme/line\nbreak/and\ttab");
        for (String model : models) {
            ProfileContext context =
                    new ProfileContext(
                            "vllm",
                            model,
                            null,
                            "vllm",
                            Instant.EPOCH,
                            "run",
                            "ns",
                            1,
                            "operator",
                            Map.of());
            String name = LpgProfileWriter.fileName(stage, context);
            // The same name for stages 1 and 12: the second key gets the stage as a suffix.
            String first = ProfileAssembly.uniqueKey(name, 1, used);
            String again = ProfileAssembly.uniqueKey(name, 12, used);
            assertThat(first).as(model).matches(CONFIG_MAP_KEY).startsWith("vllm-20.0qps-");
            assertThat(again).as(model).matches(CONFIG_MAP_KEY).endsWith("-stage12.json");
            assertThat(again).isNotEqualTo(first);
        }
    }

    private static BenchmarkRun run(String dataset) {
        return Serialization.unmarshal(
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: run, namespace: ns}
                spec:
                  target: {service: {name: vllm, port: 8000}}
                  workload:
                    dataset: %s
                  load: {stages: [{requestRate: 2, numPrompts: 10}]}
                """
                        .formatted(dataset),
                BenchmarkRun.class);
    }

    @Test
    void aSharedPrefixRunsProfilesNameTheShapeAsTheCommandLinesDo() {
        assertThat(
                        ProfileAssembly.dimensions(
                                run(
                                        "{type: prefix_repetition, prefixRepetition: {prefixTokens:"
                                                + " 1024, suffixTokens: 128, prefixes: 8}}"),
                                2))
                .containsExactly(
                        Map.entry("stage", "2"),
                        Map.entry(
                                "prefix_repetition", "prefixes=8 prefix_len=1024 suffix_len=128"));
        // Defaults fill what is left out; another dataset has only the stage.
        assertThat(ProfileAssembly.dimensions(run("{type: prefix_repetition}"), 1))
                .containsEntry("prefix_repetition", "prefixes=10 prefix_len=256 suffix_len=256");
        assertThat(ProfileAssembly.dimensions(run("{type: random}"), 1))
                .containsExactly(Map.entry("stage", "1"));
    }
}
