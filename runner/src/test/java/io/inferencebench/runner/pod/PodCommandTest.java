package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PodCommandTest {

    @TempDir Path root;

    private Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("RUN_NAME", "sweep");
        env.put("POD_NAMESPACE", "bench");
        env.put("POD_NAME", "sweep-runner-1-xyz");
        env.put("JOB_COMPLETION_INDEX", "1");
        env.put("IB_VOLUME_ROOT", root.toString());
        return env;
    }

    @Test
    void identityAndPathsComeFromTheJobEnvironment() throws Exception {
        Map<String, String> env = env();
        env.put("INFERENCEBENCH_API_KEY", "sk-abc");
        env.put("INFERENCEBENCH_DATASET_FILE", "/data/dataset/dataset");
        // The node links the pod's /tmp emptyDir here; an unmapped host /tmp would stay as is.
        Files.createDirectories(root.resolve("tmp"));
        PodSettings s = new PodCommand().settings(env, new VolumePaths(env));
        assertThat(s.runName()).isEqualTo("sweep");
        assertThat(s.namespace()).isEqualTo("bench");
        assertThat(s.index()).isEqualTo(1);
        assertThat(s.apiKey()).isEqualTo("sk-abc");
        assertThat(s.workOrderFile())
                .isEqualTo(root.resolve("etc/inferencebench/workorder/workorder.json"));
        assertThat(s.datasetFile()).isEqualTo(root.resolve("data/dataset/dataset"));
        assertThat(s.scratchDir()).isEqualTo(root.resolve("tmp/inferencebench"));
        assertThat(s.selfWarmup()).isTrue();
    }

    @Test
    void theAlternativeRunNameAndAKeyFileWork() throws Exception {
        Map<String, String> env = env();
        env.remove("RUN_NAME");
        env.put("IB_RUN_NAME", "other");
        Files.createDirectories(root.resolve("secrets"));
        Files.writeString(root.resolve("secrets/key"), "sk-from-file\n");
        env.put("INFERENCEBENCH_API_KEY_FILE", "/secrets/key");
        PodSettings s = new PodCommand().settings(env, new VolumePaths(env));
        assertThat(s.runName()).isEqualTo("other");
        assertThat(s.apiKey()).isEqualTo("sk-from-file");
    }

    @Test
    void aBadIndexIsAUsageErrorNamingTheVariable() {
        Map<String, String> env = env();
        env.put("JOB_COMPLETION_INDEX", "one");
        assertThatThrownBy(() -> new PodCommand().settings(env, new VolumePaths(env)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("JOB_COMPLETION_INDEX")
                .hasMessageContaining("one");
    }

    @Test
    void anUnreadableKeyFileIsAUsageError() {
        Map<String, String> env = env();
        env.put("INFERENCEBENCH_API_KEY_FILE", "/nowhere/key");
        assertThatThrownBy(() -> new PodCommand().settings(env, new VolumePaths(env)))
                .hasMessageContaining("INFERENCEBENCH_API_KEY_FILE");
    }
}
