package io.inferencebench.profile.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.prom.PrometheusTextParser;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class WindowStatisticsTest {

    /**
     * A vLLM-shaped page; replica b has no prompt-token series yet at t=0 (created on first use).
     */
    private static String vllmPage(
            double running,
            double kvUsage,
            Double promptTokens,
            double[] latencyBuckets,
            double latencySum) {
        StringBuilder sb = new StringBuilder();
        sb.append(
                "# HELP vllm:num_requests_running Number of requests in model execution batches.\n");
        sb.append("# TYPE vllm:num_requests_running gauge\n");
        sb.append("vllm:num_requests_running{engine=\"0\",model_name=\"m\"} ")
                .append(running)
                .append('\n');
        sb.append("# TYPE vllm:kv_cache_usage_perc gauge\n");
        sb.append("vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} ")
                .append(kvUsage)
                .append('\n');
        sb.append("# TYPE vllm:cache_config_info gauge\n");
        sb.append("vllm:cache_config_info{block_size=\"16\",engine=\"0\"} 1.0\n");
        sb.append("# TYPE vllm:lora_requests_info gauge\n");
        sb.append("vllm:lora_requests_info{max_lora=\"0\",running_lora_adapters=\"\"} 1.7e9\n");
        sb.append("# TYPE vllm:prompt_tokens_total counter\n");
        if (promptTokens != null) {
            sb.append("vllm:prompt_tokens_total{engine=\"0\",model_name=\"m\"} ")
                    .append(promptTokens)
                    .append('\n');
        }
        sb.append("# TYPE vllm:e2e_request_latency_seconds histogram\n");
        if (latencyBuckets != null) {
            String[] les = {"0.5", "1.0", "2.5", "+Inf"};
            for (int i = 0; i < les.length; i++) {
                sb.append("vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"")
                        .append(les[i])
                        .append("\",model_name=\"m\"} ")
                        .append(latencyBuckets[i])
                        .append('\n');
            }
            sb.append("vllm:e2e_request_latency_seconds_sum{engine=\"0\",model_name=\"m\"} ")
                    .append(latencySum)
                    .append('\n');
            sb.append("vllm:e2e_request_latency_seconds_count{engine=\"0\",model_name=\"m\"} ")
                    .append(latencyBuckets[3])
                    .append('\n');
        }
        return sb.toString();
    }

    private static Scrape scrape(String replica, long t, String page) {
        return Scrape.success(replica, t, PrometheusTextParser.parse(page));
    }

    private static List<Scrape> twoReplicas() {
        List<Scrape> s = new ArrayList<>();
        s.add(scrape("a", 0, vllmPage(2, 0.2, 100.0, new double[] {1, 2, 2, 2}, 1.2)));
        s.add(scrape("b", 10, vllmPage(1, 0.0, null, null, 0)));
        s.add(scrape("a", 5_000, vllmPage(4, 0.4, 150.0, new double[] {2, 4, 5, 5}, 4.0)));
        s.add(scrape("b", 5_010, vllmPage(1, 0.2, 20.0, new double[] {0, 1, 2, 2}, 3.0)));
        s.add(Scrape.failure("b", 7_500, "connect timed out"));
        // replica a restarted between 5 s and 10 s: its counter dropped from 150 to 30
        s.add(scrape("a", 10_000, vllmPage(6, 0.6, 30.0, new double[] {3, 6, 9, 10}, 12.0)));
        s.add(scrape("b", 10_010, vllmPage(3, 0.4, 50.0, new double[] {0, 2, 4, 4}, 6.0)));
        s.add(scrape("a", 20_000, vllmPage(100, 1.0, 9999.0, new double[] {9, 9, 9, 99}, 99)));
        return s;
    }

    private static Map<String, ServerMetricSummary> byName(List<ServerMetricSummary> list) {
        return list.stream()
                .collect(Collectors.toMap(ServerMetricSummary::name, Function.identity()));
    }

    @Test
    void gaugesAggregateAcrossReplicasPerRoundThenSummarise() {
        ServerMetricsReport report =
                WindowStatistics.compute(
                        ServerMetricCatalog.forBackend("vllm"), twoReplicas(), 0, 10_010, 8);
        Map<String, ServerMetricSummary> m = byName(report.aggregate());

        // running (sum over replicas) per round: 2+1, 4+1, 6+3 = 3, 5, 9
        ServerMetricSummary running = m.get("vllm:num_requests_running");
        assertThat(running.type()).isEqualTo(MetricType.GAUGE);
        assertThat(running.samples()).isEqualTo(3);
        assertThat(running.mean()).isCloseTo(17.0 / 3, within(1e-12));
        assertThat(running.median()).isEqualTo(5.0);
        // population SD: sqrt(((3-17/3)^2 + (5-17/3)^2 + (9-17/3)^2) / 3) = sqrt(56/9)
        assertThat(running.sd()).isCloseTo(Math.sqrt(56.0 / 9), within(1e-12));
        assertThat(running.min()).isEqualTo(3.0);
        assertThat(running.max()).isEqualTo(9.0);
        // numpy linear: sorted [3, 5, 9], p90 index 1.8 -> 5 + 0.8 * 4 = 8.2; p99 -> 5 + 0.98 * 4
        assertThat(running.p90()).isCloseTo(8.2, within(1e-12));
        assertThat(running.p99()).isCloseTo(8.92, within(1e-12));

        // KV usage is a fraction: mean over replicas per round: 0.1, 0.3, 0.5
        ServerMetricSummary kv = m.get("vllm:kv_cache_usage_perc");
        assertThat(kv.mean()).isCloseTo(0.3, within(1e-12));
        assertThat(kv.min()).isCloseTo(0.1, within(1e-12));
        assertThat(kv.max()).isCloseTo(0.5, within(1e-12));

        // per-replica breakdown: a alone is 2, 4, 6
        ServerMetricSummary runningA =
                byName(report.perReplica().get("a")).get("vllm:num_requests_running");
        assertThat(runningA.mean()).isEqualTo(4.0);
        assertThat(runningA.samples()).isEqualTo(3);

        // info gauges are never summarised
        assertThat(m).doesNotContainKeys("vllm:cache_config_info", "vllm:lora_requests_info");
    }

    @Test
    void countersGiveIncreaseAndRateWithResetCorrection() {
        ServerMetricsReport report =
                WindowStatistics.compute(
                        ServerMetricCatalog.forBackend("vllm"), twoReplicas(), 0, 10_010, 8);
        ServerMetricSummary prompt = byName(report.aggregate()).get("vllm:prompt_tokens_total");
        // a: 100 -> 150 (+50) -> 30 (reset: +30) = 80 over 10 s = 8/s
        // b: absent at t=0 (counts from 0) -> 20 (+20) -> 50 (+30) = 50 over 10 s = 5/s
        assertThat(prompt.type()).isEqualTo(MetricType.COUNTER);
        assertThat(prompt.increase()).isEqualTo(130.0);
        assertThat(prompt.rate()).isCloseTo(13.0, within(1e-12));
        assertThat(prompt.mean()).isEqualTo(prompt.rate());
        Map<String, ServerMetricSummary> a = byName(report.perReplica().get("a"));
        Map<String, ServerMetricSummary> b = byName(report.perReplica().get("b"));
        assertThat(a.get("vllm:prompt_tokens_total").increase()).isEqualTo(80.0);
        assertThat(a.get("vllm:prompt_tokens_total").rate()).isCloseTo(8.0, within(1e-12));
        assertThat(b.get("vllm:prompt_tokens_total").increase()).isEqualTo(50.0);
        assertThat(b.get("vllm:prompt_tokens_total").rate()).isCloseTo(5.0, within(1e-12));
    }

    @Test
    void histogramsUseBucketDeltasAndPrometheusQuantiles() {
        ServerMetricsReport report =
                WindowStatistics.compute(
                        ServerMetricCatalog.forBackend("vllm"), twoReplicas(), 0, 10_010, 8);
        ServerMetricSummary e2e =
                byName(report.aggregate()).get("vllm:e2e_request_latency_seconds");
        // a: (3,6,9,10) - (1,2,2,2) = (2,4,7,8), sum 12 - 1.2 = 10.8
        // b: absent at t=0 -> (0,2,4,4), sum 6
        // total cumulative (le 0.5, 1, 2.5, +Inf) = (2, 6, 11, 12), count 12, sum 16.8
        assertThat(e2e.type()).isEqualTo(MetricType.HISTOGRAM);
        assertThat(e2e.increase()).isEqualTo(12.0);
        assertThat(e2e.mean()).isCloseTo(16.8 / 12, within(1e-12));
        // median: rank 6 -> le=1 (6 >= 6): 0.5 + 0.5 * (6-2)/(6-2) = 1.0
        assertThat(e2e.median()).isCloseTo(1.0, within(1e-12));
        // p90: rank 10.8 -> le=2.5: 1 + 1.5 * (10.8-6)/(11-6) = 2.44
        assertThat(e2e.p90()).isCloseTo(2.44, within(1e-12));
        // p99: rank 11.88 > 11 -> +Inf bucket -> highest finite bound 2.5
        assertThat(e2e.p99()).isEqualTo(2.5);
        // min: lowest non-empty bucket is le=0.5 -> lower bound 0; max: +Inf holds one -> 2.5
        assertThat(e2e.min()).isZero();
        assertThat(e2e.max()).isEqualTo(2.5);
        assertThat(e2e.sd()).isNull();

        ServerMetricSummary a =
                byName(report.perReplica().get("a")).get("vllm:e2e_request_latency_seconds");
        // a alone (2,4,7,8): median rank 4 -> le=1: 0.5 + 0.5 * (4-2)/(4-2) = 1.0; mean 10.8/8
        assertThat(a.median()).isCloseTo(1.0, within(1e-12));
        assertThat(a.mean()).isCloseTo(1.35, within(1e-12));
        ServerMetricSummary b =
                byName(report.perReplica().get("b")).get("vllm:e2e_request_latency_seconds");
        // b alone (0,2,4,4): lowest non-empty bucket le=1 -> min 0.5; max le=2.5
        assertThat(b.min()).isEqualTo(0.5);
        assertThat(b.max()).isEqualTo(2.5);
    }

    @Test
    void coverageCountsScrapesInTheWindow() {
        ServerMetricsReport report =
                WindowStatistics.compute(
                        ServerMetricCatalog.forBackend("vllm"), twoReplicas(), 0, 10_010, 8);
        ScrapeCoverage c = report.coverage();
        assertThat(c.succeeded()).isEqualTo(6);
        assertThat(c.failed()).isEqualTo(1);
        assertThat(c.expected()).isEqualTo(8);
        assertThat(c.replicas()).isEqualTo(2);
        assertThat(c.ratio()).isEqualTo(0.75);
        assertThat(c.errors()).containsExactly("b: connect timed out");
        assertThat(c.succeededByReplica()).containsEntry("a", 3).containsEntry("b", 3);
    }

    @Test
    void legacyAndRenamedVllmNamesAreEachSummarisedUnderTheExposedName() {
        String legacy =
                """
                # TYPE vllm:gpu_cache_usage_perc gauge
                vllm:gpu_cache_usage_perc{model_name="m"} 0.25
                # TYPE vllm:time_per_output_token_seconds histogram
                vllm:time_per_output_token_seconds_bucket{model_name="m",le="0.1"} 1
                vllm:time_per_output_token_seconds_bucket{model_name="m",le="+Inf"} 1
                vllm:time_per_output_token_seconds_sum{model_name="m"} 0.05
                vllm:time_per_output_token_seconds_count{model_name="m"} 1
                """;
        List<Scrape> scrapes = List.of(scrape("old", 0, legacy), scrape("old", 1000, legacy));
        Map<String, ServerMetricSummary> m =
                byName(
                        WindowStatistics.compute(
                                        ServerMetricCatalog.forBackend("vllm"), scrapes, 0, 1000, 0)
                                .aggregate());
        assertThat(m.get("vllm:gpu_cache_usage_perc").mean()).isEqualTo(0.25);
        assertThat(m).containsKey("vllm:time_per_output_token_seconds");

        // llm-d-inference-sim exposes both the new and the deprecated TPOT names: both are
        // summarised, each under its own name (dashboards keyed on either keep working)
        String both =
                legacy
                        + """
                        # TYPE vllm:inter_token_latency_seconds histogram
                        vllm:inter_token_latency_seconds_bucket{model_name="m",le="0.1"} 1
                        vllm:inter_token_latency_seconds_bucket{model_name="m",le="+Inf"} 1
                        vllm:inter_token_latency_seconds_sum{model_name="m"} 0.05
                        vllm:inter_token_latency_seconds_count{model_name="m"} 1
                        """;
        Map<String, ServerMetricSummary> sim =
                byName(
                        WindowStatistics.compute(
                                        ServerMetricCatalog.forBackend("llm-d-inference-sim"),
                                        List.of(scrape("sim", 0, both), scrape("sim", 1000, both)),
                                        0,
                                        1000,
                                        0)
                                .aggregate());
        assertThat(sim).containsKey("vllm:inter_token_latency_seconds");
        assertThat(sim).containsKey("vllm:time_per_output_token_seconds");
        assertThat(sim.get("vllm:time_per_output_token_seconds").increase()).isZero();
        assertThat(sim.get("vllm:gpu_cache_usage_perc").mean()).isEqualTo(0.25);
        // no observations in the window: count 0, no quantiles (Prometheus would say NaN)
        assertThat(sim.get("vllm:inter_token_latency_seconds").increase()).isZero();
        assertThat(sim.get("vllm:inter_token_latency_seconds").median()).isNull();
        assertThat(sim.get("vllm:inter_token_latency_seconds").mean()).isNull();
    }

    /**
     * A server exposing an old and a new vLLM name: exclude and include act on the exposed names,
     * so leaving out the new name keeps the old one (it used to leave out both: the alias was only
     * tried when the new name was absent), and an aggregation set for one name is that name's.
     */
    @Test
    void includeAndExcludeActOnTheExposedNames() {
        String both =
                """
                # TYPE vllm:kv_cache_usage_perc gauge
                vllm:kv_cache_usage_perc{model_name="m"} %s
                # TYPE vllm:gpu_cache_usage_perc gauge
                vllm:gpu_cache_usage_perc{model_name="m"} %s
                """;
        List<Scrape> scrapes =
                List.of(
                        scrape("a", 0, both.formatted("0.25", "0.25")),
                        scrape("b", 1, both.formatted("0.75", "0.75")),
                        scrape("a", 1000, both.formatted("0.25", "0.25")),
                        scrape("b", 1001, both.formatted("0.75", "0.75")));
        Map<String, ServerMetricSummary> withoutNew =
                byName(
                        WindowStatistics.compute(
                                        ServerMetricCatalog.forBackend("vllm")
                                                .adjust(
                                                        List.of(),
                                                        List.of("vllm:kv_cache_usage_perc")),
                                        scrapes,
                                        0,
                                        1001,
                                        0)
                                .aggregate());
        assertThat(withoutNew).doesNotContainKey("vllm:kv_cache_usage_perc");
        assertThat(withoutNew.get("vllm:gpu_cache_usage_perc").mean()).isEqualTo(0.5);

        Map<String, ServerMetricSummary> withoutOld =
                byName(
                        WindowStatistics.compute(
                                        ServerMetricCatalog.forBackend("vllm")
                                                .adjust(
                                                        List.of("vllm:gpu_cache_usage_perc:sum"),
                                                        List.of("*kv_cache*")),
                                        scrapes,
                                        0,
                                        1001,
                                        0)
                                .aggregate());
        assertThat(withoutOld).doesNotContainKey("vllm:kv_cache_usage_perc");
        // the :sum given for the old name: 0.25 + 0.75 per round (the catalog's mean gives 0.5)
        assertThat(withoutOld.get("vllm:gpu_cache_usage_perc").mean()).isEqualTo(1.0);

        Map<String, ServerMetricSummary> defaults =
                byName(
                        WindowStatistics.compute(
                                        ServerMetricCatalog.forBackend("vllm"), scrapes, 0, 1001, 0)
                                .aggregate());
        assertThat(defaults.get("vllm:kv_cache_usage_perc").mean()).isEqualTo(0.5);
        assertThat(defaults.get("vllm:gpu_cache_usage_perc").mean()).isEqualTo(0.5);
    }

    @Test
    void includeExcludeAdjustTheCatalogButNeverSummariseInfoGauges() {
        String page =
                """
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running 2
                # TYPE vllm:num_requests_waiting gauge
                vllm:num_requests_waiting 7
                # TYPE custom_queue_depth gauge
                custom_queue_depth{shard="1"} 4
                custom_queue_depth{shard="2"} 6
                # TYPE custom_hit_ratio gauge
                custom_hit_ratio 0.5
                # TYPE build_info gauge
                build_info{version="1"} 1
                """;
        List<Scrape> scrapes = List.of(scrape("r", 0, page), scrape("r", 1000, page));
        ServerMetricCatalog catalog =
                ServerMetricCatalog.forBackend("vllm")
                        .adjust(
                                List.of("custom_*", "custom_queue_depth:mean", "build_info"),
                                List.of("vllm:num_requests_waiting"));
        Map<String, ServerMetricSummary> m =
                byName(WindowStatistics.compute(catalog, scrapes, 0, 1000, 0).aggregate());
        assertThat(m)
                .containsKeys(
                        "vllm:num_requests_running", "custom_queue_depth", "custom_hit_ratio");
        assertThat(m).doesNotContainKeys("vllm:num_requests_waiting", "build_info");
        // the explicit :mean wins over the glob: mean of shards 4 and 6
        assertThat(m.get("custom_queue_depth").mean()).isEqualTo(5.0);

        ServerMetricCatalog sumCatalog =
                ServerMetricCatalog.forBackend("vllm")
                        .adjust(List.of("custom_queue_depth"), List.of());
        assertThat(
                        byName(
                                        WindowStatistics.compute(sumCatalog, scrapes, 0, 1000, 0)
                                                .aggregate())
                                .get("custom_queue_depth")
                                .mean())
                .isEqualTo(10.0);

        assertThat(
                        ServerMetricCatalog.validateSelectors(
                                List.of("ok_name", "bad name", "bad-name:sum", ""),
                                List.of("fine_*", "no/slash")))
                .containsExactly(
                        "metrics.include[1] 'bad name': must be a metric name or glob of letters,"
                                + " digits, '_', ':', '*' and '?'",
                        "metrics.include[2] 'bad-name:sum': must be a metric name or glob of letters,"
                                + " digits, '_', ':', '*' and '?'",
                        "metrics.include[3] '': must not be empty",
                        "metrics.exclude[1] 'no/slash': must be a metric name or glob of letters,"
                                + " digits, '_', ':', '*' and '?'");
    }

    @Test
    void splitLabelsAndSummariesAndOtherBackends() {
        String triton =
                """
                # TYPE nv_trt_llm_request_metrics gauge
                nv_trt_llm_request_metrics{model="ensemble",request_type="active"} 3
                nv_trt_llm_request_metrics{model="ensemble",request_type="max"} 64
                # TYPE nv_inference_request_success counter
                nv_inference_request_success{model="ensemble",version="1"} %d
                """;
        List<Scrape> scrapes =
                List.of(
                        scrape("t", 0, triton.formatted(10)),
                        scrape("t", 2000, triton.formatted(30)));
        Map<String, ServerMetricSummary> m =
                byName(
                        WindowStatistics.compute(
                                        ServerMetricCatalog.forBackend("triton"),
                                        scrapes,
                                        0,
                                        2000,
                                        0)
                                .aggregate());
        assertThat(m.get("nv_trt_llm_request_metrics{request_type=\"active\"}").mean())
                .isEqualTo(3.0);
        assertThat(m.get("nv_trt_llm_request_metrics{request_type=\"max\"}").mean())
                .isEqualTo(64.0);
        // no _total suffix (Triton): still a counter, 20 over 2 s
        assertThat(m.get("nv_inference_request_success").rate()).isEqualTo(10.0);

        // TGI renders a histogram without buckets as a summary
        String tgi =
                """
                # TYPE tgi_request_duration summary
                tgi_request_duration{quantile="0.5"} %s
                tgi_request_duration{quantile="0.9"} 2.0
                tgi_request_duration{quantile="0.99"} 3.0
                tgi_request_duration_sum %s
                tgi_request_duration_count %s
                # TYPE tgi_queue_size gauge
                tgi_queue_size 4
                """;
        List<Scrape> tgiScrapes =
                List.of(
                        scrape("g", 0, tgi.formatted("0.5", "10", "10")),
                        scrape("g", 1000, tgi.formatted("1.5", "40", "30")));
        Map<String, ServerMetricSummary> t =
                byName(
                        WindowStatistics.compute(
                                        ServerMetricCatalog.forBackend("tgi"),
                                        tgiScrapes,
                                        0,
                                        1000,
                                        0)
                                .aggregate());
        ServerMetricSummary duration = t.get("tgi_request_duration");
        assertThat(duration.type()).isEqualTo(MetricType.SUMMARY);
        // (40 - 10) / (30 - 10) = 1.5; quantiles are the server's at the last scrape
        assertThat(duration.mean()).isEqualTo(1.5);
        assertThat(duration.median()).isEqualTo(1.5);
        assertThat(duration.p99()).isEqualTo(3.0);
        assertThat(t.get("tgi_queue_size").mean()).isEqualTo(4.0);
    }

    @Test
    void noSuccessfulScrapesGiveAnEmptyReportWithCoverage() {
        List<Scrape> scrapes =
                List.of(Scrape.failure("a", 0, "refused"), Scrape.failure("a", 5, "refused"));
        ServerMetricsReport report =
                WindowStatistics.compute(ServerMetricCatalog.forBackend("vllm"), scrapes, 0, 10, 4);
        assertThat(report.aggregate()).isEmpty();
        assertThat(report.coverage().ratio()).isZero();
        assertThat(report.coverage().errors()).containsExactly("a: refused");
    }

    @Test
    void theReportLandsInTheLpgDocumentAsStrings() {
        ServerMetricsReport report =
                WindowStatistics.compute(
                        ServerMetricCatalog.forBackend("vllm"), twoReplicas(), 0, 10_010, 8);
        StageResult stage = new StageResult();
        stage.requestedRate = 5;
        ProfileContext context =
                new ProfileContext(
                        "vllm", "m", null, null, Instant.EPOCH, null, null, 1, null, null);
        ObjectNode doc = LpgProfileWriter.write(stage, context, report);
        JsonNode running = doc.at("/metrics/server_metrics/vllm:num_requests_running");
        assertThat(running.get("Mean").isTextual()).isTrue();
        assertThat(running.get("Median").asText()).isEqualTo("5");
        assertThat(running.get("P90").asText()).isEqualTo(LpgProfileWriter.formatServerValue(8.2));
        JsonNode e2e = doc.at("/metrics/server_metrics/vllm:e2e_request_latency_seconds");
        assertThat(e2e.get("P99").asText()).isEqualTo("2.5");
        assertThat(e2e.get("Min").asText()).isEqualTo("0");
        assertThat(e2e.has("Sd")).isFalse();
        assertThat(e2e.get("Count").asText()).isEqualTo("12");
        JsonNode prompt = doc.at("/metrics/server_metrics/vllm:prompt_tokens_total");
        assertThat(prompt.get("Increase").asText()).isEqualTo("130");
        assertThat(prompt.get("Rate").asText()).isEqualTo("13");
        JsonNode list = doc.at("/summary_stats/stats/0/model_server_metrics");
        assertThat(list.size()).isEqualTo(report.aggregate().size());
        assertThat(list.get(0).get("Name").asText()).isEqualTo("vllm:num_requests_running");
        assertThat(
                        doc.at(
                                        "/metrics/server_metrics_by_replica/a/vllm:num_requests_running/Mean")
                                .asText())
                .isEqualTo("4");
        assertThat(doc.at("/metrics/server_metrics_coverage/ratio").doubleValue()).isEqualTo(0.75);
        assertThat(LpgProfileWriter.toJson(doc)).doesNotContain("NaN").doesNotContain("Infinity");
    }

    @Test
    void trimmedPagesSurviveJsonAndGiveTheSameStatistics() throws Exception {
        ServerMetricCatalog catalog = ServerMetricCatalog.forBackend("vllm");
        com.fasterxml.jackson.databind.ObjectMapper json =
                new com.fasterxml.jackson.databind.ObjectMapper();
        List<Scrape> trimmed = new ArrayList<>();
        for (Scrape s : twoReplicas()) {
            if (!s.succeeded()) {
                trimmed.add(s);
                continue;
            }
            io.inferencebench.profile.prom.ParsedPage small = catalog.trim(s.page());
            assertThat(small.families())
                    .doesNotContainKeys("vllm:cache_config_info", "vllm:lora_requests_info");
            // a checkpoint stores pages as JSON; records round-trip through Jackson
            String text = json.writeValueAsString(small);
            trimmed.add(
                    Scrape.success(
                            s.replica(),
                            s.timestampMillis(),
                            json.readValue(text, io.inferencebench.profile.prom.ParsedPage.class)));
        }
        ServerMetricsReport full = WindowStatistics.compute(catalog, twoReplicas(), 0, 10_010, 8);
        ServerMetricsReport fromTrimmed = WindowStatistics.compute(catalog, trimmed, 0, 10_010, 8);
        assertThat(fromTrimmed.aggregate()).isEqualTo(full.aggregate());
        assertThat(fromTrimmed.perReplica()).isEqualTo(full.perReplica());
        assertThat(fromTrimmed.coverage()).isEqualTo(full.coverage());
    }

    @Test
    void nanGaugeSamplesAreCountedNotDroppedAndTheProfileStaysJson() throws Exception {
        // kv is NaN in every scrape; running in two of three.
        List<Scrape> scrapes =
                List.of(
                        scrape("a", 0, vllmPage(Double.NaN, Double.NaN, null, null, 0)),
                        scrape("a", 5_000, vllmPage(4, Double.NaN, null, null, 0)),
                        scrape("a", 10_000, vllmPage(Double.NaN, Double.NaN, null, null, 0)));
        ServerMetricsReport report =
                WindowStatistics.compute(
                        ServerMetricCatalog.forBackend("vllm"), scrapes, 0, 10_000, 3);
        Map<String, ServerMetricSummary> m = byName(report.aggregate());
        assertThat(m).containsKey("vllm:kv_cache_usage_perc");
        ServerMetricSummary kv = m.get("vllm:kv_cache_usage_perc");
        assertThat(kv.mean()).isNull();
        assertThat(kv.samples()).isZero();
        ServerMetricSummary running = m.get("vllm:num_requests_running");
        assertThat(running.mean()).isEqualTo(4.0);
        assertThat(running.samples()).isEqualTo(1);
        assertThat(byName(report.perReplica().get("a"))).containsKey("vllm:kv_cache_usage_perc");

        StageResult stage = new StageResult();
        stage.requestedRate = 5;
        ProfileContext context =
                new ProfileContext(
                        "vllm", "m", null, null, Instant.EPOCH, null, null, 1, null, null);
        String json = LpgProfileWriter.toJson(LpgProfileWriter.write(stage, context, report));
        assertThat(json).doesNotContain("NaN").doesNotContain("Infinity");
        // Strict JSON: Jackson refuses NaN tokens unless told otherwise.
        JsonNode doc = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json);
        JsonNode kvNode = doc.at("/metrics/server_metrics/vllm:kv_cache_usage_perc");
        assertThat(kvNode.path("NanSamples").asText()).isEqualTo("3");
        assertThat(kvNode.has("Mean")).isFalse();
        assertThat(kvNode.path("Type").asText()).isEqualTo("gauge");
        JsonNode runningNode = doc.at("/metrics/server_metrics/vllm:num_requests_running");
        assertThat(runningNode.path("Mean").asText()).isEqualTo("4");
        assertThat(runningNode.path("NanSamples").asText()).isEqualTo("2");
        assertThat(
                        doc.at(
                                        "/metrics/server_metrics_by_replica/a/vllm:kv_cache_usage_perc/NanSamples")
                                .asText())
                .isEqualTo("3");
        // A gauge without NaN keeps its key set.
        assertThat(
                        LpgProfileWriter.toJson(
                                LpgProfileWriter.write(
                                        stage,
                                        context,
                                        WindowStatistics.compute(
                                                ServerMetricCatalog.forBackend("vllm"),
                                                twoReplicas(),
                                                0,
                                                10_010,
                                                8))))
                .doesNotContain("NanSamples");
    }
}
