package io.inferencebench.runner.peers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.inferencebench.profile.compare.LabeledProfile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every committed result file of another tool (made by bench/peer_fixtures.py: each peer run
 * against the simulator, versions in peer-results/VERSIONS.json) is told by its content and mapped
 * onto the stage model with the values of the file itself, in our units, and nothing it lacks.
 */
class PeerResultsTest {

    static final Path FIXTURES = fixtures();

    private static final ObjectMapper JSON =
            JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

    static Path fixtures() {
        try {
            return Path.of(PeerResultsTest.class.getResource("/peer-results").toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static JsonNode read(String relative) throws Exception {
        Path p = FIXTURES.resolve(relative);
        return (relative.endsWith(".yaml") ? new YAMLMapper() : JSON).readTree(p.toFile());
    }

    private static JsonNode only(String relative) throws Exception {
        JsonNode doc = read(relative);
        List<LabeledProfile> stages =
                PeerResults.stages(
                        PeerResults.detect(doc), doc, Path.of(relative).getFileName().toString());
        assertThat(stages).hasSize(1);
        return stages.get(0).document();
    }

    @Test
    void everyFixtureIsToldByItsContent() throws Exception {
        Map<String, PeerResults.Kind> expected =
                Map.of(
                        "runner/stage-0.json", PeerResults.Kind.INFERENCEBENCH,
                        "vllm/vllm-bench-serve.json", PeerResults.Kind.VLLM_BENCH_SERVE,
                        "aiperf/profile_export_aiperf.json", PeerResults.Kind.AIPERF,
                        "inference-perf/stage_0_lifecycle_metrics.json",
                                PeerResults.Kind.INFERENCE_PERF,
                        "inference-perf/summary_lifecycle_metrics.json",
                                PeerResults.Kind.INFERENCE_PERF_SUMMARY,
                        "inference-perf/inference-perf.partial.stage_0.yaml", PeerResults.Kind.BR02,
                        "guidellm/benchmarks.json", PeerResults.Kind.GUIDELLM,
                        "lpg/lpg-seed-jetstream.json", PeerResults.Kind.LPG,
                        "lpg/lpg-final-inf.json", PeerResults.Kind.LPG);
        List<String> all;
        try (Stream<Path> files = Files.walk(FIXTURES)) {
            all =
                    files.filter(Files::isRegularFile)
                            .map(p -> FIXTURES.relativize(p).toString())
                            .filter(p -> !p.equals("VERSIONS.json"))
                            .sorted()
                            .toList();
        }
        // A fixture added without a line here fails: every file is read.
        assertThat(all).containsExactlyInAnyOrderElementsOf(expected.keySet());
        for (String f : all) {
            assertThat(PeerResults.detect(read(f))).as(f).isEqualTo(expected.get(f));
        }
        assertThat(PeerResults.detect(JSON.readTree("{\"a\": 1}"))).isNull();
        assertThat(PeerResults.detect(read("VERSIONS.json"))).isNull();
    }

    @Test
    void vllmBenchServeMapsItsOwnKeysAndLacksWhatItDoesNotReport() throws Exception {
        JsonNode raw = read("vllm/vllm-bench-serve.json");
        JsonNode m = only("vllm/vllm-bench-serve.json").path("metrics");
        assertThat(m.path("request_rate").asDouble()).isEqualTo(10.0);
        assertThat(m.path("completed").asLong()).isEqualTo(raw.path("completed").asLong());
        assertThat(m.path("failures").asLong()).isEqualTo(raw.path("failed").asLong());
        assertThat(m.path("throughput").asDouble())
                .isEqualTo(raw.path("request_throughput").asDouble());
        assertThat(m.path("output_tokens_per_min").asDouble())
                .isCloseTo(60 * raw.path("output_throughput").asDouble(), within(1e-9));
        for (String family : List.of("ttft", "tpot", "itl", "e2el")) {
            assertThat(m.path("median_" + family + "_ms").asDouble())
                    .as(family)
                    .isEqualTo(raw.path("median_" + family + "_ms").asDouble());
            assertThat(m.path("p99_" + family + "_ms").asDouble())
                    .isEqualTo(raw.path("p99_" + family + "_ms").asDouble());
            assertThat(m.path("avg_" + family + "_ms").asDouble())
                    .isEqualTo(raw.path("mean_" + family + "_ms").asDouble());
            // run with --metric-percentiles 50,99: no p90, and none is made up
            assertThat(raw.has("p90_" + family + "_ms")).isFalse();
            assertThat(m.has("p90_" + family + "_ms")).as(family + " p90").isFalse();
        }
        assertThat(m.has("achieved_rate")).isFalse();
    }

    @Test
    void aiperfIsReadWithItsMeaningsItsItlIsOurTpotItsChunkGapsOurItl() throws Exception {
        JsonNode raw = read("aiperf/profile_export_aiperf.json");
        JsonNode doc = only("aiperf/profile_export_aiperf.json");
        JsonNode m = doc.path("metrics");
        assertThat(doc.path("source").path("version").asText())
                .isEqualTo(raw.path("aiperf_version").asText())
                .isEqualTo("0.13.0");
        assertThat(m.path("request_rate").asDouble()).isEqualTo(10.0);
        assertThat(m.path("completed").asLong()).isEqualTo(30);
        assertThat(m.path("median_ttft_ms").asDouble())
                .isEqualTo(raw.path("time_to_first_token").path("p50").asDouble());
        assertThat(m.path("p90_ttft_ms").asDouble())
                .isEqualTo(raw.path("time_to_first_token").path("p90").asDouble());
        assertThat(m.path("median_itl_ms").asDouble())
                .isEqualTo(raw.path("inter_chunk_latency").path("p50").asDouble());
        assertThat(m.path("median_tpot_ms").asDouble())
                .isEqualTo(raw.path("inter_token_latency").path("p50").asDouble());
        assertThat(m.path("p99_e2el_ms").asDouble())
                .isEqualTo(raw.path("request_latency").path("p99").asDouble());
        assertThat(m.path("output_tokens_per_min").asDouble())
                .isCloseTo(
                        60 * raw.path("output_token_throughput").path("avg").asDouble(),
                        within(1e-9));
        // AIPerf writes no error count when there was none: absent, not 0
        assertThat(raw.has("error_request_count")).isFalse();
        assertThat(m.has("failures")).isFalse();
        // the simulator injected 5 ms between tokens: the mapping keeps the meaning
        assertThat(m.path("median_tpot_ms").asDouble()).isBetween(4.5, 6.0);
    }

    @Test
    void inferencePerfStageReportIsInSecondsAndBecomesMs() throws Exception {
        JsonNode raw = read("inference-perf/stage_0_lifecycle_metrics.json");
        JsonNode m = only("inference-perf/stage_0_lifecycle_metrics.json").path("metrics");
        JsonNode lat = raw.path("successes").path("latency");
        assertThat(m.path("request_rate").asDouble()).isEqualTo(10.0);
        assertThat(m.path("achieved_rate").asDouble())
                .isEqualTo(raw.path("load_summary").path("achieved_rate").asDouble());
        assertThat(m.path("median_ttft_ms").asDouble())
                .isCloseTo(
                        1000 * lat.path("time_to_first_token").path("median").asDouble(),
                        within(1e-9));
        assertThat(m.path("p90_itl_ms").asDouble())
                .isCloseTo(
                        1000 * lat.path("inter_token_latency").path("p90").asDouble(),
                        within(1e-9));
        assertThat(m.path("p99_e2el_ms").asDouble())
                .isCloseTo(1000 * lat.path("request_latency").path("p99").asDouble(), within(1e-9));
        assertThat(m.path("median_tpot_ms").asDouble()).isBetween(4.5, 6.0);
        assertThat(m.has("sd_ttft_ms")).as("inference-perf writes no std").isFalse();
    }

    @Test
    void inferencePerfSummaryIsRefusedAsAStage() throws Exception {
        JsonNode raw = read("inference-perf/summary_lifecycle_metrics.json");
        assertThatThrownBy(
                        () ->
                                PeerResults.stages(
                                        PeerResults.detect(raw),
                                        raw,
                                        "summary_lifecycle_metrics.json"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("summary over all stages")
                .hasMessageContaining("stage_N_lifecycle_metrics.json");
    }

    @Test
    void br02ReadsUnitsFromTheReportAndSaysItGivesNoRate() throws Exception {
        JsonNode raw = read("inference-perf/inference-perf.partial.stage_0.yaml");
        JsonNode doc = only("inference-perf/inference-perf.partial.stage_0.yaml");
        JsonNode m = doc.path("metrics");
        JsonNode lat =
                raw.path("results").path("request_performance").path("aggregate").path("latency");
        assertThat(lat.path("time_to_first_token").path("units").asText()).isEqualTo("s");
        assertThat(m.path("median_ttft_ms").asDouble())
                .isCloseTo(
                        1000 * lat.path("time_to_first_token").path("p50").asDouble(),
                        within(1e-9));
        assertThat(m.path("p99_tpot_ms").asDouble())
                .isCloseTo(
                        1000 * lat.path("time_per_output_token").path("p99").asDouble(),
                        within(1e-9));
        assertThat(m.path("completed").asLong()).isEqualTo(30);
        // inference-perf's partial leaves scenario.load to a composer: no rate, and it says so
        assertThat(m.has("request_rate")).isFalse();
        assertThat(doc.path("source").path("no_rate").asText()).contains("rate_qps");
    }

    @Test
    void guidellmTpotIsItsInterTokenLatencyAndItHasNoItl() throws Exception {
        JsonNode raw = read("guidellm/benchmarks.json");
        JsonNode doc = only("guidellm/benchmarks.json");
        JsonNode m = doc.path("metrics");
        JsonNode metrics = raw.path("benchmarks").get(0).path("metrics");
        assertThat(doc.path("source").path("version").asText()).isEqualTo("0.8.1");
        assertThat(m.path("request_rate").asDouble()).isEqualTo(10.0);
        assertThat(m.path("completed").asLong()).isEqualTo(30);
        assertThat(m.path("failures").asLong()).isZero(); // request_totals says 0 errored
        assertThat(m.path("median_ttft_ms").asDouble())
                .isEqualTo(
                        metrics.path("time_to_first_token_ms")
                                .path("successful")
                                .path("median")
                                .asDouble());
        assertThat(m.path("p90_tpot_ms").asDouble())
                .isEqualTo(
                        metrics.path("inter_token_latency_ms")
                                .path("successful")
                                .path("percentiles")
                                .path("p90")
                                .asDouble());
        assertThat(m.path("median_e2el_ms").asDouble())
                .isCloseTo(
                        1000
                                * metrics.path("request_latency")
                                        .path("successful")
                                        .path("median")
                                        .asDouble(),
                        within(1e-9));
        assertThat(PeerResults.keys(doc)).noneMatch(k -> k.endsWith("_itl_ms"));
        assertThat(doc.path("source").path("not_in_file").toString()).contains("median_itl_ms");
    }

    @Test
    void lpgFinalDialectThroughputBecomesRequestsPerSecondAndTtftMs() throws Exception {
        JsonNode raw = read("lpg/lpg-final-inf.json");
        assertThat(PeerResults.lpgDialect(raw.path("metrics"))).isEqualTo("final");
        JsonNode doc = only("lpg/lpg-final-inf.json");
        JsonNode m = doc.path("metrics");
        assertThat(doc.path("source").path("lpg_dialect").asText()).isEqualTo("final");
        assertThat(m.path("request_rate").asText()).isEqualTo("inf");
        assertThat(m.path("throughput").asDouble()).isEqualTo(10.0);
        assertThat(m.path("completed").asLong()).isEqualTo(30);
        assertThat(m.path("failures").asLong()).isEqualTo(1);
        assertThat(m.path("median_ttft_ms").asDouble()).isCloseTo(20.5, within(1e-9));
        assertThat(m.path("p99_e2el_ms").asDouble()).isEqualTo(350.0);
        assertThat(PeerResults.keys(doc)).noneMatch(k -> k.endsWith("_itl_ms"));
    }

    @Test
    void lpgSeedDialectKeepsItsThroughput() throws Exception {
        JsonNode raw = read("lpg/lpg-seed-jetstream.json");
        assertThat(PeerResults.lpgDialect(raw.path("metrics"))).isEqualTo("seed");
        JsonNode m = only("lpg/lpg-seed-jetstream.json").path("metrics");
        assertThat(m.path("throughput").asDouble())
                .isEqualTo(raw.path("metrics").path("throughput").asDouble());
        assertThat(m.path("median_e2el_ms").asDouble())
                .isEqualTo(raw.path("metrics").path("median_latency").asDouble());
        assertThat(m.has("median_ttft_ms")).as("LPG without streaming has no TTFT").isFalse();
        // our own profile in the seed dialect is read as it is
        JsonNode ours = read("runner/stage-0.json");
        assertThat(PeerResults.lpgDialect(ours.path("metrics"))).isEqualTo("seed");
        JsonNode mapped = only("runner/stage-0.json");
        assertThat(mapped.path("metrics").path("throughput"))
                .isEqualTo(ours.path("metrics").path("throughput"));
        assertThat(mapped.path("source").path("kind").asText()).isEqualTo("inferencebench");
    }
}
