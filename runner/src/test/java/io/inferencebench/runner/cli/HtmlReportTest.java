package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.profile.lpg.LpgDialect;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The report's page for what a browser test cannot tell apart cheaply: what is absent. */
class HtmlReportTest {

    private static final ProfileContext CONTEXT =
            new ProfileContext(
                    "openai",
                    "m",
                    null,
                    "openai",
                    Instant.parse("2026-01-01T00:00:00Z"),
                    null,
                    null,
                    1,
                    "test",
                    Map.of());

    private static final long T0 = 1_767_225_600_000_000_000L;

    /** Stage {@code index} at {@code rate}: 20 requests of 50 ms to the first token, or failed. */
    /** The page of one run of one stage's profile. */
    private static String renderOne(JsonNode profile) {
        return HtmlReport.render(
                List.of(new HtmlReport.Run("run", List.of(profile), List.of("p.json"), null)),
                null,
                "test");
    }

    private static JsonNode stage(int index, double rate, boolean allFailed) {
        return stage(index, rate, allFailed, LpgDialect.SEED);
    }

    private static JsonNode stage(int index, double rate, boolean allFailed, LpgDialect dialect) {
        StageResult s = new StageResult();
        s.stageIndex = index;
        s.requestedRate = rate;
        s.firstDispatchEpochNanos = T0;
        s.lastDispatchEpochNanos = T0 + 2_000_000_000L;
        s.lastCompletionEpochNanos = T0 + 2_100_000_000L;
        for (int i = 0; i < 20; i++) {
            s.sent++;
            if (allFailed) {
                s.countFailure("http_5xx");
                continue;
            }
            s.completed++;
            s.ttftMs.record(50 + i);
            s.itlMs.record(10);
            s.tpotMs.record(10);
            s.latencyMs.record(90 + i);
            s.perTokenLatencySec.record(0.01);
            s.perOutputTokenLatencyMs.record(20);
            s.inputLen.record(8);
            s.outputLen.record(5);
            s.totalInputTokens += 8;
            s.totalOutputTokens += 5;
        }
        return LpgProfileWriter.write(s, CONTEXT, null, dialect);
    }

    /**
     * A profile in LPG's final dialect, whose throughput is output tokens per second: the req/s
     * column shows its throughput_rps (before: 47.62 "req/s", its token rate), as for the seed's.
     */
    @Test
    void theRequestsPerSecondColumnReadsThroughputRpsInTheFinalDialect() {
        for (LpgDialect dialect : LpgDialect.values()) {
            JsonNode profile = stage(0, 10, false, dialect);
            // 20 requests of 5 output tokens over 2.1 s
            assertThat(profile.at("/metrics/throughput").asDouble())
                    .isEqualTo(dialect == LpgDialect.FINAL ? 100 / 2.1 : 20 / 2.1);
            // a closed-loop stage (no achieved rate) is placed by its request rate as well
            ((com.fasterxml.jackson.databind.node.ObjectNode) profile.get("metrics"))
                    .put("achieved_rate", 0.0);
            assertThat(HtmlReport.rate(profile.get("metrics"))).isEqualTo(20 / 2.1);
            String html = renderOne(profile);
            List<String> cells = cells(html, 1);
            assertThat(cells.get(5)).as(dialect + " req/s").isEqualTo(HtmlReport.num(20 / 2.1));
            assertThat(cells.get(6))
                    .as(dialect + " out tok/s")
                    .isEqualTo(HtmlReport.num(100 / 2.1));
        }
    }

    @Test
    void replicaBalanceShowsWhoServedAndTheVerdictOnlyWhenTheProfileSaysIt() {
        JsonNode plain = stage(0, 10, false);
        String without = renderOne(plain);
        assertThat(without).doesNotContain("Replica balance");
        JsonNode profile = stage(0, 10, false);
        com.fasterxml.jackson.databind.node.ObjectNode m =
                (com.fasterxml.jackson.databind.node.ObjectNode) profile.get("metrics");
        m.putObject("requests_per_address").put("10.0.0.1:8000", 10).put("10.0.0.2:8000", 10);
        com.fasterxml.jackson.databind.node.ObjectNode b = m.putObject("replica_balance");
        b.putObject("served").put("sim-a", 15).put("sim-b", 5);
        b.putObject("shares").put("sim-a", 0.75).put("sim-b", 0.25);
        b.put("balanced", false);
        b.put("reason", "replica sim-a served 15, 3.00x <b>");
        String html = renderOne(profile);
        assertThat(html)
                .contains("<h3>Replica balance</h3>")
                .contains("sim-a: 15 (75")
                .contains("sim-b: 5 (25")
                .contains("10.0.0.1:8000: 10, 10.0.0.2:8000: 10")
                .contains("uneven: replica sim-a served 15, 3.00x &lt;b&gt;");
        // an address that left and one that joined during the stage say when
        m.putObject("requests_per_address")
                .put("10.0.0.1:8000", 4)
                .put("10.0.0.2:8000", 10)
                .put("10.0.0.3:8000", 6);
        com.fasterxml.jackson.databind.node.ObjectNode changes = m.putObject("address_changes");
        changes.putObject("left").put("10.0.0.1:8000", 4.04);
        changes.putObject("joined").put("10.0.0.3:8000", 6.25);
        assertThat(renderOne(profile))
                .contains(
                        "10.0.0.1:8000: 4 (left at 4.0 s), 10.0.0.2:8000: 10,"
                                + " 10.0.0.3:8000: 6 (joined at 6.3 s)");
    }

