package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.stats.MetricRecorder;
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
    void theRampSurvivesJsonAndAOneRunnerMerge() throws Exception {
        StageResult back = JSON.readValue(JSON.writeValueAsString(ramped()), StageResult.class);
        assertThat(back.rampUp.strategy).isEqualTo("linear");
        assertThat(back.rampUp.windows).isEqualTo(ramped().rampUp.windows);
        assertThat(StageResult.merge(List.of(back)).rampUp.windows).hasSize(2);
    }

    /** One pod's ramp over a 4 s stage, its two windows' latencies {@code base + 0..n-1} ms. */
    private static StageResult podRamp(double share, int base) {
        StageResult s = ramped();
        RampProfile ramp = s.rampUp;
        ramp.startRate = 5 * share;
        ramp.endRate = 50 * share;
        ramp.windowTtftMs = new java.util.ArrayList<>();
        ramp.windowE2elMs = new java.util.ArrayList<>();
        for (int w = 0; w < 2; w++) {
            MetricRecorder ttft = new MetricRecorder();
            MetricRecorder e2el = new MetricRecorder();
            for (int i = 0; i < 100; i++) {
                ttft.record(base + w * 1000 + i);
                e2el.record(10 * (base + w * 1000 + i));
            }
            ramp.windowTtftMs.add(ttft);
            ramp.windowE2elMs.add(e2el);
        }
        return s;
    }

    @Test
    void podsThatRampedOverTheDurationMergeTheirWindowsExactly() throws Exception {
        // As the operator reads them: each pod's result through its part ConfigMap's JSON.
        StageResult a =
                JSON.readValue(JSON.writeValueAsString(podRamp(0.5, 100)), StageResult.class);
        StageResult b =
                JSON.readValue(JSON.writeValueAsString(podRamp(0.5, 200)), StageResult.class);
        RampProfile m = StageResult.merge(List.of(a, b)).rampUp;
        assertThat(m.startRate).isEqualTo(5.0);
        assertThat(m.endRate).isEqualTo(50.0);
        assertThat(m.windowsOmitted).isNull();
        assertThat(m.windows).hasSize(2);
        RampProfile.Window first = m.windows.get(0);
        assertThat(first.startSeconds()).isZero();
        assertThat(first.endSeconds()).isEqualTo(2.0);
        assertThat(first.rampRate()).isEqualTo(20.0);
        assertThat(first.due()).isEqualTo(42);
        assertThat(first.scheduledRate()).isEqualTo(21.0);
        assertThat(first.sent()).isEqualTo(40);
        assertThat(first.achievedRate()).isEqualTo(20.0);
        assertThat(first.completed()).isEqualTo(38);
        assertThat(first.failed()).isEqualTo(2);
        // The pods' 200 TTFTs are 100..199 and 200..299: the median of all is 199.5 (or the
        // histogram's value within 2^-10 of it), not either pod's.
        assertThat(first.ttftP50Ms()).isCloseTo(199.5, org.assertj.core.data.Offset.offset(0.5));
        assertThat(first.ttftP99Ms()).isCloseTo(297.5, org.assertj.core.data.Offset.offset(0.5));
        assertThat(m.windows.get(1).e2elP50Ms())
                .isCloseTo(11995.0, org.assertj.core.data.Offset.offset(12.0));
        JsonNode profile = LpgProfileWriter.write(StageResult.merge(List.of(a, b)), CONTEXT);
        assertThat(profile.path("metrics").path("ramp_up_windows")).hasSize(2);
        // The recorders travel between pod and operator only.
        assertThat(profile.path("metrics").path("ramp_up_windows").get(0)).hasSize(13);
        assertThat(profile.path("config").path("ramp_up")).hasSize(4);
        assertThat(profile.toString()).doesNotContain("windowTtftMs").doesNotContain("window_");
    }

    @Test
    void podsThatRampedOverTheirOwnRequestsKeepTheRampButSayWhyTheWindowsAreMissing() {
        StageResult a = podRamp(0.5, 100);
        StageResult b = podRamp(0.5, 200);
        a.rampUp.over = "requests";
        b.rampUp.over = "requests";
        b.rampUp.windows =
                List.of(
                        new RampProfile.Window(
                                0, 2.1, null, 21, 10, 20, 9.5, 19, 1, 12.5, 30.0, 40.0, 90.0),
                        new RampProfile.Window(
                                2.1, 4.2, null, 78, 37, 79, 37, 79, 0, null, null, 41.0, 95.0));
        RampProfile m = StageResult.merge(List.of(a, b)).rampUp;
        assertThat(m.endRate).isEqualTo(50.0);
        assertThat(m.windows).isEmpty();
        assertThat(m.windowsOmitted).contains("give the stage a duration");
        JsonNode profile = LpgProfileWriter.write(StageResult.merge(List.of(a, b)), CONTEXT);
        assertThat(profile.path("config").path("ramp_up").path("windows_omitted").asText())
                .contains("own requests");
        assertThat(profile.path("metrics").has("ramp_up_windows")).isFalse();
    }

    @Test
    void aPodThatHadNothingToSendAddsNothingToTheRamp() {
        StageResult empty = new StageResult();
        RampProfile m = StageResult.merge(List.of(podRamp(0.5, 100), empty)).rampUp;
        assertThat(m.startRate).isEqualTo(2.5);
        assertThat(m.endRate).isEqualTo(25.0);
        assertThat(m.windows).hasSize(2);
        assertThat(StageResult.merge(List.of(new StageResult(), new StageResult())).rampUp)
                .isNull();
    }

    @Test
    void partsThatRampedDifferentlyAreRefused() {
        StageResult constant = ramped();
        constant.rampUp = null;
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> StageResult.merge(List.of(ramped(), constant)))
                .hasMessageContaining("ramped differently");
    }
}
