package io.inferencebench.runner.engine;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Decides which JIT compilers may run while stages are measured, from inside the process.
 *
 * <p>Why: with one CPU (a runner pod with a 1-CPU limit, or {@code taskset -c 0}) the C2 compiler
 * thread shares that CPU with the dispatcher and the event loop. A C2 compilation takes 50-800 ms
 * of CPU and C2 keeps compiling through the first stages (JFR {@code jdk.Compilation}); every
 * request due meanwhile waits for a time slice, which is the p99 schedule lag. Excluding C2 (a
 * compiler directive added through the DiagnosticCommand MBean, so no launcher flag is needed)
 * leaves C1's code, which compiles in microseconds to milliseconds; see docs/benchmarks.md for the
 * measured effect on lag and CPU per request.
 *
 * <p>The directive can only act when a method is due for C2, so until then methods run as C1 code
 * that still gathers profiles for C2 (tier 3), the slowest compiled form. Started with {@code
 * -XX:TieredStopAtLevel=1} the JVM compiles straight to C1's final code instead: on one CPU that
 * cut the in-stage CPU per request by 10-30 % and the p99 schedule lag from 4-140 ms to about 1 ms
 * at 1,600-4,800 req/s (docs/benchmarks.md). The runner image starts its JVM so; a JVM started
 * without it on one CPU gets the directive and a hint.
 *
 * <p>{@code -Dinferencebench.jit=}: {@code auto} (default: C1 only when the JVM sees one CPU),
 * {@code c1} (always), {@code tiered} (never change anything).
 */
public final class JitPlan {

    /** What a run asked for. */
    public enum Mode {
        AUTO,
        C1,
        TIERED
    }

    private static final String DIRECTIVE = "[{match: \"*.*\", c2: {Exclude: true}}]";
    private static volatile boolean applied;

    private JitPlan() {}

    /**
     * The mode from {@code -Dinferencebench.jit}; unknown values are refused with the allowed ones.
     */
    public static Mode mode() {
        String value = System.getProperty("inferencebench.jit", "auto").trim();
        try {
            return Mode.valueOf(value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "-Dinferencebench.jit=" + value + ": allowed are auto, c1, tiered");
        }
    }

    /** Whether C2 is to be excluded for {@code mode} on a JVM that sees {@code cpus} CPUs. */
    static boolean excludeC2(Mode mode, int cpus) {
        return switch (mode) {
            case C1 -> true;
            case TIERED -> false;
            case AUTO -> cpus <= 1;
        };
    }

    /** Whether the JVM was started C1-only ({@code -XX:TieredStopAtLevel} below 4). */
    static boolean startedC1Only() {
        try {
            HotSpotDiagnosticMXBean hotspot =
                    ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            return hotspot != null
                    && Integer.parseInt(hotspot.getVMOption("TieredStopAtLevel").getValue()) < 4;
        } catch (RuntimeException e) {
            // not HotSpot
            return false;
        }
    }

    /**
     * Applies the plan once per process (later calls do nothing).
     *
     * @return a line saying what changed, or null when nothing did
     */
    public static String apply() {
        if (applied) {
            return null;
        }
        applied = true;
        int cpus = Runtime.getRuntime().availableProcessors();
        if (startedC1Only()) {
            return "JIT: C1 only (-XX:TieredStopAtLevel=1)";
        }
        if (!excludeC2(mode(), cpus)) {
            return null;
        }
        Path file = null;
        try {
            // The DiagnosticCommand takes directives from a file only; /tmp is writable in the
            // runner pod (an emptyDir) and on any workstation.
            file = Files.createTempFile("inferencebench-jit", ".json");
            Files.writeString(file, DIRECTIVE);
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            Object answer =
                    server.invoke(
                            new ObjectName("com.sun.management:type=DiagnosticCommand"),
                            "compilerDirectivesAdd",
                            new Object[] {new String[] {file.toString()}},
                            new String[] {String[].class.getName()});
            String text = String.valueOf(answer).trim();
            if (!text.contains("added")) {
                return "JIT plan not applied: " + text;
            }
            return "JIT: C2 excluded ("
                    + cpus
                    + " CPU"
                    + (cpus == 1 ? "" : "s")
                    + "; C1 only); starting the JVM with -XX:TieredStopAtLevel=1 does this"
                    + " better (docs/benchmarks.md)";
        } catch (IOException | JMException | RuntimeException e) {
            // Not HotSpot, or no writable temp dir: the run goes on with the JVM's defaults.
            return "JIT plan not applied: " + e;
        } finally {
            if (file != null) {
                try {
                    Files.deleteIfExists(file);
                } catch (IOException ignored) {
                    // a leftover temp file of 40 bytes is harmless
                }
            }
        }
    }
}
