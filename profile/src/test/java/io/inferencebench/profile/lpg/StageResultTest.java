package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class StageResultTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ProfileContext CONTEXT =
            new ProfileContext(
                    "vllm",
                    "m",
                    "m",
                    "vllm",
                    java.time.Instant.parse("2026-12-06T00:00:00Z"),
                    "sweep",
                    "bench",
                    1,
                    "0.1.0",
                    java.util.Map.of());

    private static StageResult runner(
            int index, double rate, long firstDispatch, long lastCompletion) {
        StageResult s = new StageResult();
        s.stageIndex = 2;
        s.requestedRate = rate;
        s.concurrency = 8;
        s.numPromptsRequested = 3;
        s.firstDispatchEpochNanos = firstDispatch;
        s.lastDispatchEpochNanos = firstDispatch + 1_000;
        s.lastCompletionEpochNanos = lastCompletion;
        s.outputTokenSource = index == 0 ? "usage" : "tokenizer";
        s.inputTokenSource = "usage";
        s.sloTtftMs = 500.0;
        s.inFlightPeak = 3 + index;
        for (int i = 0; i < 3; i++) {
            StageResults.success(s, 100 * (i + 1) + index, 10 + i, 10, 20, 5, 6);
        }
        s.goodputRequests = 2;
        s.countFailure("timeout");
        s.warmupExcluded = 1;
        return s;
    }

    @Test
    void jsonRoundTripKeepsEveryFieldAndWritesInfForAnUnboundedRate() throws Exception {
        StageResult s = runner(0, Double.POSITIVE_INFINITY, 1_000_000_000L, 5_000_000_000L);
        String json = JSON.writeValueAsString(s);
        JsonNode tree = JSON.readTree(json);
        assertThat(tree.get("requestedRate").asText()).isEqualTo("inf");
        assertThat(tree.get("latencyMs").get("count").asLong()).isEqualTo(3);
        assertThat(json).doesNotContain("Infinity").doesNotContain("NaN");

        StageResult back = JSON.readValue(json, StageResult.class);
        assertThat(back.requestedRate).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(back.stageIndex).isEqualTo(2);
        assertThat(back.concurrency).isEqualTo(8);
        assertThat(back.sent).isEqualTo(3);
        assertThat(back.completed).isEqualTo(3);
        assertThat(back.failed).isEqualTo(1);
        assertThat(back.errorsByClass).containsEntry("timeout", 1L);
        assertThat(back.firstDispatchEpochNanos).isEqualTo(1_000_000_000L);
        assertThat(back.lastCompletionEpochNanos).isEqualTo(5_000_000_000L);
        assertThat(back.totalOutputTokens).isEqualTo(60);
        assertThat(back.outputTokenSource).isEqualTo("usage");
        assertThat(back.sloTtftMs).isEqualTo(500.0);
        assertThat(back.sloTpotMs).isNull();
        assertThat(back.goodputRequests).isEqualTo(2);
        assertThat(back.latencyMs.count()).isEqualTo(3);
        assertThat(back.latencyMs.exact()).isTrue();
        assertThat(back.latencyMs.percentile(99)).isEqualTo(s.latencyMs.percentile(99));
        assertThat(back.itlMs.count()).isEqualTo(6);
        assertThat(back.allExact()).isTrue();

        s.requestedRate = 12.5;
        assertThat(JSON.readTree(JSON.writeValueAsString(s)).get("requestedRate").doubleValue())
                .isEqualTo(12.5);
        assertThat(JSON.readValue("{\"requestedRate\":\"inf\"}", StageResult.class).requestedRate)
                .isInfinite();
    }

    @Test
    void mergeAddsSharesSpansTheWindowAndMergesRecorders() throws Exception {
        StageResult a = runner(0, 5, 1_000_000_000L, 5_000_000_000L);
        StageResult b = runner(1, 5, 900_000_000L, 6_000_000_000L);
        StageResult m =
                StageResult.merge(
                        List.of(
                                JSON.readValue(JSON.writeValueAsString(a), StageResult.class),
                                JSON.readValue(JSON.writeValueAsString(b), StageResult.class)));
        assertThat(m.stageIndex).isEqualTo(2);
        assertThat(m.requestedRate).isEqualTo(10.0);
        assertThat(m.concurrency).isEqualTo(16);
        assertThat(m.numPromptsRequested).isEqualTo(6);
        assertThat(m.sent).isEqualTo(6);
        assertThat(m.completed).isEqualTo(6);
        assertThat(m.failed).isEqualTo(2);
        assertThat(m.warmupExcluded).isEqualTo(2);
        assertThat(m.errorsByClass).containsEntry("timeout", 2L);
        assertThat(m.firstDispatchEpochNanos).isEqualTo(900_000_000L);
        assertThat(m.lastCompletionEpochNanos).isEqualTo(6_000_000_000L);
        assertThat(m.totalInputTokens).isEqualTo(60);
        assertThat(m.outputTokenSource).isEqualTo("tokenizer+usage");
        assertThat(m.inputTokenSource).isEqualTo("usage");
        assertThat(m.inFlightPeak).isEqualTo(7);
        assertThat(m.goodputRequests).isEqualTo(4);
        assertThat(m.runnerCount).isEqualTo(2);
        assertThat(m.latencyMs.count()).isEqualTo(6);
        // latencies 100,200,300 and 101,201,301: exact moments after merging snapshots
        assertThat(m.latencyMs.mean()).isCloseTo(200.5, within(1e-12));
        assertThat(m.latencyMs.min()).isEqualTo(100.0);
        assertThat(m.latencyMs.max()).isEqualTo(301.0);
        assertThat(m.latencyMs.exact()).isFalse();
        assertThat(m.allExact()).isFalse();

        StageResult inf =
                StageResult.merge(
                        List.of(
                                runner(0, Double.POSITIVE_INFINITY, 1, 2),
                                runner(1, Double.POSITIVE_INFINITY, 1, 2)));
        assertThat(inf.requestedRate).isInfinite();
    }

    @Test
    void requestsPerAddressSurviveJsonAndAddUpOnlyWhenEveryRunnerSpread() throws Exception {
        StageResult a = runner(0, 5, 1, 2);
        StageResult b = runner(1, 5, 1, 2);
        a.requestsPerAddress = new java.util.LinkedHashMap<>();
        a.requestsPerAddress.put("10.0.0.1:8000", 7L);
        a.requestsPerAddress.put("10.0.0.2:8000", 6L);
        b.requestsPerAddress = new java.util.LinkedHashMap<>();
        b.requestsPerAddress.put("10.0.0.2:8000", 7L);
        b.requestsPerAddress.put("10.0.0.1:8000", 6L);
        StageResult m =
                StageResult.merge(
                        List.of(
                                JSON.readValue(JSON.writeValueAsString(a), StageResult.class),
                                JSON.readValue(JSON.writeValueAsString(b), StageResult.class)));
        assertThat(m.requestsPerAddress)
                .containsExactly(
                        java.util.Map.entry("10.0.0.1:8000", 13L),
                        java.util.Map.entry("10.0.0.2:8000", 13L));
        // a runner that sent to one host: the merge cannot say where its requests went
        assertThat(StageResult.merge(List.of(a, runner(1, 5, 1, 2))).requestsPerAddress).isNull();
        // and the profile names each address and how even they were
        JsonNode metrics = LpgProfileWriter.write(m, CONTEXT).path("metrics");
        assertThat(metrics.path("requests_per_address").path("10.0.0.1:8000").asLong())
                .isEqualTo(13);
        assertThat(metrics.path("address_balance").path("max_min_ratio").asDouble()).isEqualTo(1.0);
        a.requestsPerAddress.put("10.0.0.3:8000", 0L);
        JsonNode uneven =
                LpgProfileWriter.write(a, CONTEXT).path("metrics").path("address_balance");
        assertThat(uneven.path("min_requests").asLong()).isZero();
        assertThat(uneven.has("max_min_ratio")).as("no ratio to a replica sent nothing").isFalse();
        assertThat(uneven.path("coefficient_of_variation").asDouble()).isGreaterThan(0.5);
    }

    @Test
    void addressesThatJoinedOrLeftAreTimedByTheFirstRunnerAndLeftOutOfTheBalance()
            throws Exception {
        // a replica (.3) left 4 s into the stage and its replacement (.4) joined 6 s in; each
        // runner pod heard of it at its own moment
        StageResult a = runner(0, 5, 1, 2);
        StageResult b = runner(1, 5, 1, 2);
        a.requestsPerAddress = new java.util.LinkedHashMap<>();
        a.requestsPerAddress.put("10.0.0.1:8000", 10L);
        a.requestsPerAddress.put("10.0.0.2:8000", 10L);
        a.requestsPerAddress.put("10.0.0.3:8000", 4L);
        a.requestsPerAddress.put("10.0.0.4:8000", 5L);
        a.addressesLeftAt = java.util.Map.of("10.0.0.3:8000", 4.5);
        a.addressesJoinedAt = java.util.Map.of("10.0.0.4:8000", 6.0);
        a.requestsRedirected = 1L;
        b.requestsPerAddress = new java.util.LinkedHashMap<>();
        b.requestsPerAddress.put("10.0.0.2:8000", 10L);
        b.requestsPerAddress.put("10.0.0.3:8000", 5L);
        b.requestsPerAddress.put("10.0.0.1:8000", 10L);
        b.requestsPerAddress.put("10.0.0.4:8000", 4L);
        b.addressesLeftAt = java.util.Map.of("10.0.0.3:8000", 4.0);
        b.addressesJoinedAt = java.util.Map.of("10.0.0.4:8000", 6.5);
        b.requestsRedirected = 0L;
        StageResult m =
                StageResult.merge(
                        List.of(
                                JSON.readValue(JSON.writeValueAsString(a), StageResult.class),
                                JSON.readValue(JSON.writeValueAsString(b), StageResult.class)));
        assertThat(m.addressesLeftAt).containsExactly(java.util.Map.entry("10.0.0.3:8000", 4.0));
        assertThat(m.addressesJoinedAt).containsExactly(java.util.Map.entry("10.0.0.4:8000", 6.0));
        assertThat(m.requestsRedirected).isEqualTo(1L);
        JsonNode metrics = LpgProfileWriter.write(m, CONTEXT).path("metrics");
        assertThat(metrics.at("/address_changes/left/10.0.0.3:8000").asDouble()).isEqualTo(4.0);
        assertThat(metrics.at("/address_changes/joined/10.0.0.4:8000").asDouble()).isEqualTo(6.0);
        assertThat(metrics.path("requests_redirected").asLong()).isEqualTo(1);
        // every address keeps its count; the balance is judged over the two there throughout
        assertThat(metrics.path("requests_per_address").size()).isEqualTo(4);
        JsonNode balance = metrics.path("address_balance");
        assertThat(balance.path("addresses").asInt()).isEqualTo(2);
        assertThat(balance.path("max_min_ratio").asDouble()).isEqualTo(1.0);
        assertThat(balance.path("partial").toString())
                .isEqualTo("[\"10.0.0.4:8000\",\"10.0.0.3:8000\"]");
        // without changes, no such keys
        StageResult still = runner(0, 5, 1, 2);
        still.requestsPerAddress = java.util.Map.of("10.0.0.1:8000", 3L);
        JsonNode plain = LpgProfileWriter.write(still, CONTEXT).path("metrics");
        assertThat(plain.has("address_changes")).isFalse();
        assertThat(plain.path("address_balance").has("partial")).isFalse();
    }

    @Test
    void mergeRefusesMixedStagesAndNothing() {
        StageResult a = runner(0, 5, 1, 2);
        StageResult b = runner(1, 5, 1, 2);
        b.stageIndex = 3;
        assertThatThrownBy(() -> StageResult.merge(List.of(a, b)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stage 3");
        assertThatThrownBy(() -> StageResult.merge(List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        StageResult c = runner(1, 5, 1, 2);
        c.sloTtftMs = 100.0;
        assertThatThrownBy(() -> StageResult.merge(List.of(a, c))).hasMessageContaining("SLO");
    }

    @Test
    void explicitNullsInJsonKeepTheEmptyDefaults() throws Exception {
        StageResult s =
                JSON.readValue(
                        "{\"stageIndex\":1,\"errorsByClass\":null,\"latencyMs\":null}",
                        StageResult.class);
        assertThat(s.errorsByClass).isEmpty();
        assertThat(s.latencyMs.count()).isZero();
        assertThat(s.requestedRate).isInfinite();
    }
}
