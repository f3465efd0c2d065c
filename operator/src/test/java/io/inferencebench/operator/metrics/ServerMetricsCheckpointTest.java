package io.inferencebench.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowStatistics;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;

public class ServerMetricsCheckpointTest {

    private static final ServerMetricCatalog VLLM = ServerMetricCatalog.forBackend("vllm");

    private static final String[] HISTOGRAMS = {
        "vllm:time_to_first_token_seconds",
        "vllm:inter_token_latency_seconds",
        "vllm:request_time_per_output_token_seconds",
        "vllm:e2e_request_latency_seconds",
        "vllm:request_queue_time_seconds",
        "vllm:request_prefill_time_seconds",
        "vllm:request_decode_time_seconds",
        "vllm:request_inference_time_seconds",
        "vllm:request_prompt_tokens",
        "vllm:request_generation_tokens",
        "vllm:request_params_max_tokens",
        "vllm:iteration_tokens_total"
    };

    /**
     * A page shaped like a current vLLM's (12 histograms of 25 buckets, gauges, counters, long
     * label values), whose values grow with {@code round} like a loaded server's.
     */
    public static ParsedPage vllmPage(int round, Random random) {
        String labels = "engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"";
        StringBuilder b = new StringBuilder();
        b.append("# HELP vllm:num_requests_running Number of requests in model execution.\n");
        b.append("# TYPE vllm:num_requests_running gauge\n");
        b.append("vllm:num_requests_running{")
                .append(labels)
                .append("} ")
                .append(random.nextInt(64))
                .append('\n');
        b.append("# TYPE vllm:num_requests_waiting gauge\n");
        b.append("vllm:num_requests_waiting{").append(labels).append("} ");
        b.append(random.nextInt(8)).append('\n');
        b.append("# TYPE vllm:kv_cache_usage_perc gauge\n");
        b.append("vllm:kv_cache_usage_perc{").append(labels).append("} ");
        b.append(random.nextDouble()).append('\n');
        for (String counter :
                List.of("vllm:prompt_tokens", "vllm:generation_tokens", "vllm:request_success")) {
            b.append("# TYPE ").append(counter).append("_total counter\n");
            b.append(counter)
                    .append("_total{")
                    .append(labels)
                    .append("} ")
                    .append(round * 1000L + random.nextInt(1000))
                    .append('\n');
        }
        for (String h : HISTOGRAMS) {
            b.append("# HELP ").append(h).append(" Histogram of something per request.\n");
            b.append("# TYPE ").append(h).append(" histogram\n");
            long cumulative = 0;
            for (int i = 0; i < 25; i++) {
                cumulative += round * (25 - i) + random.nextInt(3);
                b.append(h)
                        .append("_bucket{")
                        .append(labels)
                        .append(",le=\"")
                        .append(String.format(Locale.ROOT, "%.3f", 0.001 * Math.pow(1.6, i)))
                        .append("\"} ")
                        .append(cumulative)
                        .append('\n');
            }
            b.append(h).append("_bucket{").append(labels).append(",le=\"+Inf\"} ");
            b.append(cumulative).append('\n');
            b.append(h).append("_sum{").append(labels).append("} ");
            b.append(cumulative * 0.0421 + random.nextDouble()).append('\n');
            b.append(h).append("_count{").append(labels).append("} ");
            b.append(cumulative).append('\n');
        }
        return PrometheusTextParser.parse(b.toString(), PrometheusTextParser.Format.TEXT_0_0_4);
    }

    @Test
    void scrapesRoundTripToTheSameStatistics() throws IOException {
        ParsedPage reference;
        try (InputStream in =
                getClass().getResourceAsStream("/pages/vllm-metrics-v0.2-sample.txt")) {
            reference = PrometheusTextParser.parse(in.readAllBytes(), null);
        }
        Random random = new Random(7);
        List<Scrape> scrapes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            scrapes.add(Scrape.success("pod-a", 1_000 + i * 500L, VLLM.trim(vllmPage(i, random))));
            scrapes.add(Scrape.success("pod-b", 1_010 + i * 500L, VLLM.trim(reference)));
        }
        scrapes.add(Scrape.failure("pod-c", 2_000, "HTTP 503"));

        List<Scrape> back = ServerMetricsCheckpoint.decode(ServerMetricsCheckpoint.encode(scrapes));

