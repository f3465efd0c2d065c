package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class HeapHeadroomTest {

    @Test
    void setsTheHeapFreeRatiosOnHotSpot() {
        HotSpotDiagnosticMXBean hotspot =
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        String min = hotspot.getVMOption("MinHeapFreeRatio").getValue();
        String max = hotspot.getVMOption("MaxHeapFreeRatio").getValue();
        try {
            assertThat(HeapHeadroom.apply()).isTrue();
            assertThat(hotspot.getVMOption("MinHeapFreeRatio").getValue()).isEqualTo("90");
            assertThat(hotspot.getVMOption("MaxHeapFreeRatio").getValue()).isEqualTo("95");
        } finally {
            hotspot.setVMOption("MinHeapFreeRatio", min);
            hotspot.setVMOption("MaxHeapFreeRatio", max);
        }
    }
}
