package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code compare} and {@code report} of our run against {@code vllm bench serve} and AIPerf runs of
 * the same workload on the simulator (the committed fixtures, made by bench/peer_fixtures.py):
 * every number shown is one of the files' own, and a statistic a file lacks is said to be absent,
 * never 0.
 */
class PeerResultsCliTest {

    private static final ObjectMapper JSON =
            JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

    private static final Path FIXTURES = fixtures();

    private static Path fixtures() {
        try {
            return Path.of(PeerResultsCliTest.class.getResource("/peer-results").toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Our statistic names onto each file's own keys (and the factor to our unit). */
    private record Source(String file, Map<String, String> keys, double factor) {}

    private static final Source RUNNER =
            new Source(
                    "runner/stage-0.json",
                    Map.of(
                            "ttft_p50", "metrics.median_ttft_ms",
                            "ttft_p90", "metrics.p90_ttft_ms",
                            "ttft_p99", "metrics.p99_ttft_ms",
                            "itl_p50", "metrics.median_itl_ms",
                            "itl_p99", "metrics.p99_itl_ms",
                            "tpot_p50", "metrics.median_tpot_ms",
                            "e2el_p99", "metrics.p99_e2el_ms"),
                    1);

    private static final Source VLLM =
            new Source(
                    "vllm/vllm-bench-serve.json",
                    Map.of(
                            "ttft_p50", "median_ttft_ms",
                            "ttft_p99", "p99_ttft_ms",
                            "itl_p50", "median_itl_ms",
                            "itl_p99", "p99_itl_ms",
                            "tpot_p50", "median_tpot_ms",
                            "e2el_p99", "p99_e2el_ms"),
                    1);

    private static final Source AIPERF =
            new Source(
                    "aiperf/profile_export_aiperf.json",
                    Map.of(
                            "ttft_p50", "time_to_first_token.p50",
                            "ttft_p90", "time_to_first_token.p90",
                            "ttft_p99", "time_to_first_token.p99",
                            "itl_p50", "inter_chunk_latency.p50",
                            "itl_p99", "inter_chunk_latency.p99",
                            "tpot_p50", "inter_token_latency.p50",
                            "e2el_p99", "request_latency.p99"),
                    1);

    private static JsonNode at(JsonNode doc, String dotted) {
        JsonNode n = doc;
        for (String part : dotted.split("\\.")) {
            n = n.path(part);
        }
        return n;
    }

    @Test
    void compareOfOurRunAgainstVllmBenchServeInventsNoValue(@TempDir Path tmp) throws Exception {
        JsonNode cmp = compare(tmp, RUNNER, VLLM);
        JsonNode metrics = cmp.path("stages").get(0).path("metrics");
        // vllm bench serve ran with --metric-percentiles 50,99: its p90 rows are absent and say so
        for (String family : List.of("ttft", "itl", "tpot", "e2el")) {
            JsonNode p90 = metrics.path(family + "_p90");
            assertThat(p90.path("candidate").isNull()).as(family).isTrue();
            assertThat(p90.path("baseline").isNumber()).isTrue();
            assertThat(p90.path("change").isNull()).isTrue();
            assertThat(p90.path("significant").asBoolean()).isFalse();
            assertThat(p90.path("absent").asText())
                    .isEqualTo(
                            "candidate: vllm bench serve (vllm-bench-serve.json) does not report "
                                    + family
                                    + " p90");
        }
        assertThat(metrics.path("output_throughput").path("candidate").asDouble())
                .isCloseTo(read(VLLM.file()).path("output_throughput").asDouble(), within(1e-9));
    }

    @Test
    void compareOfOurRunAgainstAiperfInventsNoValue(@TempDir Path tmp) throws Exception {
        JsonNode cmp = compare(tmp, RUNNER, AIPERF);
        JsonNode metrics = cmp.path("stages").get(0).path("metrics");
        // AIPerf reports p50, p90 and p99 of all four: nothing absent
        for (Iterator<Map.Entry<String, JsonNode>> it = metrics.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            assertThat(e.getValue().has("absent")).as(e.getKey()).isFalse();
        }
        assertThat(metrics.size()).isEqualTo(13);
    }

    @Test
    void vllmAgainstAiperfPrintsTheTableWithAbsentNotZero(@TempDir Path tmp) throws Exception {
        Path json = tmp.resolve("cmp.json");
        SimServer.Outcome o =
                SimServer.cli(
                        "compare",
                        FIXTURES.resolve("vllm").toString(),
                        FIXTURES.resolve("aiperf").toString(),
                        "--output",
                        json.toString());
        assertThat(o.code()).as(o.err()).isIn(0, 1);
        assertThat(o.out())
                .contains("baseline:  " + FIXTURES.resolve("vllm") + " (vllm bench serve): 1 stage")
                .contains("candidate: " + FIXTURES.resolve("aiperf") + " (AIPerf 0.13.0): 1 stage")
                .contains("stage 1: 10.0 req/s");
        List<String> p90 =
                o.out().lines().filter(l -> l.strip().startsWith("ttft p90 (ms)")).toList();
        assertThat(p90).hasSize(1);
        assertThat(p90.get(0))
                .matches(
                        "\\s+ttft p90 \\(ms\\)\\s+absent\\s+"
                                + Pattern.quote(
                                        CompareCommand.number(
                                                read(AIPERF.file())
                                                        .path("time_to_first_token")
                                                        .path("p90")
                                                        .asDouble()))
                                + "\\s+-\\s+no\\s+not compared: baseline: vllm bench serve"
                                + " \\(vllm-bench-serve.json\\) does not report ttft p90");
        checkNoInventedValue(read(json), VLLM, AIPERF);
    }

    @Test
    void reportDrawsOurRunVllmAndAiperf(@TempDir Path tmp) throws Exception {
        Path html = tmp.resolve("report.html");
        SimServer.Outcome o =
                SimServer.cli(
                        "report",
                        FIXTURES.resolve("runner").toString(),
                        FIXTURES.resolve(VLLM.file()).toString(),
                        FIXTURES.resolve("aiperf").toString(),
                        "-o",
                        html.toString());
        assertThat(o.code()).as(o.err()).isZero();
        String page = Files.readString(html);
        assertThat(page)
                .contains("runner <span class=\"meta\">(InferenceBench runner")
                .contains("vllm-bench-serve.json <span class=\"meta\">(vllm bench serve, 1 stages)")
                .contains("aiperf <span class=\"meta\">(AIPerf 0.13.0, 1 stages)");
        List<Source> sources = List.of(RUNNER, VLLM, AIPERF);
        for (int run = 0; run < 3; run++) {
            for (String[] series :
                    List.of(
                            new String[] {"ttft_p50", "ttft_p50"},
                            new String[] {"ttft_p99", "ttft_p99"},
                            new String[] {"itl_p50", "itl_p50"},
                            new String[] {"itl_p99", "itl_p99"},
                            new String[] {"e2el_p99", "e2el_p99"})) {
                List<String> points = points(page, run, series[0]);
                assertThat(points).as("run %d %s", run, series[0]).hasSize(1);
                double expected =
                        at(read(sources.get(run).file()), sources.get(run).keys().get(series[1]))
                                .asDouble();
                assertThat(attribute(points.get(0), "data-value"))
                        .as("run %d %s", run, series[0])
                        .isCloseTo(expected, within(1e-9));
            }
        }
        // vllm bench serve has no p90 and AIPerf no error count: shown absent, never 0
        assertThat(page).doesNotContain("data-value=\"0.0\"");
        String aiperfRow = section(page, 2);
        assertThat(aiperfRow).contains("<td class=\"absent\" title=\"not reported by AIPerf");
    }

    @Test
    void aToolsDirectoryIsOneRunItsOwnReportBeforeItsBr02AndTwoToolsAreRefused(@TempDir Path tmp)
            throws Exception {
        // inference-perf's directory: its stage report, its BR0.2 copy and its summary
        SimServer.Outcome o =
                SimServer.cli(
                        "compare",
                        FIXTURES.resolve("runner").toString(),
                        FIXTURES.resolve("inference-perf").toString());
        assertThat(o.code()).as(o.err()).isIn(0, 1);
        assertThat(o.out())
                .contains("(inference-perf): 1 stage")
                .contains("candidate stage_0_lifecycle_metrics.json)");
        // the BR0.2 partial alone gives no rate: the one-stage runs are paired, and it says so
        o =
                SimServer.cli(
                        "compare",
                        FIXTURES.resolve("runner").toString(),
                        FIXTURES.resolve("inference-perf/inference-perf.partial.stage_0.yaml")
                                .toString());
        assertThat(o.code()).as(o.err()).isIn(0, 1);
        assertThat(o.out()).contains("paired without a request rate").contains("rate_qps");
        // the summary over all stages is not a stage
        o =
                SimServer.cli(
                        "compare",
                        FIXTURES.resolve("runner").toString(),
                        FIXTURES.resolve("inference-perf/summary_lifecycle_metrics.json")
                                .toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("CANDIDATE: ").contains("summary over all stages");
        // two tools' files in one directory are two runs mixed up
        Path mixed = Files.createDirectory(tmp.resolve("mixed"));
        Files.copy(FIXTURES.resolve(VLLM.file()), mixed.resolve("vllm.json"));
        Files.copy(FIXTURES.resolve(AIPERF.file()), mixed.resolve("aiperf.json"));
        o = SimServer.cli("compare", FIXTURES.resolve("runner").toString(), mixed.toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err())
                .contains("holds the results of more than one tool")
                .contains("AIPerf profile export: aiperf.json")
                .contains("vllm bench serve --save-result JSON: vllm.json");
    }

    // ---- helpers ----

    private static JsonNode read(String relative) throws Exception {
        return JSON.readTree(FIXTURES.resolve(relative).toFile());
    }

    private static JsonNode read(Path file) throws Exception {
        return JSON.readTree(file.toFile());
    }

    private JsonNode compare(Path tmp, Source baseline, Source candidate) throws Exception {
        Path json = tmp.resolve("cmp.json");
        SimServer.Outcome o =
                SimServer.cli(
                        "compare",
                        FIXTURES.resolve(baseline.file()).toString(),
                        FIXTURES.resolve(candidate.file()).toString(),
                        "--output",
                        json.toString());
        // a verdict either way, never bad input (2)
        assertThat(o.code()).as(o.out() + o.err()).isIn(0, 1);
        JsonNode cmp = read(json);
        checkNoInventedValue(cmp, baseline, candidate);
        return cmp;
    }

    /**
     * Every value of the comparison is the file's own (through the documented key map), every
     * missing one is null with a reason, and a statistic is compared only when both have it.
     */
    private static void checkNoInventedValue(JsonNode cmp, Source baseline, Source candidate)
            throws Exception {
        assertThat(cmp.path("stages")).hasSize(1);
        JsonNode metrics = cmp.path("stages").get(0).path("metrics");
        JsonNode b = read(baseline.file());
        JsonNode c = read(candidate.file());
        List<String> checked = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = metrics.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode cell = e.getValue();
            for (String side : List.of("baseline", "candidate")) {
                Source source = side.equals("baseline") ? baseline : candidate;
                JsonNode raw = side.equals("baseline") ? b : c;
                JsonNode value = cell.path(side);
                if (value.isNull()) {
                    assertThat(cell.path("absent").asText()).as(e.getKey()).contains(side + ": ");
                    assertThat(cell.path("change").isNull()).isTrue();
                    assertThat(cell.path("significant").asBoolean()).isFalse();
                    String key = source.keys().get(e.getKey());
                    if (key != null) {
                        assertThat(at(raw, key).isMissingNode())
                                .as("%s is in %s but was not read", key, source.file())
                                .isTrue();
                    }
                    continue;
                }
                assertThat(value.isNumber()).as(e.getKey()).isTrue();
                String key = source.keys().get(e.getKey());
                if (key != null) {
                    assertThat(value.asDouble())
                            .as("%s %s", side, e.getKey())
                            .isCloseTo(at(raw, key).asDouble() * source.factor(), within(1e-9));
                    checked.add(side + " " + e.getKey());
                }
            }
            if (!cell.path("baseline").isNull() && !cell.path("candidate").isNull()) {
                assertThat(cell.has("absent")).isFalse();
                assertThat(cell.path("change").asDouble())
                        .isCloseTo(
                                (cell.path("candidate").asDouble()
                                                - cell.path("baseline").asDouble())
                                        / cell.path("baseline").asDouble(),
                                within(1e-12));
            }
        }
        assertThat(checked).isNotEmpty();
    }

    private static List<String> points(String page, int run, String series) {
        return Pattern.compile(
                        "<circle class=\"point\"[^>]*data-run=\""
                                + run
                                + "\" data-series=\""
                                + series
                                + "\"[^>]*>")
                .matcher(page)
                .results()
                .map(r -> r.group())
                .toList();
    }

    private static double attribute(String element, String name) {
        java.util.regex.Matcher m = Pattern.compile(name + "=\"([^\"]*)\"").matcher(element);
        assertThat(m.find()).isTrue();
        return Double.parseDouble(m.group(1));
    }

    private static String section(String page, int run) {
        int start = page.indexOf("<section class=\"run\" data-run=\"" + run + "\"");
        return page.substring(start, page.indexOf("</section>", start));
    }
}
