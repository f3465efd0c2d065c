package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.stats.MetricRecorder;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PartJsonTest {

    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /** {@code requests} streamed requests of {@code tokens} output tokens each. */
    private static StageResult stage(int requests, int tokens, long seed) {
        Random random = new Random(seed);
        StageResult r = new StageResult();
        for (int i = 0; i < requests; i++) {
            double ttft = 20 * Math.exp(random.nextGaussian() * 0.5);
            double latency = ttft;
            for (int t = 1; t < tokens; t++) {
                double gap = 5 + random.nextDouble();
                r.itlMs.record(gap);
                latency += gap;
            }
            r.completed++;
            r.ttftMs.record(ttft);
            r.latencyMs.record(latency);
            r.tpotMs.record((latency - ttft) / Math.max(1, tokens - 1));
            r.inputLen.record(100 + random.nextInt(50));
            r.outputLen.record(tokens);
        }
        return r;
    }

    private static int bytes(String json) {
        return json.getBytes(StandardCharsets.UTF_8).length;
    }

    @Test
    void aSmallStageCarriesEveryRecordersSamplesAndReadsBackExact() throws Exception {
        StageResult result = stage(500, 20, 1);
        String json = PartJson.write(result);
        JsonNode tree = JSON.readTree(json);
        assertThat(tree.at("/ttftMs/samples").isTextual()).isTrue();
        assertThat(tree.at("/itlMs/samples").isTextual()).isTrue();
        StageResult back = JSON.readValue(json, StageResult.class);
        back.recorders()
                .forEach(
                        (name, r) -> {
                            MetricRecorder sent = result.recorders().get(name);
                            if (sent.count() > 0) {
                                MetricRecorder merged = new MetricRecorder().merge(r);
                                assertThat(merged.exact()).as(name).isTrue();
                                assertThat(merged.percentile(99))
                                        .as(name)
                                        .isEqualTo(sent.percentile(99));
                            }
                        });
        // The profile's own JSON of the same result never carries samples.
        assertThat(new ObjectMapper().writeValueAsString(result)).doesNotContain("samples");
    }

    @Test
    void theLargestRecordersDropTheirSamplesFirstToStayWithinTheBudget() throws Exception {
        // 3,000 requests of 40 tokens: 117,000 gaps, more than ITL's samples may take
        StageResult result = stage(3_000, 40, 2);
        String json = PartJson.write(result);
        assertThat(bytes(json)).isLessThanOrEqualTo(PartJson.SAMPLES_BUDGET_BYTES);
        JsonNode tree = JSON.readTree(json);
        assertThat(tree.at("/itlMs/samples").isMissingNode()).isTrue();
        assertThat(tree.at("/ttftMs/samples").isTextual()).isTrue();
        assertThat(tree.at("/latencyMs/samples").isTextual()).isTrue();
        StageResult back = JSON.readValue(json, StageResult.class);
        assertThat(new MetricRecorder().merge(back.ttftMs).exact()).isTrue();
        assertThat(new MetricRecorder().merge(back.itlMs).exact()).isFalse();
    }

    @Test
    void aStageTooLargeForSomeLatenciesStillCarriesWhatDeflatesSmall() throws Exception {
        // 40,000 requests: the latencies' samples do not fit, the token counts' (one value
        // repeated) do
        StageResult result = stage(40_000, 2, 3);
        String json = PartJson.write(result);
        assertThat(bytes(json)).isLessThanOrEqualTo(PartJson.SAMPLES_BUDGET_BYTES);
        JsonNode tree = JSON.readTree(json);
        assertThat(tree.at("/outputLen/samples").isTextual()).isTrue();
        assertThat(tree.at("/ttftMs/samples").isMissingNode()).isTrue();
        assertThat(tree.at("/latencyMs/samples").isMissingNode()).isTrue();
    }

    @Test
    void aStageWhoseRecordersHaveNoSamplesLeftIsWrittenAsItsPlainJson() throws Exception {
        StageResult result = new StageResult(10);
        for (int i = 0; i < 50; i++) {
            double v = i * 1.5;
            result.recorders().values().forEach(r -> r.record(v));
        }
        String json = PartJson.write(result);
        assertThat(json.contains("\"samples\"")).isFalse();
        assertThat(json.equals(new ObjectMapper().writeValueAsString(result))).isTrue();
    }
}
