package io.inferencebench.runner.engine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * This process's cgroup CPU controller, cgroup v2 or v1: how long its quota throttled it and how
 * many CPUs the quota amounts to. Nodes still run both versions (a v1 host's pods see only v1
 * files), and a runner pod with a CPU limit is exactly where both figures matter.
 *
 * <p>v2: {@code cpu.stat} ({@code throttled_usec}) and {@code cpu.max} ({@code max 100000} or
 * {@code <quota> <period>}) in the directory {@code 0::<path>} of {@code /proc/self/cgroup} names.
 * v1: {@code cpu.stat} ({@code throttled_time}, ns), {@code cpu.cfs_quota_us} ({@code -1}: none)
 * and {@code cpu.cfs_period_us} of the {@code cpu} controller; in a container without a cgroup
 * namespace {@code /proc/self/cgroup} names the host's path while the controller's mount point
 * already is the container's own cgroup, so that mount point is the fallback.
 */
final class CgroupCpu {

    private final Path dir;
    private final boolean v2;

    private CgroupCpu(Path dir, boolean v2) {
        this.dir = dir;
        this.v2 = v2;
    }

    /** This process's cgroup, or {@code null} where there is none to read (not Linux). */
    static CgroupCpu ofThisProcess() {
        try {
            return find(
                    Path.of("/sys/fs/cgroup"),
                    Files.readAllLines(Path.of("/proc/self/cgroup"), StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The cgroup a {@code /proc/self/cgroup} listing points to under {@code root}, or {@code null}.
     */
    static CgroupCpu find(Path root, List<String> procSelfCgroup) {
        // in the order tried; a set, as the listing's own controller name is often one of these
        Set<Path> v1 = new LinkedHashSet<>();
        for (String line : procSelfCgroup) {
            String[] parts = line.split(":", 3);
            if (parts.length < 3) {
                continue;
            }
            String path = parts[2].trim();
            String relative = path.startsWith("/") ? path.substring(1) : path;
            if (parts[0].equals("0") && parts[1].isEmpty()) {
                Path own = root.resolve(relative);
                if (Files.isReadable(own.resolve("cpu.stat"))
                        && Files.isReadable(own.resolve("cpu.max"))) {
                    return new CgroupCpu(own, true);
                }
                if (Files.isReadable(root.resolve("cpu.max"))) {
                    return new CgroupCpu(root, true);
                }
            } else if (List.of(parts[1].split(",")).contains("cpu")) {
                for (String mount : List.of(parts[1], "cpu", "cpu,cpuacct")) {
                    v1.add(root.resolve(mount).resolve(relative));
                    v1.add(root.resolve(mount));
                }
            }
        }
        for (Path candidate : v1) {
            if (Files.isReadable(candidate.resolve("cpu.cfs_quota_us"))) {
                return new CgroupCpu(candidate, false);
            }
        }
        return null;
    }

    /** Time the quota held this cgroup back so far, µs, or {@code null} when not readable. */
    Long throttledMicros() {
        String key = v2 ? "throttled_usec" : "throttled_time";
        try {
            for (String line :
                    Files.readAllLines(dir.resolve("cpu.stat"), StandardCharsets.US_ASCII)) {
                if (line.startsWith(key + " ")) {
                    long value = Long.parseLong(line.substring(key.length() + 1).trim());
                    return v2 ? value : value / 1000;
                }
            }
        } catch (IOException | NumberFormatException e) {
            return null;
        }
        return null;
    }

    /** The CPUs the quota allows (e.g. 0.1 for a 100m limit), or {@code null} without a quota. */
    Double quotaCpus() {
        try {
            long quota;
            long period;
            if (v2) {
                String[] max = Files.readString(dir.resolve("cpu.max")).trim().split("\\s+");
                if (max[0].equals("max")) {
                    return null;
                }
                quota = Long.parseLong(max[0]);
                period = Long.parseLong(max[1]);
            } else {
                quota = Long.parseLong(Files.readString(dir.resolve("cpu.cfs_quota_us")).trim());
                period = Long.parseLong(Files.readString(dir.resolve("cpu.cfs_period_us")).trim());
            }
            return quota <= 0 || period <= 0 ? null : (double) quota / period;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
