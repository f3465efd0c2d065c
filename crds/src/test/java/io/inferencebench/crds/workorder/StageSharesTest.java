package io.inferencebench.crds.workorder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.StageSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

class StageSharesTest {

    @Test
    void splitsCountsEvenlyWithRemainderOnLowIndexes() {
        assertThat(StageShares.split(10, 3)).containsExactly(4, 3, 3);
        assertThat(StageShares.split(2, 4)).containsExactly(1, 1, 0, 0);
        assertThat(StageShares.split(600, 2)).containsExactly(300, 300);
        for (int total : new int[] {1, 7, 999, 10_000}) {
            for (int parts : new int[] {1, 2, 3, 7, 1000}) {
                List<Integer> split = StageShares.split(total, parts);
                assertThat(split).hasSize(parts);
                assertThat(split.stream().mapToInt(Integer::intValue).sum()).isEqualTo(total);
                assertThat(split.getFirst() - split.getLast()).isBetween(0, 1);
            }
        }
    }

    @Test
    void sharesEachStageAcrossPods() {
        LoadSpec load = new LoadSpec();
        load.setStages(
                List.of(StageSpec.rate(5, 601, null), StageSpec.concurrency(33, null, "60s")));
        List<StageShare> shares = StageShares.of(load, 2);
        assertThat(shares).hasSize(2);
        StageShare first = shares.get(0);
        assertThat(first.stage()).isEqualTo(1);
        assertThat(first.ratePerPod()).isEqualTo(2.5);
        assertThat(first.promptsPerPod()).containsExactly(301, 300);
        assertThat(first.concurrencyPerPod()).isNull();
        StageShare second = shares.get(1);
        assertThat(second.stage()).isEqualTo(2);
        assertThat(second.ratePerPod()).isNull();
        assertThat(second.concurrencyPerPod()).containsExactly(17, 16);
        assertThat(second.duration()).isEqualTo("60s");
    }

    @Test
    void repeatsAreStagesOfTheirOwnInterleaved() {
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(2.0, 8.0));
        load.setNumPrompts(100);
        load.setRepeats(3);
        List<StageShare> shares = StageShares.of(load, 2);
        assertThat(shares).extracting(StageShare::stage).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(shares)
                .extracting(StageShare::ratePerPod)
                .containsExactly(1.0, 4.0, 1.0, 4.0, 1.0, 4.0);
        assertThat(shares.get(4).promptsPerPod()).containsExactly(50, 50);
    }

    @Test
    void rejectsZeroPods() {
        assertThatThrownBy(() -> StageShares.of(new LoadSpec(), 0))
                .hasMessageContaining("parallelism");
    }
}
