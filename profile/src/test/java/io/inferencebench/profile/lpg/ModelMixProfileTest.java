package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.stats.MetricRecorder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A model mix's per-model figures in the profile, and merged across runner pods. */
class ModelMixProfileTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final ProfileContext CONTEXT =
            new ProfileContext(
                    "openai", "sim", null, null, Instant.EPOCH, null, null, 1, "0.1.0", Map.of());

    /** One pod's stage: {@code n} requests per model, model i's TTFTs {@code base + 1000 i + k}. */
    private static StageResult pod(int n, int base, String... names) {
        StageResult s = new StageResult();
        StageResults.success(s, 10, 1, 10, 16, 5);
        ModelMixProfile p = new ModelMixProfile();
        p.ttftMs = new ArrayList<>();
        p.e2elMs = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            MetricRecorder ttft = new MetricRecorder();
            MetricRecorder e2el = new MetricRecorder();
            for (int k = 0; k < n; k++) {
                ttft.record(base + 1000 * i + k);
                e2el.record(10 * (base + 1000 * i + k));
            }
            p.ttftMs.add(ttft);
            p.e2elMs.add(e2el);
            p.models.add(
                    new ModelMixProfile.Model(
                            names[i],
                            1.0 / names.length,
                            n,
                            n,
                            0,
                            16L * n,
                            ttft.percentile(50),
                            ttft.percentile(99),
                            e2el.percentile(50),
                            e2el.percentile(99),
                            new ModelMixProfile.ModelSlo(null, null, 1e9, 0.9, n - i)));
        }
        s.byModel = p;
        return s;
    }

    @Test
    void theProfileCarriesEveryModelButNotTheRecorders() {
        JsonNode m = LpgProfileWriter.write(pod(4, 100, "base", "lora"), CONTEXT).at("/metrics");
        assertThat(m.at("/by_model/base/share").asDouble()).isEqualTo(0.5);
        assertThat(m.at("/by_model/lora/requests_sent").asLong()).isEqualTo(4);
        assertThat(m.at("/by_model/lora/output_tokens").asLong()).isEqualTo(64);
        assertThat(m.at("/by_model/lora/ttft_ms_p50").asDouble()).isEqualTo(1101.5);
        assertThat(m.at("/by_model/base").has("ttftMs")).isFalse();
        // base: 4 of 4 good; lora: 3 of 4, below its minimum attainment of 0.9.
        assertThat(m.at("/by_model/base/slo/attainment").asDouble()).isEqualTo(1.0);
        assertThat(m.at("/by_model/base/slo/met").asBoolean()).isTrue();
        assertThat(m.at("/by_model/lora/slo/attainment").asDouble()).isEqualTo(0.75);
        assertThat(m.at("/by_model/lora/slo/met").asBoolean()).isFalse();
        assertThat(m.at("/by_model/lora/slo/e2el_ms").asDouble()).isEqualTo(1e9);
        assertThat(m.at("/by_model/lora/slo").has("ttft_ms")).isFalse();
        StageResult single = pod(4, 100, "base");
        single.byModel = null;
        assertThat(LpgProfileWriter.write(single, CONTEXT).at("/metrics").has("by_model"))
                .isFalse();
    }

    @Test
    void podsMergeTheirModelsThroughTheirPartsJson() throws Exception {
        StageResult a =
                JSON.readValue(
                        JSON.writeValueAsString(pod(100, 100, "base", "lora")), StageResult.class);
        StageResult b =
                JSON.readValue(
                        JSON.writeValueAsString(pod(50, 300, "base", "lora")), StageResult.class);
        ModelMixProfile m = StageResult.merge(List.of(a, b)).byModel;
        assertThat(m.models)
                .extracting(ModelMixProfile.Model::name)
                .containsExactly("base", "lora");
        assertThat(m.models.get(0).sent()).isEqualTo(150);
        assertThat(m.models.get(1).outputTokens()).isEqualTo(16L * 150);
        // Good requests add up: 99 + 49 of 150 for the second model.
        assertThat(m.models.get(1).slo().good()).isEqualTo(148);
        assertThat(m.models.get(1).sloAttainment()).isEqualTo(148 / 150.0);
        // TTFTs 100..199 and 300..349: the median of all 150 is 174.5, neither pod's.
        assertThat(m.models.get(0).ttftP50Ms())
                .isCloseTo(174.5, org.assertj.core.data.Offset.offset(0.5));
        StageResult other = pod(5, 100, "base", "other");
        assertThatThrownBy(() -> StageResult.merge(List.of(a, other)))
                .hasMessageContaining("different model mixes");
    }
}
