package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.stats.MetricRecorder;
import io.inferencebench.runner.backend.OpenAiCompletions;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class SampleCapTest {

    @Test
    void beyondTheCapRecordersSwitchToHistogramsAndStopGrowing() throws Exception {
        int cap = 200;
        try (StubServer server = new StubServer(new OpenAiStub(0, 0, true));
                EngineFixture f =
                        new EngineFixture(
                                server.baseUrl(),
                                new OpenAiCompletions(),
                                true,
                                5,
                                Duration.ofSeconds(10),
                                Slo.NONE,
                                cap)) {
            StageResult small = f.engine.runStage(EngineFixture.closed(4, 150));
            assertThat(small.latencyMs.exact()).isTrue();
            assertThat(small.itlMs.exact()).isFalse(); // 150 * 4 gaps > cap
            StageResult big = f.engine.runStage(EngineFixture.closed(8, 3000));
            assertThat(big.completed).isEqualTo(3000);
            for (MetricRecorder r : big.recorders().values()) {
                if (r.count() > 0) {
                    assertThat(r.retainedSampleSlots()).isLessThanOrEqualTo(cap);
                }
            }
            assertThat(big.latencyMs.exact()).isFalse();
            assertThat(big.latencyMs.count()).isEqualTo(3000);
            assertThat(big.itlMs.count()).isEqualTo(3000 * 4);
            // Percentiles still come out (from the histogram), consistent with the exact moments.
            assertThat(big.latencyMs.percentile(50))
                    .isBetween(big.latencyMs.min(), big.latencyMs.max());
            ProfileContext context =
                    new ProfileContext(
                            "vllm", "m", null, null, Instant.now(), null, null, 1, "t", null);
            var doc = LpgProfileWriter.write(big, context);
            assertThat(doc.at("/metrics/statistics_mode").asText()).isEqualTo("histogram-merged");
            assertThat(
                            LpgProfileWriter.write(small, context)
                                    .at("/metrics/statistics_mode")
                                    .asText())
                    .isEqualTo("histogram-merged");
        }
    }
}
