package io.inferencebench.runner.engine;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/**
 * Keeps the heap from shrinking to the live set after the collection that precedes each stage.
 *
 * <p>Why: a full collection shrinks the heap to about 1.7 times what is live (the default {@code
 * MaxHeapFreeRatio} of 70 %), some 56 MB for the runner, and G1 then sizes the young generation
 * from that small heap: a stage of 800 req/s ran into a young collection every second or two. With
 * 90 % of the heap kept free after a collection (the flags are manageable, so no launcher option is
 * needed), the same stage completed without any collection (-Xlog:gc). Costs a few hundred MB of
 * address space, bounded by {@code -Xmx} as always.
 */
public final class HeapHeadroom {

    private HeapHeadroom() {}

    /**
     * Applies the setting; returns false where the JVM does not allow it (then nothing changed).
     */
    public static boolean apply() {
        try {
            HotSpotDiagnosticMXBean hotspot =
                    ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            // Max first: Min may never exceed it.
            hotspot.setVMOption("MaxHeapFreeRatio", "95");
            hotspot.setVMOption("MinHeapFreeRatio", "90");
            return true;
        } catch (RuntimeException | LinkageError e) {
            // Not a HotSpot JVM, or the flags are not writable here: run with the defaults.
            return false;
        }
    }
}
