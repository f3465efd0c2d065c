package io.inferencebench.profile.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Pages written in llm-d-inference-sim's style (Go client: bare integers, {@code le} last, only
 * {@code model_name}, {@code finish_reason}, both TPOT names, labelled series absent before their
 * first observation, an info gauge whose value is a timestamp).
 */
class LlmdSimPageTest {

    private static ParsedPage page(String name) throws Exception {
        try (InputStream in = LlmdSimPageTest.class.getResourceAsStream("/pages/" + name)) {
            return PrometheusTextParser.parse(
                    in.readAllBytes(), "text/plain; version=0.0.4; charset=utf-8");
        }
    }

    @Test
    void parsesBothPagesCleanly() throws Exception {
        ParsedPage t0 = page("llm-d-inference-sim-style-t0.txt");
        ParsedPage t1 = page("llm-d-inference-sim-style-t1.txt");
        assertThat(t0.problems()).isEmpty();
        assertThat(t1.problems()).isEmpty();
        assertThat(t0.family("vllm:request_success_total").samples()).isEmpty();
        assertThat(t1.family("vllm:request_success_total").samples()).hasSize(2);
        assertThat(t1.family("vllm:time_to_first_token_seconds").type())
                .isEqualTo(MetricType.HISTOGRAM);
        assertThat(t1.family("vllm:time_to_first_token_seconds").samples()).hasSize(25);
        assertThat(t1.family("vllm:lora_requests_info").samples().get(0).value())
                .isEqualTo(1.7641488e+09);
    }

    @Test
    void windowStatisticsMatchHandComputedValues() throws Exception {
        List<Scrape> scrapes =
                List.of(
                        Scrape.success("sim-0", 0, page("llm-d-inference-sim-style-t0.txt")),
                        Scrape.success("sim-0", 10_000, page("llm-d-inference-sim-style-t1.txt")));
        Map<String, ServerMetricSummary> m =
                WindowStatistics.compute(
                                ServerMetricCatalog.forBackend("llm-d-inference-sim"),
                                scrapes,
                                0,
                                10_000,
                                2)
                        .aggregate()
                        .stream()
                        .collect(Collectors.toMap(ServerMetricSummary::name, Function.identity()));

        // the simulator exposes the current and the legacy name: each is summarised under its
        // own name, from its own samples (this simulator leaves the legacy one at 0)
        assertThat(m.get("vllm:kv_cache_usage_perc").mean()).isEqualTo(0.25);
        assertThat(m.get("vllm:gpu_cache_usage_perc").mean()).isEqualTo(0.0);
        assertThat(m).doesNotContainKey("vllm:lora_requests_info");
        assertThat(m.get("vllm:num_requests_running").max()).isEqualTo(3.0);

        // series created on first use count from 0: 3 + 1 successes over 10 s
        assertThat(m.get("vllm:request_success_total").increase()).isEqualTo(4.0);
        assertThat(m.get("vllm:request_success_total").rate()).isCloseTo(0.4, within(1e-12));
        assertThat(m.get("vllm:prompt_tokens_total").increase()).isEqualTo(512.0);

        ServerMetricSummary ttft = m.get("vllm:time_to_first_token_seconds");
        // cumulative delta: le=0.1 -> 1, le=0.25 -> 3, le=0.5 -> 4 = count; sum 0.8
        assertThat(ttft.increase()).isEqualTo(4.0);
        assertThat(ttft.mean()).isCloseTo(0.2, within(1e-12));
        // median: rank 2 -> le=0.25: 0.1 + 0.15 * (2-1)/(3-1) = 0.175
        assertThat(ttft.median()).isCloseTo(0.175, within(1e-12));
        // p90: rank 3.6 -> le=0.5: 0.25 + 0.25 * (3.6-3)/(4-3) = 0.4; p99: 0.25 + 0.25 * 0.96
        assertThat(ttft.p90()).isCloseTo(0.4, within(1e-12));
        assertThat(ttft.p99()).isCloseTo(0.49, within(1e-12));
        // lowest non-empty bucket is (0.08, 0.1]; highest is (0.25, 0.5]
        assertThat(ttft.min()).isEqualTo(0.08);
        assertThat(ttft.max()).isEqualTo(0.5);

        // the deprecated TPOT histogram is reported beside its replacement, under its own name
        assertThat(m).containsKey("vllm:time_per_output_token_seconds");
        ServerMetricSummary itl = m.get("vllm:inter_token_latency_seconds");
        assertThat(itl.mean()).isCloseTo(6.2 / 124, within(1e-12));
        // median: rank 62 -> le=0.075: 0.05 + 0.025 * (62-60)/(120-60)
        assertThat(itl.median()).isCloseTo(0.05 + 0.025 * 2 / 60, within(1e-12));
        // p99: rank 122.76 -> le=0.1: 0.075 + 0.025 * (122.76-120)/(124-120)
        assertThat(itl.p99()).isCloseTo(0.075 + 0.025 * 2.76 / 4, within(1e-12));
    }
}
