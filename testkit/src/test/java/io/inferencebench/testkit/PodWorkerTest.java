package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PodWorkerTest {

    @Test
    void expandsLikeKubernetes() {
        Map<String, String> env = Map.of("A", "1", "B_C", "two");

        assertThat(PodWorker.expand("x=$(A) y=$(B_C)", env)).isEqualTo("x=1 y=two");
        assertThat(PodWorker.expand("$(MISSING) stays", env)).isEqualTo("$(MISSING) stays");
        assertThat(PodWorker.expand("$$(A) escaped, $$ dollar, lone $ ok", env))
                .isEqualTo("$(A) escaped, $ dollar, lone $ ok");
    }

    @Test
    void mountEnvNamesAreSanitizedPaths() {
        assertThat(PodWorker.mountEnvName("/etc/config")).isEqualTo("IB_MOUNT_ETC_CONFIG");
        assertThat(PodWorker.mountEnvName("/var/run/secrets/kubernetes.io/serviceaccount"))
                .isEqualTo("IB_MOUNT_VAR_RUN_SECRETS_KUBERNETES_IO_SERVICEACCOUNT");
        assertThat(PodWorker.mountEnvName("/data/")).isEqualTo("IB_MOUNT_DATA");
    }

    @Test
    void rerootsAbsolutePaths() {
        assertThat(PodWorker.reroot(Path.of("/r"), "/etc/x")).isEqualTo(Path.of("/r/etc/x"));
        assertThat(PodWorker.reroot(Path.of("/r"), "/")).isEqualTo(Path.of("/r"));
    }

    @Test
    void octalModesBecomePosixPermissions() {
        assertThat(PosixFilePermissions.toString(PodWorker.permissions(0644)))
                .isEqualTo("rw-r--r--");
        assertThat(PosixFilePermissions.toString(PodWorker.permissions(0400)))
                .isEqualTo("r--------");
        assertThat(PosixFilePermissions.toString(PodWorker.permissions(0755)))
                .isEqualTo("rwxr-xr-x");
    }
}