    @Test
    void thePrefixCacheStateAndTheReuseTheServersCountedAreShownPerStage() {
        JsonNode plain = stage(0, 10, false);
        assertThat(renderOne(plain)).doesNotContain("Prefix cache");
        JsonNode profile = stage(0, 10, false);
        ((com.fasterxml.jackson.databind.node.ObjectNode) profile.get("dimensions"))
                .put("prefix_cache", "cold");
        com.fasterxml.jackson.databind.node.ObjectNode cache =
                ((com.fasterxml.jackson.databind.node.ObjectNode) profile.get("metrics"))
                        .putObject("prefix_cache");
        cache.put("hits", 3456).put("queries", 4800).put("hit_rate", 0.72);
        cache.putObject("by_replica")
                .putObject("10.0.0.1:8000")
                .put("hits", 3456)
                .put("queries", 4800)
                .put("hit_rate", 0.72);
        String html = renderOne(profile);
        assertThat(html)
                .contains("<h3>Prefix cache</h3>")
                .contains("<td>cold</td><td>3456 / 4800 (72.0 %)</td>")
                .contains("<td>10.0.0.1:8000: 3456 / 4800 (72.0 %)</td>");
    }

    @Test
    void aConversationStageShowsItsSessionsAndEveryTurn() {
        assertThat(renderOne(stage(0, 10, false))).doesNotContain("Conversations");
        com.fasterxml.jackson.databind.ObjectMapper json =
                new com.fasterxml.jackson.databind.ObjectMapper();
        JsonNode profile = stage(0, 10, false);
        com.fasterxml.jackson.databind.node.ObjectNode c =
                ((com.fasterxml.jackson.databind.node.ObjectNode) profile.get("metrics"))
                        .putObject("conversation");
        c.put("sessions_started", 10)
                .put("sessions_completed", 8)
                .put("sessions_abandoned", 1)
                .put("sessions_cut", 1);
        c.putArray("turns")
                .add(
                        json.createObjectNode()
                                .put("turn", 1)
                                .put("prompt_tokens_mean", 20.0)
                                .put("ttft_ms_p50", 12.5)
                                .put("ttft_ms_p99", 30.0))
                .add(json.createObjectNode().put("turn", 2));
        assertThat(renderOne(profile))
                .contains("<h3>Conversations</h3>")
                .contains("<td>8 / 10 (1, 1)</td>")
                .contains("1: 20.00, 12.50 / 30.00; 2: -, - / -");
    }

    @Test
    void aModelMixShowsEveryModelOfEachStage() {
        assertThat(renderOne(stage(0, 10, false))).doesNotContain("By model");
        JsonNode profile = stage(0, 10, false);
        com.fasterxml.jackson.databind.node.ObjectNode models =
                ((com.fasterxml.jackson.databind.node.ObjectNode) profile.get("metrics"))
                        .putObject("by_model");
        models.putObject("base")
                .put("share", 0.75)
                .put("requests_sent", 30)
                .put("failures", 1)
                .put("ttft_ms_p50", 12.5)
                .put("ttft_ms_p99", 30.0);
        models.putObject("<lora>").put("share", 0.25).put("requests_sent", 10).put("failures", 0);
        assertThat(renderOne(profile))
                .contains("<h3>By model</h3>")
                .contains("<td>base</td><td>75.0 %</td><td>30 (1)</td><td>12.50 / 30.00</td>")
                .contains("<td>&lt;lora&gt;</td><td>25.0 %</td><td>10 (0)</td><td>- / -</td>");
    }

