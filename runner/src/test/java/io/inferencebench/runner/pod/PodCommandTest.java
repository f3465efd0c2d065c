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
        return env;
    }

    @Test
    void identityAndPathsComeFromTheJobEnvironment() throws Exception {
        Map<String, String> env = env();
        env.put("INFERENCEBENCH_API_KEY", "sk-abc");
        env.put("INFERENCEBENCH_DATASET_FILE", "/data/dataset/dataset");
        PodSettings s = new PodCommand().settings(env);
        assertThat(s.runName()).isEqualTo("sweep");
        assertThat(s.namespace()).isEqualTo("bench");
        assertThat(s.index()).isEqualTo(1);
        assertThat(s.apiKey()).isEqualTo("sk-abc");
        // the Job mounts the work-order ConfigMap here
        assertThat(s.workOrderFile())
                .isEqualTo(Path.of("/etc/inferencebench/workorder/workorder.json"));
        assertThat(s.datasetFile()).isEqualTo(Path.of("/data/dataset/dataset"));
        // the pod's /tmp emptyDir is the JVM's temp dir
        assertThat(s.scratchDir())
                .isEqualTo(Path.of(System.getProperty("java.io.tmpdir")).resolve("inferencebench"));
        assertThat(s.selfWarmup()).isTrue();

        env.put("INFERENCEBENCH_WORK_ORDER", root.resolve("order.json").toString());
        assertThat(new PodCommand().settings(env).workOrderFile())
                .isEqualTo(root.resolve("order.json"));
    }

    @Test
    void theAlternativeRunNameAndAKeyFileWork() throws Exception {
        Map<String, String> env = env();
        env.remove("RUN_NAME");
        env.put("IB_RUN_NAME", "other");
        Files.createDirectories(root.resolve("secrets"));
        Files.writeString(root.resolve("secrets/key"), "sk-from-file\n");
        env.put("INFERENCEBENCH_API_KEY_FILE", root.resolve("secrets/key").toString());
        PodSettings s = new PodCommand().settings(env);
        assertThat(s.runName()).isEqualTo("other");
        assertThat(s.apiKey()).isEqualTo("sk-from-file");
    }

    @Test
    void aBadIndexIsAUsageErrorNamingTheVariable() {
        Map<String, String> env = env();
        env.put("JOB_COMPLETION_INDEX", "one");
        assertThatThrownBy(() -> new PodCommand().settings(env))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("JOB_COMPLETION_INDEX")
                .hasMessageContaining("one");
    }

    @Test
    void anUnreadableKeyFileIsAUsageError() {
        Map<String, String> env = env();
        env.put("INFERENCEBENCH_API_KEY_FILE", "/nowhere/key");
        assertThatThrownBy(() -> new PodCommand().settings(env))
                .hasMessageContaining("INFERENCEBENCH_API_KEY_FILE");
    }
}