        assertThat(back).hasSize(scrapes.size());
        for (int i = 0; i < scrapes.size(); i++) {
            Scrape a = scrapes.get(i);
            Scrape b = back.get(i);
            assertThat(b.replica()).isEqualTo(a.replica());
            assertThat(b.timestampMillis()).isEqualTo(a.timestampMillis());
            assertThat(b.error()).isEqualTo(a.error());
            if (a.succeeded()) {
                assertThat(b.page().families().keySet())
                        .containsExactlyElementsOf(a.page().families().keySet());
                a.page()
                        .families()
                        .forEach(
                                (name, family) -> {
                                    assertThat(b.page().family(name).type())
                                            .isEqualTo(family.type());
                                    assertThat(b.page().family(name).samples())
                                            .as(name)
                                            .isEqualTo(family.samples());
                                });
            }
        }
        ServerMetricsReport original = WindowStatistics.compute(VLLM, scrapes, 0, 20_000, 0);
        ServerMetricsReport reloaded = WindowStatistics.compute(VLLM, back, 0, 20_000, 0);
        assertThat(reloaded.aggregate()).isEqualTo(original.aggregate());
        assertThat(reloaded.coverage()).isEqualTo(original.coverage());
        assertThat(original.coverage().succeeded()).isEqualTo(40);
    }

    @Test
    void openMetricsPagesKeepTheirCounterFamiliesAndSpecialValues() {
        String page =
                "# TYPE vllm:request_success counter\n"
                        + "vllm:request_success_total{finished_reason=\"stop\",model_name=\"a\\\\b\\\"c\"} 12 1700000000.5\n"
                        + "# TYPE vllm:num_requests_running gauge\n"
                        + "vllm:num_requests_running NaN\n"
                        + "# TYPE vllm:kv_cache_usage_perc gauge\n"
                        + "vllm:kv_cache_usage_perc +Inf\n"
                        + "# EOF\n";
        ParsedPage parsed =
                PrometheusTextParser.parse(page, PrometheusTextParser.Format.OPENMETRICS_1_0);
        List<Scrape> scrapes = List.of(Scrape.success("r", 5, parsed));
        Scrape back =
                ServerMetricsCheckpoint.decode(ServerMetricsCheckpoint.encode(scrapes)).getFirst();
        assertThat(back.page().format()).isEqualTo(PrometheusTextParser.Format.OPENMETRICS_1_0);
        assertThat(back.page().families()).isEqualTo(parsed.families());
        assertThat(back.page().problems()).isEmpty();
    }

    @Test
    void thinningKeepsEveryReplicasEdgesAndSpreadsTheRest() {
        List<Scrape> scrapes = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            scrapes.add(Scrape.failure(i % 2 == 0 ? "a" : "b", i, "x"));
        }
        List<Scrape> kept = ServerMetricsCheckpoint.thin(scrapes, 20);
        assertThat(kept).hasSizeBetween(18, 22);
        assertThat(kept).contains(scrapes.get(0), scrapes.get(1), scrapes.get(98), scrapes.get(99));
        // evenly: no gap between kept scrapes much larger than the average
        long maxGap = 0;
        for (int i = 1; i < kept.size(); i++) {
            maxGap =
                    Math.max(
                            maxGap,
                            kept.get(i).timestampMillis() - kept.get(i - 1).timestampMillis());
        }
        assertThat(maxGap).isLessThanOrEqualTo(8);
    }

    /**
     * The checkpoint of a long stage stays far below the ConfigMap limit, and the figures printed
     * here are the API load that {@link ServerMetricsScraper#MIN_SAVE_GAP_MILLIS} is chosen from.
     */
    @Test
    void aTenMinuteStageAtFiveSecondsFitsAndAnOversizedOneIsThinnedUnderTheCap() {
        Random random = new Random(1);
        List<Scrape> scrapes = new ArrayList<>();
        long[] sizes = new long[241];
        long bytesWritten = 0;
        int rawPage = 0;
        for (int i = 0; i <= 240; i++) {
            ParsedPage trimmed = VLLM.trim(vllmPage(i, random));
            rawPage = trimmed.sampleCount();
            scrapes.add(Scrape.success("vllm-0", i * 5_000L, trimmed));
            scrapes.add(Scrape.success("vllm-1", i * 5_000L + 3, trimmed));
            if (i <= 120) {
                sizes[i] = ServerMetricsCheckpoint.encode(scrapes).length;
                bytesWritten += sizes[i];
            }
        }
        System.out.printf(
                Locale.ROOT,
                "checkpoint: trimmed vLLM page of %d samples; 2 replicas at 5 s: after 1 min %d B,"
                        + " after 10 min %d B compressed (%.0f B per scrape);"
                        + " one write per 5 s over 10 min = %d KiB sent in 121 writes%n",
                rawPage,
                sizes[12],
                sizes[120],
                sizes[120] / 242.0,
                bytesWritten / 1024);
        assertThat(sizes[120]).isLessThan(ServerMetricsCheckpoint.MAX_COMPRESSED_BYTES / 2);

        // An hour of two replicas at 5 s with fresh values: thinned to stay under the cap.
        List<Scrape> big = new ArrayList<>(scrapes);
        for (int copy = 0; copy < 2; copy++) {
            for (Scrape s : scrapes) {
                big.add(
                        Scrape.success(
                                s.replica(),
                                s.timestampMillis() + (copy + 1) * 1_300_000L,
                                VLLM.trim(
                                        vllmPage(
                                                copy * 241 + (int) (s.timestampMillis() / 5000),
                                                random))));
            }
        }
        byte[] encoded = ServerMetricsCheckpoint.encode(big);
        List<Scrape> back = ServerMetricsCheckpoint.decode(encoded);
        System.out.printf(
                Locale.ROOT,
                "checkpoint cap: %d scrapes -> %d kept, %d B compressed (cap %d B)%n",
                big.size(),
                back.size(),
                encoded.length,
                ServerMetricsCheckpoint.MAX_COMPRESSED_BYTES);
        assertThat(encoded.length)
                .isLessThanOrEqualTo(ServerMetricsCheckpoint.MAX_COMPRESSED_BYTES);
        assertThat(back.size()).isLessThanOrEqualTo(ServerMetricsCheckpoint.MAX_SCRAPES);
        assertThat(back.getFirst().replica()).isEqualTo(big.getFirst().replica());
        assertThat(back.getFirst().timestampMillis()).isEqualTo(big.getFirst().timestampMillis());
        assertThat(back.getLast().timestampMillis()).isEqualTo(big.getLast().timestampMillis());
    }
}
