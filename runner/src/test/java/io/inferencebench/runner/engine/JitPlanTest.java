package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class JitPlanTest {

    @Test
    void autoExcludesC2OnlyOnOneCpu() {
        assertThat(JitPlan.excludeC2(JitPlan.Mode.AUTO, 1)).isTrue();
        assertThat(JitPlan.excludeC2(JitPlan.Mode.AUTO, 2)).isFalse();
        assertThat(JitPlan.excludeC2(JitPlan.Mode.C1, 8)).isTrue();
        assertThat(JitPlan.excludeC2(JitPlan.Mode.TIERED, 1)).isFalse();
    }

    @Test
    void theModeComesFromTheSystemPropertyAndUnknownValuesNameTheAllowedOnes() {
        String before = System.getProperty("inferencebench.jit");
        try {
            System.clearProperty("inferencebench.jit");
            assertThat(JitPlan.mode()).isEqualTo(JitPlan.Mode.AUTO);
            System.setProperty("inferencebench.jit", " C1 ");
            assertThat(JitPlan.mode()).isEqualTo(JitPlan.Mode.C1);
            System.setProperty("inferencebench.jit", "off");
            assertThatThrownBy(JitPlan::mode)
                    .hasMessage("-Dinferencebench.jit=off: allowed are auto, c1, tiered");
        } finally {
            if (before == null) {
                System.clearProperty("inferencebench.jit");
            } else {
                System.setProperty("inferencebench.jit", before);
            }
        }
    }
}
