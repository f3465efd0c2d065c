package io.inferencebench.runner.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.runner.stub.StubServer;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DirectScraperTest {

    private static ServerMetricSummary find(ServerMetricsReport report, String name) {
        return report.aggregate().stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError(name + " missing from " + report));
    }

    /**
     * A server restarted mid-window with smaller fake histograms: the increase is the new values
     * (reset correction), so the histogram statistics are exactly those of the second page, and the
     * scrapes missed while it was down lower the coverage without failing anything.
     */
    @Test
    void restartedServerGivesExactHistogramStatisticsAndLowerCoverage(@TempDir Path tmp)
            throws Exception {
        int port = ScrapeMetricsCliTest.freePort();
        List<String> warnings = new CopyOnWriteArrayList<>();
        try (DirectScraper scraper =
                new DirectScraper(
                        List.of(URI.create("http://127.0.0.1:" + port + "/metrics")),
                        ServerMetricCatalog.forBackend("vllm"),
                        Duration.ofMillis(100),
                        Duration.ofMillis(500),
                        warnings::add)) {
            ServerMetricsReport report;
            try (ScrapeMetricsCliTest.Sim before =
                    new ScrapeMetricsCliTest.Sim(
                            port,
                            tmp.resolve("before.log"),
                            "--fake-metrics",
                            "{\"running-requests\":7,\"waiting-requests\":0,"
                                    + "\"ttft-buckets-values\":[5,5,5]}")) {
                scraper.stageStarting();
                Thread.sleep(300);
            }
            Thread.sleep(400);
            try (ScrapeMetricsCliTest.Sim after =
                    new ScrapeMetricsCliTest.Sim(
                            port,
                            tmp.resolve("after.log"),
                            "--fake-metrics",
                            "{\"running-requests\":2,\"waiting-requests\":0,"
                                    + "\"ttft-buckets-values\":[1,2,3]}")) {
                Thread.sleep(300);
                report = scraper.stageFinished();
            }

            // cumulative buckets 1, 3, 6 over bounds 0.001, 0.005, 0.01; sum 0.001 + 2*0.005 +
            // 3*0.01; quantiles by histogram_quantile's linear interpolation inside the bucket
            ServerMetricSummary ttft = find(report, "vllm:time_to_first_token_seconds");
            assertThat(ttft.type()).isEqualTo(MetricType.HISTOGRAM);
            assertThat(ttft.increase()).isEqualTo(6.0);
            assertThat(ttft.mean()).isCloseTo((0.001 + 2 * 0.005 + 3 * 0.01) / 6, within(1e-12));
            assertThat(ttft.median()).isCloseTo(0.005, within(1e-12));
            assertThat(ttft.p90()).isCloseTo(0.005 + 0.005 * 2.4 / 3, within(1e-12));
            assertThat(ttft.p99()).isCloseTo(0.005 + 0.005 * 2.94 / 3, within(1e-12));
            assertThat(ttft.max()).isCloseTo(0.01, within(1e-12));

            ServerMetricSummary running = find(report, "vllm:num_requests_running");
            assertThat(running.min()).isEqualTo(2.0);
            assertThat(running.max()).isEqualTo(7.0);

            var coverage = report.coverage();
            assertThat(coverage.failed()).isGreaterThanOrEqualTo(2);
            assertThat(coverage.succeeded()).isGreaterThanOrEqualTo(4);
            assertThat(coverage.ratio()).isGreaterThan(0.0).isLessThan(1.0);
            assertThat(coverage.errors()).anyMatch(e -> e.contains("connection refused"));
            assertThat(warnings).hasSize(1);
        }
    }

    @Test
    void asksForTextFormatAndRecordsHttpErrorsAsFailedScrapes() throws Exception {
        ConcurrentLinkedQueue<String> accept = new ConcurrentLinkedQueue<>();
        AtomicInteger served = new AtomicInteger();
        String page =
                "# TYPE vllm:num_requests_waiting gauge\n"
                        + "vllm:num_requests_waiting{model_name=\"m\"} %d\n";
        try (StubServer server =
                        new StubServer(
                                (request, exchange) -> {
                                    accept.add(String.valueOf(request.header("accept")));
                                    int n = served.incrementAndGet();
                                    if (n == 2) {
                                        exchange.respond(503, "text/plain", "busy");
                                    } else {
                                        exchange.respond(
                                                200,
                                                "text/plain; version=0.0.4",
                                                page.formatted(n));
                                    }
                                });
                DirectScraper scraper =
                        new DirectScraper(
                                List.of(URI.create(server.baseUrl() + "/metrics")),
                                ServerMetricCatalog.forBackend("vllm"),
                                Duration.ofHours(1),
                                Duration.ofSeconds(2),
                                w -> {})) {
            scraper.stageStarting();
            ServerMetricsReport first = scraper.stageFinished();
            scraper.stageStarting();
            ServerMetricsReport second = scraper.stageFinished();

            assertThat(accept).hasSize(4).allMatch(a -> a.equals("text/plain;version=0.0.4"));
            // stage 1: waiting 1 then a 503; stage 2: waiting 3 and 4
            assertThat(first.coverage().succeeded()).isEqualTo(1);
            assertThat(first.coverage().errors()).anyMatch(e -> e.endsWith("HTTP 503"));
            assertThat(find(first, "vllm:num_requests_waiting").mean()).isEqualTo(1.0);
            assertThat(second.coverage().ratio()).isEqualTo(1.0);
            assertThat(second.coverage().expected()).isEqualTo(2);
            assertThat(find(second, "vllm:num_requests_waiting").mean()).isEqualTo(3.5);
        }
    }

    @Test
    @Timeout(30)
    void coverageCountsTheRoundsStartedNotTheTicksTheScraperFellBehindOn() throws Exception {
        AtomicInteger served = new AtomicInteger();
        try (StubServer server =
                        new StubServer(
                                (request, exchange) -> {
                                    served.incrementAndGet();
                                    try {
                                        Thread.sleep(150);
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt();
                                    }
                                    exchange.respond(
                                            200,
                                            "text/plain; version=0.0.4",
                                            "# TYPE vllm:num_requests_waiting gauge\n"
                                                    + "vllm:num_requests_waiting 2\n");
                                });
                DirectScraper scraper =
                        new DirectScraper(
                                List.of(URI.create(server.baseUrl() + "/metrics")),
                                ServerMetricCatalog.forBackend("vllm"),
                                Duration.ofMillis(20),
                                Duration.ofSeconds(2),
                                w -> {})) {
            long start = System.nanoTime();
            scraper.stageStarting();
            Thread.sleep(600);
            ServerMetricsReport report = scraper.stageFinished();
            long windowMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            // 150 ms per scrape against a 20 ms interval: far fewer rounds than ticks ran, and
            // every one of them succeeded, so nothing the server failed to deliver is missing.
            assertThat(report.coverage().succeeded()).isEqualTo(served.get());
            assertThat(report.coverage().expected()).isEqualTo(served.get());
            assertThat(report.coverage().ratio()).isEqualTo(1.0);
            assertThat((long) served.get()).isLessThan(windowMillis / 20);
        }
    }
}
