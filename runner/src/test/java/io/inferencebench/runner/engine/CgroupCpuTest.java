package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CgroupCpuTest {

    @TempDir Path root;

    private void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }

    @Test
    void cgroupV2WithAQuota() throws IOException {
        Path own = root.resolve("kubepods/pod1/c1");
        write(own.resolve("cpu.stat"), "usage_usec 900\nnr_throttled 4\nthrottled_usec 123456\n");
        write(own.resolve("cpu.max"), "10000 100000\n");
        CgroupCpu cgroup = CgroupCpu.find(root, List.of("0::/kubepods/pod1/c1"));
        assertThat(cgroup).isNotNull();
        assertThat(cgroup.throttledMicros()).isEqualTo(123456L);
        assertThat(cgroup.quotaCpus()).isEqualTo(0.1);
    }

    @Test
    void cgroupV2WithoutAQuotaHasNone() throws IOException {
        write(root.resolve("cpu.stat"), "usage_usec 900\nthrottled_usec 0\n");
        write(root.resolve("cpu.max"), "max 100000\n");
        CgroupCpu cgroup = CgroupCpu.find(root, List.of("0::/"));
        assertThat(cgroup.quotaCpus()).isNull();
        assertThat(cgroup.throttledMicros()).isZero();
    }

    @Test
    void cgroupV1InAContainerReadsTheControllersMountPoint() throws IOException {
        // No cgroup namespace: the listing names the host's path, which the container does not
        // see; its cpu controller mount is its own cgroup.
        Path mount = root.resolve("cpu,cpuacct");
        write(
                mount.resolve("cpu.stat"),
                "nr_periods 50\nnr_throttled 45\nthrottled_time 4500000000\n");
        write(mount.resolve("cpu.cfs_quota_us"), "20000\n");
        write(mount.resolve("cpu.cfs_period_us"), "100000\n");
        CgroupCpu cgroup =
                CgroupCpu.find(
                        root,
                        List.of(
                                "12:memory:/kubepods/burstable/pod1/c1",
                                "4:cpu,cpuacct:/kubepods/burstable/pod1/c1",
                                "0::/"));
        assertThat(cgroup.throttledMicros()).isEqualTo(4_500_000L);
        assertThat(cgroup.quotaCpus()).isEqualTo(0.2);
    }

    @Test
    void cgroupV1OnAHostReadsItsOwnDirectoryWithoutAQuota() throws IOException {
        Path own = root.resolve("cpu,cpuacct/user.slice");
        write(own.resolve("cpu.stat"), "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
        write(own.resolve("cpu.cfs_quota_us"), "-1\n");
        write(own.resolve("cpu.cfs_period_us"), "100000\n");
        CgroupCpu cgroup = CgroupCpu.find(root, List.of("4:cpu,cpuacct:/user.slice"));
        assertThat(cgroup.quotaCpus()).isNull();
        assertThat(cgroup.throttledMicros()).isZero();
    }

    @Test
    void nothingReadableIsNoCgroup() {
        assertThat(CgroupCpu.find(root, List.of("0::/x", "4:cpu,cpuacct:/y", "garbage"))).isNull();
    }
}
