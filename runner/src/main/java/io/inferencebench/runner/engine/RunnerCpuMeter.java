package io.inferencebench.runner.engine;

import io.inferencebench.profile.lpg.RunnerCpu;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Measures the runner's own CPU over a stage (see {@link RunnerCpu}): process CPU time, the CPUs
 * the JVM may use, run-queue wait of its threads and cgroup throttling. Reads only {@code /proc}
 * and {@code /sys/fs/cgroup} of this process; what a platform does not offer stays unknown.
 */
public final class RunnerCpuMeter {

    private static final Path TASKS = Path.of("/proc/self/task");

    private final CgroupCpu cgroup;

    /** A moment's readings. */
    public final class Mark {
        final long wallNanos = System.nanoTime();
        final long cpuNanos = processCpuNanos();
        final Map<String, Long> waitByThread = runQueueWaits();
        final Long throttledMicros = cgroup == null ? null : cgroup.throttledMicros();

        private Mark() {}
    }

    public RunnerCpuMeter() {
        this.cgroup = CgroupCpu.ofThisProcess();
    }

    /** Readings now, at a stage's start. */
    public Mark mark() {
        return new Mark();
    }

    /**
     * The figures since {@code start}.
     *
     * @param start readings at the stage's start
     * @return the stage's CPU figures
     */
    public RunnerCpu since(Mark start) {
        Mark end = new Mark();
        RunnerCpu cpu = new RunnerCpu();
        cpu.wallSeconds = (end.wallNanos - start.wallNanos) / 1e9;
        cpu.cpuSeconds =
                start.cpuNanos < 0 || end.cpuNanos < 0 ? 0 : (end.cpuNanos - start.cpuNanos) / 1e9;
        cpu.availableCpus = Runtime.getRuntime().availableProcessors();
        Double quota = cgroup == null ? null : cgroup.quotaCpus();
        if (quota != null && quota < cpu.availableCpus) {
            // The JVM rounds a fractional quota up (100m counts as 1 CPU); the quota is what the
            // runner may use, and a tiny one saturates it at a tenth of a core.
            cpu.availableCpus = quota;
        }
        if (!start.waitByThread.isEmpty() || !end.waitByThread.isEmpty()) {
            long waited = 0;
            // threads that ended during the stage are gone from /proc: only threads seen at the
            // end count, from their start reading (or from 0 when they started later)
            for (Map.Entry<String, Long> e : end.waitByThread.entrySet()) {
                waited +=
                        Math.max(0, e.getValue() - start.waitByThread.getOrDefault(e.getKey(), 0L));
            }
            cpu.runQueueWaitSeconds = waited / 1e9;
        }
        if (start.throttledMicros != null && end.throttledMicros != null) {
            cpu.throttledSeconds = (end.throttledMicros - start.throttledMicros) / 1e6;
        }
        return cpu;
    }

    private static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /** Per thread: nanoseconds spent runnable but waiting for a CPU (schedstat's 2nd field). */
    private static Map<String, Long> runQueueWaits() {
        Map<String, Long> waits = new HashMap<>();
        if (!Files.isDirectory(TASKS)) {
            return waits;
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
            for (Path task : tasks) {
                try {
                    String[] fields =
                            Files.readString(task.resolve("schedstat"), StandardCharsets.US_ASCII)
                                    .trim()
                                    .split("\\s+");
                    if (fields.length >= 2) {
                        waits.put(task.getFileName().toString(), Long.parseLong(fields[1]));
                    }
                } catch (IOException | NumberFormatException e) {
                    // the thread ended between listing and reading, or no schedstat here
                }
            }
        } catch (IOException e) {
            waits.clear();
        }
        return waits;
    }
}
