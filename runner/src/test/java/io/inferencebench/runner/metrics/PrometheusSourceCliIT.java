package io.inferencebench.runner.metrics;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.testkit.ProjectScripts;
import io.inferencebench.testkit.PrometheusServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --prometheus-url} against a real Prometheus server scraping model-sim gives the same
 * statistics as {@code --scrape-metrics}, within Prometheus' scrape interval at the window edges.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PrometheusSourceCliIT {

    private static final int PROMPTS = 200;

    @Test
    void prometheusSourceAgreesWithDirectScraping(@TempDir Path tmp) throws Exception {
        Path prometheus = provisionPrometheus();
        try (ScrapeMetricsCliTest.Sim sim =
                new ScrapeMetricsCliTest.Sim(
                        tmp.resolve("sim.log"),
                        argv(
                                "--time-to-first-token 30 --inter-token-latency 5 --max-num-seqs 100"))) {
            int promPort = ScrapeMetricsCliTest.freePort();
            Path config = tmp.resolve("prometheus.yml");
            Files.writeString(
                    config,
                    """
                    global:
                      scrape_interval: 1s
                      scrape_timeout: 1s
                    scrape_configs:
                      - job_name: model-sim
                        static_configs:
                          - targets: ['%s']
                    """
                            .formatted(URI.create(sim.baseUrl).getAuthority()));
            Process prom =
                    PrometheusServer.start(
                            prometheus,
                            config,
                            tmp.resolve("data"),
                            promPort,
                            tmp.resolve("prometheus.log"));
            try {
                String promUrl = "http://127.0.0.1:" + promPort;
                awaitTargetUp(promUrl, tmp.resolve("prometheus.log"));
                String[] stage = {
                    "--request-rate", "20", "--num-prompts", Integer.toString(PROMPTS)
                };
                Path viaProm = tmp.resolve("prom");
                ScrapeMetricsCliTest.Outcome p =
                        ScrapeMetricsCliTest.run(
                                ScrapeMetricsCliTest.load(
                                        sim.baseUrl,
                                        viaProm,
                                        concat(
                                                stage,
                                                "--prometheus-url",
                                                promUrl,
                                                "--prometheus-selector",
                                                "{job=\"model-sim\"}")));
                Path direct = tmp.resolve("direct");
                ScrapeMetricsCliTest.Outcome d =
                        ScrapeMetricsCliTest.run(
                                ScrapeMetricsCliTest.load(
                                        sim.baseUrl,
                                        direct,
                                        concat(
                                                stage,
                                                "--scrape-metrics",
                                                "--scrape-interval",
                                                "1s")));
                assertThat(p.code()).as(p.err()).isZero();
                assertThat(d.code()).as(d.err()).isZero();
                JsonNode fromProm = ScrapeMetricsCliTest.profiles(viaProm).get(0).path("metrics");
                JsonNode fromSim = ScrapeMetricsCliTest.profiles(direct).get(0).path("metrics");
                assertThat(fromProm.path("server_metrics_coverage").path("succeeded").asInt())
                        .isGreaterThan(0);

                JsonNode ttftProm =
                        fromProm.path("server_metrics").path("vllm:time_to_first_token_seconds");
                JsonNode ttftSim =
                        fromSim.path("server_metrics").path("vllm:time_to_first_token_seconds");
                assertThat(ttftSim.path("Count").asInt()).isEqualTo(PROMPTS);
                // 20 req/s and a 1 s Prometheus interval: each edge may miss up to 20 requests
                assertThat(ttftProm.path("Count").asInt()).isBetween(PROMPTS - 40, PROMPTS);
                for (JsonNode ttft : new JsonNode[] {ttftProm, ttftSim}) {
                    assertThat(Double.parseDouble(ttft.path("Mean").asText()))
                            .isBetween(0.02, 0.04);
                    assertThat(Double.parseDouble(ttft.path("Median").asText()))
                            .isBetween(0.02, 0.04);
                }
            } finally {
                prom.destroy();
                if (!prom.waitFor(10, TimeUnit.SECONDS)) {
                    prom.destroyForcibly();
                }
            }
        }
    }

    private static String[] concat(String[] a, String... b) {
        String[] out = new String[a.length + b.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static void awaitTargetUp(String promUrl, Path log) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> r =
                        client.send(
                                HttpRequest.newBuilder(
                                                URI.create(
                                                        promUrl
                                                                + "/api/v1/query?query=up%7Bjob%3D%22model-sim%22%7D"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200 && r.body().contains("\"1\"]")) {
                    return;
                }
            } catch (java.io.IOException notYet) {
                // starting
            }
            Thread.sleep(250);
        }
        throw new AssertionError("Prometheus never scraped model-sim: " + Files.readString(log));
    }

    private static Path provisionPrometheus() throws Exception {
        Path script = ProjectScripts.find("e2e/scripts/provision-prometheus.sh");
        Assumptions.assumeTrue(
                script != null, "skipped: e2e/scripts/provision-prometheus.sh not found");
        Process p =
                new ProcessBuilder("bash", script.toString())
                        .redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        boolean ok = p.waitFor(15, TimeUnit.MINUTES) && p.exitValue() == 0 && !out.isBlank();
        Assumptions.assumeTrue(ok, "skipped: a Prometheus server cannot be installed here");
        String[] lines = out.split("\n");
        return Path.of(lines[lines.length - 1].strip());
    }
}
