package io.inferencebench.runner.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.prometheus.PrometheusSourceConfig;
import io.inferencebench.testkit.HostileMetricsServer;
import io.inferencebench.testkit.HostileMetricsServer.Exchange;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The runner's scraper against endpoints that try to exhaust it: each costs one failed scrape with
 * its reason, and what the scraping threads allocate stays a small multiple of the body bound
 * however much the server offers.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HostileMetricsEndpointTest {

    private static final long BOUND = 2L * 1024 * 1024;
    private static final long GIB = 1024L * 1024 * 1024;

    /** Bytes allocated so far by the threads that scrape (the scraper's and the HTTP client's). */
    static long scrapingThreadsAllocated() {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long total = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String name = t.getName();
            if (name.startsWith("server-metrics") || name.startsWith("HttpClient")) {
                total += Math.max(0, mx.getThreadAllocatedBytes(t.threadId()));
            }
        }
        return total;
    }

    /**
     * What scraping may allocate: per scrape the body buffer's growth copies (under twice the
     * bound, twice again for slack), plus the network buffers of the bytes the server managed to
     * send before the client hung up (counted twice: read, then copied into the body stream), plus
     * 4 MiB for the HTTP client's first use. Reading a page whole would allocate its size.
     */
    static long allocationLimit(int scrapes, long bytesSent) {
        return scrapes * 4 * BOUND + 2 * bytesSent + 4L * 1024 * 1024;
    }

    private record Outcome(ServerMetricsReport report, long allocated, List<String> warnings) {}

    /** One stage window of start and end scrapes only (the interval is far longer). */
    private static Outcome scrapeOneWindow(String url, Duration timeout) throws Exception {
        List<String> warnings = new CopyOnWriteArrayList<>();
        try (DirectScraper scraper =
                new DirectScraper(
                        List.of(URI.create(url)),
                        ServerMetricCatalog.forBackend("vllm"),
                        Duration.ofHours(1),
                        timeout,
                        BOUND,
                        warnings::add)) {
            long before = scrapingThreadsAllocated();
            scraper.stageStarting();
            ServerMetricsReport report = scraper.stageFinished();
            // read before close(): the scraper's threads end with it
            long allocated = scrapingThreadsAllocated() - before;
            System.out.printf("%s: scraping threads allocated %,d bytes%n", url, allocated);
            return new Outcome(report, allocated, warnings);
        }
    }

    @Test
    void aOneGibibytePageIsCutAtTheBound() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.HugePage(GIB))) {
            Outcome outcome = scrapeOneWindow(server.url(), Duration.ofSeconds(20));

            assertThat(outcome.report().coverage().succeeded()).isZero();
            assertThat(outcome.report().coverage().failed()).isEqualTo(2);
            assertThat(outcome.report().coverage().errors())
                    .singleElement()
                    .asString()
                    .endsWith(": body exceeds " + BOUND + " bytes");
            assertThat(outcome.warnings()).singleElement().asString().contains("body exceeds");
            long sent = 0;
            for (int i = 0; i < 2; i++) {
                Exchange exchange = server.nextExchange(30);
                assertThat(exchange.clientHungUp()).isTrue();
                assertThat(exchange.bodyBytesSent()).isLessThan(GIB / 8);
                sent += exchange.bodyBytesSent();
            }
            System.out.printf("server sent %,d body bytes in 2 scrapes%n", sent);
            assertThat(outcome.allocated()).isLessThan(allocationLimit(2, sent));
        }
    }

    @Test
    void aGzipBombStopsAtTheBoundOfDecompressedBytes() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.GzipBomb(10L * 1024 * 1024))) {
            Outcome outcome = scrapeOneWindow(server.url(), Duration.ofSeconds(20));

            assertThat(outcome.report().coverage().succeeded()).isZero();
            assertThat(outcome.report().coverage().errors())
                    .singleElement()
                    .asString()
                    .endsWith(": body exceeds " + BOUND + " bytes (decompressed from gzip)");
            long sent = 0;
            for (int i = 0; i < 2; i++) {
                Exchange exchange = server.nextExchange(30);
                // 10 MiB of this gzip inflates to more than 1 GiB; the client stopped long before
                assertThat(exchange.clientHungUp()).isTrue();
                assertThat(exchange.bodyBytesSent()).isLessThan(10L * 1024 * 1024);
                sent += exchange.bodyBytesSent();
            }
            System.out.printf("server sent %,d body bytes in 2 scrapes%n", sent);
            assertThat(outcome.allocated()).isLessThan(allocationLimit(2, sent));
        }
    }

    @Test
    void aBodyThatNeverEndsTimesOut() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.NeverEnding(20))) {
            Outcome outcome = scrapeOneWindow(server.url(), Duration.ofMillis(700));

            assertThat(outcome.report().coverage().succeeded()).isZero();
            assertThat(outcome.report().coverage().failed()).isEqualTo(2);
            assertThat(outcome.report().coverage().errors())
                    .singleElement()
                    .asString()
                    .endsWith(": timed out after 700 ms");
            // the server kept sending until the client hung up on it
            Exchange exchange = server.nextExchange(30);
            assertThat(exchange.clientHungUp()).isTrue();
            assertThat(exchange.bodyBytesSent()).isPositive();
        }
    }

    @Test
    void aRealGzipPageIsStillParsed() throws Exception {
        String page =
                """
                # HELP vllm:num_requests_running Number of requests currently running.
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{model_name="m"} 3
                # HELP vllm:num_requests_waiting Number of requests waiting.
                # TYPE vllm:num_requests_waiting gauge
                vllm:num_requests_waiting{model_name="m"} 1
                """;
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.Page(page, true))) {
            Outcome outcome = scrapeOneWindow(server.url(), Duration.ofSeconds(5));

            assertThat(outcome.report().coverage().errors()).isEmpty();
            assertThat(outcome.report().coverage().succeeded()).isEqualTo(2);
            assertThat(outcome.report().aggregate())
                    .anySatisfy(
                            s -> {
                                assertThat(s.name()).isEqualTo("vllm:num_requests_running");
                                assertThat(s.max()).isEqualTo(3.0);
                            });
            assertThat(server.nextExchange(5).clientHungUp()).isFalse();
        }
    }

    /** Bytes allocated so far by the calling thread and the JDK HTTP client's threads. */
    static long prometheusQueryAllocated() {
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long total = Math.max(0, mx.getCurrentThreadAllocatedBytes());
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("HttpClient")) {
                total += Math.max(0, mx.getThreadAllocatedBytes(t.threadId()));
            }
        }
        return total;
    }

    /**
     * One stage window read from a "Prometheus" at {@code url}. No step is configured, so the
     * source first asks the targets API for the scrape interval, then the metric names.
     */
    private static Outcome queryOneWindow(String url, Duration timeout) throws Exception {
        List<String> warnings = new CopyOnWriteArrayList<>();
        PrometheusSourceConfig config =
                PrometheusSourceConfig.of(URI.create(url.replace("/metrics", "")), null)
                        .withTimeout(timeout);
        try (PrometheusWindowSource source =
                new PrometheusWindowSource(
                        config, BOUND, ServerMetricCatalog.forBackend("vllm"), warnings::add)) {
            long before = prometheusQueryAllocated();
            source.stageStarting();
            ServerMetricsReport report = source.stageFinished();
            long allocated = prometheusQueryAllocated() - before;
            System.out.printf("%s: the query allocated %,d bytes%n", url, allocated);
            return new Outcome(report, allocated, warnings);
        }
    }

    @Test
    void aPrometheusWhoseAnswerNeverEndsCostsOneTimeout() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.Stalled())) {
            long start = System.nanoTime();
            Outcome outcome = queryOneWindow(server.url(), Duration.ofMillis(800));
            long millis = (System.nanoTime() - start) / 1_000_000;

            // One timeout, not one per query: the targets query timed out, nothing more was asked.
            assertThat(millis).isBetween(700L, 4_000L);
            assertThat(outcome.report().coverage().succeeded()).isZero();
            assertThat(outcome.report().coverage().errors())
                    .singleElement()
                    .asString()
                    .startsWith("prometheus: Prometheus at http://127.0.0.1:")
                    .contains("did not answer /api/v1/targets within 800 ms");
            assertThat(outcome.warnings()).singleElement().asString().contains("within 800 ms");
            assertThat(server.nextExchange(10).clientHungUp()).isTrue();
            assertThat(server.requests()).isOne();
        }
    }

    @Test
    void aPrometheusAnswerThatNeverEndsIsCutAtTheBound() throws Exception {
        try (HostileMetricsServer server =
                new HostileMetricsServer(new HostileMetricsServer.Endless())) {
            long start = System.nanoTime();
            Outcome outcome = queryOneWindow(server.url(), Duration.ofSeconds(20));
            long millis = (System.nanoTime() - start) / 1_000_000;

            assertThat(millis).isLessThan(10_000L);
            assertThat(outcome.report().coverage().succeeded()).isZero();
            // the scrape interval query is optional (its failure only costs the fallback step),
            // the metric names are not: both answers were cut at the bound
            assertThat(outcome.report().coverage().errors())
                    .singleElement()
                    .asString()
                    .contains("answered /api/v1/label/__name__/values with HTTP 200")
                    .endsWith("body that was refused: body exceeds " + BOUND + " bytes");
            long sent = 0;
            for (int i = 0; i < 2; i++) {
                Exchange exchange = server.nextExchange(30);
                assertThat(exchange.clientHungUp()).isTrue();
                sent += exchange.bodyBytesSent();
            }
            assertThat(server.requests()).isEqualTo(2);
            System.out.printf("server sent %,d body bytes in 2 answers%n", sent);
            assertThat(outcome.allocated()).isLessThan(allocationLimit(2, sent));
        }
    }

    @Test
    void theBoundFlagTakesSizesAndNamesItselfWhenWrong() {
        assertThat(ServerMetricsFlags.byteSize("8MiB")).isEqualTo(8L * 1024 * 1024);
        assertThat(ServerMetricsFlags.byteSize("512Ki")).isEqualTo(512L * 1024);
        assertThat(ServerMetricsFlags.byteSize("1000")).isEqualTo(1000L);
        ServerMetricsFlags flags = new ServerMetricsFlags();
        flags.scrapeUrl = ServerMetricsFlags.DEFAULT_URL;
        flags.maxBodyBytes = "8 megs";
        assertThat(flags.validate("http://127.0.0.1:1"))
                .singleElement()
                .asString()
                .startsWith("--metrics-max-bytes: '8 megs' is not a size");
        flags.maxBodyBytes = "2GiB";
        assertThat(flags.validate("http://127.0.0.1:1"))
                .singleElement()
                .asString()
                .contains("between 1 byte and 1GiB");
    }

    @Test
    void theBoundsApplyToPrometheusQueriesToo() {
        ServerMetricsFlags flags = new ServerMetricsFlags();
        flags.prometheusUrl = "http://127.0.0.1:9090";
        flags.scrapeTimeout = "2s";
        flags.maxBodyBytes = "1MiB";
        assertThat(flags.validate("http://127.0.0.1:1")).isEmpty();
        flags.scrapeTimeout = "soon";
        assertThat(flags.validate("http://127.0.0.1:1"))
                .singleElement()
                .asString()
                .startsWith("--scrape-timeout: 'soon' is not a duration");
        flags.scrapeTimeout = null;
        flags.scrapeInterval = "1s";
        assertThat(flags.validate("http://127.0.0.1:1"))
                .singleElement()
                .asString()
                .isEqualTo(
                        "--scrape-interval applies to --scrape-metrics, not to --prometheus-url"
                                + " (Prometheus scrapes the server itself)");
    }
}
