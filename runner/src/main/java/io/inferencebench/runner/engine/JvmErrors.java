package io.inferencebench.runner.engine;

import java.util.Locale;

/**
 * What the runner says when the JVM itself fails ({@link VirtualMachineError}: out of memory, a
 * stack overflow, an internal error). Such an error is never a failure of the target: it is not
 * counted against any request, it ends the run, and the stages that finished before are kept.
 */
public final class JvmErrors {

    private JvmErrors() {}

    /**
     * The heap bound as {@code -Xmx} would name it, e.g. {@code 64 MiB}.
     *
     * @return the JVM's maximum heap
     */
    public static String maxHeap() {
        long bytes = maxHeapBytes();
        if (bytes == Long.MAX_VALUE) {
            return "unbounded";
        }
        double mib = bytes / (1024.0 * 1024.0);
        return mib >= 10_240
                ? String.format(Locale.ROOT, "%.1f GiB", mib / 1024)
                : String.format(Locale.ROOT, "%.0f MiB", mib);
    }

    /**
     * The configured heap bound: HotSpot's {@code MaxHeapSize} ({@code -Xmx}, or the default the
     * JVM chose), else {@link Runtime#maxMemory()} (which leaves out a survivor space with some
     * collectors: 62 MiB for {@code -Xmx64m} with the serial collector).
     */
    private static long maxHeapBytes() {
        try {
            return Long.parseLong(
                    java.lang.management.ManagementFactory.getPlatformMXBean(
                                    com.sun.management.HotSpotDiagnosticMXBean.class)
                            .getVMOption("MaxHeapSize")
                            .getValue());
        } catch (RuntimeException | LinkageError e) {
            return Runtime.getRuntime().maxMemory();
        }
    }

    /**
     * What happened, for the user: {@code the runner ran out of memory (-Xmx 64 MiB): Java heap
     * space}, or {@code the runner hit a JVM error (StackOverflowError)}.
     *
     * @param error the error
     * @return one line
     */
    public static String describe(VirtualMachineError error) {
        String message = error.getMessage();
        if (error instanceof OutOfMemoryError) {
            return "the runner ran out of memory (-Xmx "
                    + maxHeap()
                    + ")"
                    + (message == null || message.isBlank() ? "" : ": " + message);
        }
        return "the runner hit a JVM error ("
                + error.getClass().getSimpleName()
                + (message == null || message.isBlank() ? "" : ": " + message)
                + ")";
    }
}