    @Test
    void aStageWithoutASuccessfulRequestHasNoLatencyPointOrZeroInTheTable() {
        HtmlReport.Run run =
                new HtmlReport.Run(
                        "run",
                        List.of(stage(0, 10, false), stage(1, 20, true)),
                        List.of("ok.json", "failed.json"),
                        null);
        String html = HtmlReport.render(List.of(run), null, "test");

        // The failed stage's row: its counts, but no latency, and says why.
        List<String> cells = cells(html, 2);
        // stage, rate, achieved, ok, failed, req/s, out tok/s, then seven latencies, SLO
        assertThat(cells.get(3)).isEqualTo("0");
        assertThat(cells.get(4)).isEqualTo("20");
        // Before: "0" in each of them, as if the server answered in no time.
        assertThat(cells.subList(7, 14)).as(html).allMatch(c -> c.equals("-"), "latency cells");
        assertThat(row(html, 2)).contains("no successful request");

        // The stage that succeeded has its numbers.
        assertThat(cells(html, 1).get(7)).isEqualTo("59.50");
        assertThat(row(html, 1)).doesNotContain("no successful");

        // No plotted point of the failed stage, none at 0 ms.
        List<String> points =
                Pattern.compile("<circle class=\"point\"[^>]*>")
                        .matcher(html)
                        .results()
                        .map(r -> r.group())
                        .toList();
        assertThat(points).isNotEmpty();
        assertThat(points).noneMatch(p -> p.contains("data-stage=\"2\""));
        assertThat(points).noneMatch(p -> p.contains("data-value=\"0.0\""));
    }

    @Test
    void aProfileOfAnotherWriterWithoutCountsButNoCompletedRequestHasNoPoint() {
        // LPG's own profiles have no count_* keys: "completed": 0 (or no completed requests)
        // must still not become a point at 0 ms.
        com.fasterxml.jackson.databind.node.ObjectNode failed =
                (com.fasterxml.jackson.databind.node.ObjectNode) stage(1, 20, true);
        com.fasterxml.jackson.databind.node.ObjectNode m =
                (com.fasterxml.jackson.databind.node.ObjectNode) failed.get("metrics");
        List<String> counts =
                java.util.stream.StreamSupport.stream(
                                java.util.Spliterators.spliteratorUnknownSize(m.fieldNames(), 0),
                                false)
                        .filter(n -> n.startsWith("count_"))
                        .toList();
        m.remove(counts);
        HtmlReport.Run run =
                new HtmlReport.Run(
                        "lpg", List.of(stage(0, 10, false), failed), List.of("a", "b"), null);
        String html = HtmlReport.render(List.of(run), null, "test");
        assertThat(html).contains("data-stage=\"1\" data-request-rate");
        assertThat(html).doesNotContain("data-stage=\"2\" data-request-rate");
        assertThat(cells(html, 2).subList(7, 14)).allMatch(c -> c.equals("-"), "latency cells");
    }

    @Test
    void theComparisonSectionSaysWhatIsNotComparableInsteadOfAChange() {
        List<JsonNode> base = List.of(stage(0, 10, false), stage(1, 20, false));
        List<JsonNode> cand = List.of(stage(0, 10, false), stage(1, 20, true));
        io.inferencebench.profile.compare.Comparison c =
                io.inferencebench.profile.compare.ProfileComparison.compare(
                        base, cand, io.inferencebench.profile.compare.ComparisonOptions.defaults());
        String html =
                HtmlReport.render(
                        List.of(
                                new HtmlReport.Run("a", base, List.of("a1", "a2"), null),
                                new HtmlReport.Run("b", cand, List.of("b1", "b2"), null)),
                        c,
                        "test");
        assertThat(html)
                .contains(
                        "<p class=\"meta not-comparable\" data-stage=\"2\">not comparable: the"
                                + " candidate has no successful request</p>");
        String stageTwo = html.substring(html.indexOf("<h3>stage 2: 20.0 req/s</h3>"));
        assertThat(stageTwo.substring(0, stageTwo.indexOf("</section>")))
                .doesNotContain("data-metric=");

        String notCompared =
                HtmlReport.render(
                        List.of(
                                new HtmlReport.Run("a", base, List.of("a1", "a2"), null),
                                new HtmlReport.Run("b", cand, List.of("b1", "b2"), null)),
                        null,
                        "nothing to pair: ...",
                        "test");
        assertThat(notCompared)
                .contains("data-verdict=\"not compared\"")
                .contains("not compared: nothing to pair: ...");
    }

    /** The client-metrics table row of a stage (1-based). */
    private static String row(String html, int stage) {
        Matcher row = Pattern.compile("<tr data-stage=\"" + stage + "\">(.*?)</tr>").matcher(html);
        assertThat(row.find()).as(html).isTrue();
        return row.group(1);
    }

    private static List<String> cells(String html, int stage) {
        return Pattern.compile("<td[^>]*>(.*?)</td>")
                .matcher(row(html, stage))
                .results()
                .map(r -> r.group(1))
                .toList();
    }
}
