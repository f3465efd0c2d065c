package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VolumePathsTest {

    @Test
    void realPodPathsAreUnchanged() {
        VolumePaths paths = new VolumePaths(Map.of());
        assertThat(paths.resolve("/etc/inferencebench/workorder/workorder.json"))
                .isEqualTo(Path.of("/etc/inferencebench/workorder/workorder.json"));
    }

    @Test
    void theLongestMountVariableWins(@TempDir Path dir) {
        VolumePaths paths =
                new VolumePaths(
                        Map.of(
                                "IB_MOUNT_ETC",
                                "/elsewhere",
                                "IB_MOUNT_ETC_INFERENCEBENCH_WORKORDER",
                                dir.toString()));
        assertThat(paths.resolve("/etc/inferencebench/workorder/workorder.json"))
                .isEqualTo(dir.resolve("workorder.json"));
        assertThat(paths.resolve("/etc/inferencebench/workorder")).isEqualTo(dir);
        assertThat(paths.resolve("/etc/other")).isEqualTo(Path.of("/elsewhere/other"));
    }

    @Test
    void otherPathsAreReRootedUnderTheVolumeRoot(@TempDir Path root) throws Exception {
        Files.createDirectories(root.resolve("data/tokenizer"));
        VolumePaths paths = new VolumePaths(Map.of("IB_VOLUME_ROOT", root.toString()));
        assertThat(paths.resolve("/data/tokenizer/tokenizer.json"))
                .isEqualTo(root.resolve("data/tokenizer/tokenizer.json"));
        // A host path that exists and is not mapped stays as it is.
        assertThat(paths.resolve("/proc/self")).isEqualTo(Path.of("/proc/self"));
        assertThat(paths.resolve("relative/file")).isEqualTo(Path.of("relative/file"));
    }

    @Test
    void mountVariableNamesMatchTheLocalNode() {
        assertThat(VolumePaths.mountEnvName("/etc/config")).isEqualTo("IB_MOUNT_ETC_CONFIG");
        assertThat(VolumePaths.mountEnvName("/data/my-data.v1/"))
                .isEqualTo("IB_MOUNT_DATA_MY_DATA_V1");
    }
}
