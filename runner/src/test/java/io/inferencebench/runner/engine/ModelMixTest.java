package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Drawing a model per request: by weight, reproducibly, the same for the same key. */
class ModelMixTest {

    @Test
    void drawsFollowTheWeightsAndDependOnlyOnSeedAndKey() {
        ModelMix mix = new ModelMix(List.of("a", "b", "c"), List.of(6.0, 3.0, 1.0));
        int[] counts = new int[3];
        int n = 100_000;
        for (int key = 0; key < n; key++) {
            int m = mix.draw(9, key);
            assertThat(mix.draw(9, key)).isEqualTo(m);
            counts[m]++;
        }
        // Binomial standard deviations at 100,000 draws are under 0.2 %.
        assertThat(counts[0] / (double) n).isBetween(0.59, 0.61);
        assertThat(counts[1] / (double) n).isBetween(0.29, 0.31);
        assertThat(counts[2] / (double) n).isBetween(0.095, 0.105);
        assertThat(mix.share(1)).isEqualTo(0.3);
        int differ = 0;
        for (int key = 0; key < 100; key++) {
            differ += mix.draw(9, key) != mix.draw(10, key) ? 1 : 0;
        }
        assertThat(differ).as("another seed draws otherwise").isPositive();
        assertThat(mix.describe()).isEqualTo("a:6 b:3 c:1");
        assertThat(new ModelMix(List.of("x"), List.of(0.5)).describe()).isEqualTo("x:0.5");
    }

    @Test
    void aMixNeedsAWeightAboveZeroPerModel() {
        assertThatThrownBy(() -> new ModelMix(List.of("a"), List.of(0.0)))
                .hasMessageContaining("every weight must be > 0");
        assertThatThrownBy(() -> new ModelMix(List.of("a", "b"), List.of(1.0)))
                .hasMessageContaining("one weight per model");
    }
}
