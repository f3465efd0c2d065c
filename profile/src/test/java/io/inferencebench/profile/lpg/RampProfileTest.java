package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A ramped stage's ramp and windows in its profile, and through a part ConfigMap's JSON. */
class RampProfileTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long T0 =
            Instant.parse("2026-12-05T10:00:00Z").toEpochMilli() * 1_000_000L;

    private static final ProfileContext CONTEXT =
            new ProfileContext(
                    "openai", "sim", null, null, Instant.EPOCH, null, null, 1, "0.1.0", Map.of());

    private static StageResult ramped() {
        StageResult s = new StageResult();
        s.requestedRate = 27.5;
        s.firstDispatchEpochNanos = T0;
        s.lastDispatchEpochNanos = T0 + 3_900_000_000L;
        s.lastCompletionEpochNanos = T0 + 4_000_000_000L;
        StageResults.success(s, 10, 1, 10, 16, 5);
        RampProfile ramp = new RampProfile();
        ramp.strategy = "linear";
        ramp.startRate = 5;
        ramp.endRate = 50;
        ramp.over = "duration";
        ramp.windows =
                List.of(
                        new RampProfile.Window(
                                0, 2, 10.0, 21, 10.5, 20, 10.0, 19, 1, 12.5, 30.0, 40.0, 90.0),
                        new RampProfile.Window(
                                2, 4, 38.75, 78, 39.0, 79, 39.5, 79, 0, null, null, 41.0, 95.0));
        s.rampUp = ramp;
        return s;
    }

    @Test
    void theProfileCarriesTheRampInConfigAndItsWindowsInMetrics() {
        JsonNode profile = LpgProfileWriter.write(ramped(), CONTEXT);
        JsonNode ramp = profile.path("config").path("ramp_up");
        assertThat(ramp.path("strategy").asText()).isEqualTo("linear");
        assertThat(ramp.path("start_rate").asDouble()).isEqualTo(5.0);
        assertThat(ramp.path("end_rate").asDouble()).isEqualTo(50.0);
        assertThat(ramp.path("over").asText()).isEqualTo("duration");
        JsonNode windows = profile.path("metrics").path("ramp_up_windows");
        assertThat(windows).hasSize(2);
        JsonNode first = windows.get(0);
        assertThat(first.path("end_s").asDouble()).isEqualTo(2.0);
        assertThat(first.path("ramp_rate").asDouble()).isEqualTo(10.0);
        assertThat(first.path("requests_due").asLong()).isEqualTo(21);
        assertThat(first.path("scheduled_rate").asDouble()).isEqualTo(10.5);
        assertThat(first.path("requests_sent").asLong()).isEqualTo(20);
        assertThat(first.path("failures").asLong()).isEqualTo(1);
        assertThat(first.path("ttft_ms_p99").asDouble()).isEqualTo(30.0);
        // a window without a measured TTFT has none, rather than a zero
        assertThat(windows.get(1).has("ttft_ms_p50")).isFalse();
        assertThat(windows.get(1).path("e2el_ms_p99").asDouble()).isEqualTo(95.0);
        // LPG's request_rate keeps its meaning of one number: the ramp's mean
        assertThat(profile.path("metrics").path("request_rate").asDouble()).isEqualTo(27.5);
        assertThat(LpgProfileWriter.fileName(ramped(), CONTEXT)).startsWith("openai-5.0-50.0qps-");
    }

    @Test
    void aConstantRateStageHasNoRampKeys() {
        StageResult s = ramped();
        s.rampUp = null;
        JsonNode profile = LpgProfileWriter.write(s, CONTEXT);
        assertThat(profile.path("config").has("ramp_up")).isFalse();
        assertThat(profile.path("metrics").has("ramp_up_windows")).isFalse();
        assertThat(LpgProfileWriter.fileName(s, CONTEXT)).startsWith("openai-27.5qps-");
    }

    @Test
    void theRampSurvivesJsonAndAOneRunnerMergeButNotAMergeOfSeveral() throws Exception {
        StageResult back = JSON.readValue(JSON.writeValueAsString(ramped()), StageResult.class);
        assertThat(back.rampUp.strategy).isEqualTo("linear");
        assertThat(back.rampUp.windows).isEqualTo(ramped().rampUp.windows);
        assertThat(StageResult.merge(List.of(back)).rampUp.windows).hasSize(2);
        assertThat(StageResult.merge(List.of(ramped(), ramped())).rampUp).isNull();
    }
}
