package io.inferencebench.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.MetricsSpec;
import io.inferencebench.crds.v1alpha1.PrometheusSpec;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.testkit.HostileMetricsServer;
import io.inferencebench.testkit.HostileMetricsServer.Exchange;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The operator scrapes every run's servers from one process: a hostile endpoint must cost one
 * failed scrape with its reason, and what the scrape allocates stays a small multiple of the body
 * bound however much the server offers (measured per thread: the scraping thread and the HTTP
 * client's).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostileMetricsEndpointTest {

    private static final long BOUND = 2L * 1024 * 1024;
    private static final long GIB = 1024L * 1024 * 1024;

    /**
     * What one scrape may allocate: the body buffer's growth copies (under twice the bound, twice
     * again for slack), plus the network buffers of the bytes the server managed to send before the
     * client hung up (counted twice: read, then copied into the body stream), plus 4 MiB for the
     * HTTP client's first use. Reading the page whole would allocate its size.
     */
    private static long allocationLimit(long bytesSent) {
        return 4 * BOUND + 2 * bytesSent + 4L * 1024 * 1024;
    }

    private final ServerMetricCatalog catalog = ServerMetricCatalog.forBackend("vllm");

    private static long allocatedByScrapingThreads() {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long total = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t == Thread.currentThread() || t.getName().startsWith("HttpClient")) {
                total += Math.max(0, mx.getThreadAllocatedBytes(t.threadId()));
            }
        }
        return total;
    }

    private record Outcome(Scrape scrape, long allocated) {}

    private Outcome scrape(HostileMetricsServer server) {
        return scrape(server, Duration.ofSeconds(20));
    }

    private Outcome scrape(HostileMetricsServer server, Duration timeout) {
        ScrapeClient client = new ScrapeClient(new ScrapeBodyReader(BOUND, timeout));
        long before = allocatedByScrapingThreads();
        Scrape scrape = client.scrape("replica-0", URI.create(server.url()), catalog);
        long allocated = allocatedByScrapingThreads() - before;
        System.out.printf("%s: %s, allocated %,d bytes%n", server.url(), scrape.error(), allocated);
        return new Outcome(scrape, allocated);
    }

    /** A run whose stage windows are read from the Prometheus at {@code url}. */
    private static BenchmarkRun runWithPrometheus(String url, String timeout) {
        PrometheusSpec prometheus = new PrometheusSpec();
        prometheus.setUrl(url);
        prometheus.setTimeout(timeout);
        MetricsSpec metrics = new MetricsSpec();
        metrics.setPrometheus(prometheus);
        BenchmarkRunSpec spec = new BenchmarkRunSpec();
        spec.setMetrics(metrics);
        BenchmarkRun run = new BenchmarkRun();
        run.setMetadata(new ObjectMetaBuilder().withName("r").withNamespace("ns").build());
        run.setSpec(spec);
        return run;
    }

    @Test
    void aPrometheusWhoseAnswerNeverEndsCostsOneTimeoutNotAThread() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.Stalled())) {
            BenchmarkRun run = runWithPrometheus(server.url().replace("/metrics", ""), "800ms");
            PrometheusStageSource source = new PrometheusStageSource(null, BOUND);
            long start = System.nanoTime();
            ServerMetricsReport report = source.report(run, catalog, 1_000, 61_000);
            long millis = (System.nanoTime() - start) / 1_000_000;

            assertThat(millis).isBetween(700L, 4_000L);
            assertThat(report.coverage().succeeded()).isZero();
            assertThat(report.coverage().errors())
                    .singleElement()
                    .asString()
                    .endsWith("did not answer /api/v1/targets within 800 ms");
            assertThat(server.nextExchange(10).clientHungUp()).isTrue();
            assertThat(server.requests()).isOne();
        }
    }

    @Test
    void aPrometheusAnswerThatNeverEndsIsCutAtTheBound() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.Endless())) {
            BenchmarkRun run = runWithPrometheus(server.url().replace("/metrics", ""), "20s");
            PrometheusStageSource source = new PrometheusStageSource(null, BOUND);
            long before = allocatedByScrapingThreads();
            ServerMetricsReport report = source.report(run, catalog, 1_000, 61_000);
            long allocated = allocatedByScrapingThreads() - before;

            assertThat(report.coverage().errors())
                    .singleElement()
                    .asString()
                    .endsWith("body that was refused: body exceeds " + BOUND + " bytes");
            long sent = 0;
            for (int i = 0; i < server.requests(); i++) {
                Exchange exchange = server.nextExchange(30);
                assertThat(exchange.clientHungUp()).isTrue();
                sent += exchange.bodyBytesSent();
            }
            System.out.printf("Prometheus answers: sent %,d, allocated %,d%n", sent, allocated);
            assertThat(allocated).isLessThan(server.requests() * allocationLimit(sent));
        }
    }

    @Test
    void aOneGibibytePageIsAFailedScrapeNotAFullHeap() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.HugePage(GIB))) {
            Outcome outcome = scrape(server);

            assertThat(outcome.scrape().succeeded()).isFalse();
            assertThat(outcome.scrape().error()).isEqualTo("body exceeds " + BOUND + " bytes");
            Exchange exchange = server.nextExchange(30);
            assertThat(exchange.clientHungUp()).isTrue();
            assertThat(exchange.bodyBytesSent()).isLessThan(GIB / 8);
            assertThat(outcome.allocated()).isLessThan(allocationLimit(exchange.bodyBytesSent()));
        }
    }

    @Test
    void aGzipBombStopsAtTheBoundOfDecompressedBytes() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.GzipBomb(10L * 1024 * 1024))) {
            Outcome outcome = scrape(server);

            assertThat(outcome.scrape().error())
                    .isEqualTo("body exceeds " + BOUND + " bytes (decompressed from gzip)");
            Exchange exchange = server.nextExchange(30);
            assertThat(exchange.clientHungUp()).isTrue();
            assertThat(exchange.bodyBytesSent()).isLessThan(10L * 1024 * 1024);
            assertThat(outcome.allocated()).isLessThan(allocationLimit(exchange.bodyBytesSent()));
        }
    }

    @Test
    void aBodyThatNeverEndsTimesOut() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.NeverEnding(20))) {
            Outcome outcome = scrape(server, Duration.ofMillis(800));

            assertThat(outcome.scrape().error()).isEqualTo("timed out after 800 ms");
            Exchange exchange = server.nextExchange(30);
            assertThat(exchange.clientHungUp()).isTrue();
            assertThat(exchange.bodyBytesSent()).isPositive();
        }
    }

    @Test
    void aRealPageIsStillParsedPlainAndGzipped() throws Exception {
        String page =
                """
                # HELP vllm:num_requests_running Number of requests currently running.
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{model_name="m"} 3
                """;
        for (boolean gzip : new boolean[] {false, true}) {
            try (HostileMetricsServer server =
                    new HostileMetricsServer(new HostileMetricsServer.Page(page, gzip))) {
                Scrape scrape = scrape(server).scrape();

                assertThat(scrape.error()).isNull();
                assertThat(scrape.page().family("vllm:num_requests_running").samples())
                        .singleElement()
                        .satisfies(s -> assertThat(s.value()).isEqualTo(3.0));
            }
        }
    }
}
