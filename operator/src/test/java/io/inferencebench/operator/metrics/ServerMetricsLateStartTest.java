package io.inferencebench.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.operator.TestRuns;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.testkit.MetricsPage;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A stage's start barrier scrape answered after the stage's first request (an API server stalled by
 * a paused etcd held the endpoint lookup; seen 897 ms late on the real node): the window's counters
 * then start at that page and miss what the server finished before it, while every round was
 * scraped (coverage 1). Such a window must leave its counter and histogram deltas out and say why;
 * an on-time barrier scrape keeps them exact.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ServerMetricsLateStartTest {

    /** Served requests, as the server's counter shows them when it writes a page. */
    private final AtomicInteger served = new AtomicInteger();

    /** How long the server waits before it writes the next page. */
    private final AtomicLong pageDelayMillis = new AtomicLong();

    private HttpServer server;
    private ServerMetricsScraper scraper;

    @AfterEach
    void stop() {
        if (scraper != null) {
            scraper.close();
        }
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void aBarrierScrapeAnsweredAfterTheFirstRequestLeavesTheIncreasesOutAndSaysWhy()
            throws Exception {
        Window w = stage(2_600);
        assertThat(w.barrierAnsweredLateByMillis)
                .as("the barrier page came after the stage's first request")
                .isPositive();
        assertThat(w.report.coverage().ratio()).isEqualTo(1.0);
        assertThat(names(w.report.aggregate()))
                .as("no increase that misses the requests served before the barrier page")
                .doesNotContain("vllm:request_success_total")
                .contains("vllm:num_requests_running");
        assertThat(w.report.coverage().errors())
                .singleElement()
                .asString()
                .contains("increases of 127.0.0.1 left out")
                .contains("after the stage's first request");
        assertThat(w.report.coverage().increasesLeftOut()).containsExactly("127.0.0.1");
    }

    @Test
    void aBarrierScrapeAnsweredBeforeTheBarrierKeepsTheExactIncrease() throws Exception {
        Window w = stage(0);
        assertThat(w.report.coverage().errors()).isEmpty();
        assertThat(w.report.coverage().increasesLeftOut()).isEmpty();
        assertThat(increase(w.report, "vllm:request_success_total")).isEqualTo(12.0);
    }

    private record Window(ServerMetricsReport report, long barrierAnsweredLateByMillis) {}

    /**
     * One stage: the barrier is announced 2.1 s ahead (its scrape goes out 2 s before it), the
     * server answers that scrape after {@code barrierPageDelayMillis}; runners send the first
     * request 10 ms after the barrier and the server finishes 5 requests 100 ms after it, 7 more
     * later; the stage ends 1.5 s after the barrier page at the latest.
     */
    private Window stage(long barrierPageDelayMillis) throws Exception {
        startServer();
        BenchmarkRun run = run(server.getAddress().getPort());
        scraper =
                new ServerMetricsScraper(
                        null,
                        new ScrapeBodyReader(
                                ScrapeBodyReader.DEFAULT_MAX_BYTES, Duration.ofSeconds(10)),
                        new NoCheckpoint());
        scraper.track(run);
        Thread.sleep(300); // the first periodic round, before the window
        pageDelayMillis.set(barrierPageDelayMillis);
        long barrier = System.currentTimeMillis() + 2_100;
        scraper.windowStarts(run, barrier);
        long firstRequest = barrier + 10;
        sleepUntil(barrier + 100);
        served.addAndGet(5);
        // the barrier page is written now at the latest (delay 2.6 s from barrier - 2 s)
        sleepUntil(barrier + Math.max(0, barrierPageDelayMillis - 2_000) + 300);
        pageDelayMillis.set(0);
        served.addAndGet(7);
        Thread.sleep(300);
        long end = System.currentTimeMillis();
        ServerMetricsReport report = scraper.report(run, 1, barrier, end, firstRequest);
        return new Window(report, barrier - 2_000 + barrierPageDelayMillis - firstRequest);
    }

    private void startServer() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        server.createContext(
                "/metrics",
                exchange -> {
                    long delay = pageDelayMillis.get();
                    if (delay > 0) {
                        try {
                            Thread.sleep(delay);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    MetricsPage.send(
                            exchange,
                            "# TYPE vllm:request_success_total counter\n"
                                    + "vllm:request_success_total{model_name=\"m\"} "
                                    + served.get()
                                    + "\n# TYPE vllm:num_requests_running gauge\n"
                                    + "vllm:num_requests_running{model_name=\"m\"} 1\n");
                });
        server.start();
    }

    /** A URL target (no endpoint lookup) scraped every 10 s: no periodic round in the window. */
    private static BenchmarkRun run(int port) {
        BenchmarkRun run = TestRuns.sweep();
        TargetSpec target = new TargetSpec();
        target.setUrl("http://127.0.0.1:" + port);
        target.setModel("m");
        run.getSpec().setTarget(target);
        run.getSpec().getMetrics().setInterval("10s");
        return run;
    }

    private static List<String> names(List<ServerMetricSummary> summaries) {
        return summaries.stream().map(ServerMetricSummary::name).toList();
    }

    private static Double increase(ServerMetricsReport report, String name) {
        return report.aggregate().stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .map(ServerMetricSummary::increase)
                .orElse(null);
    }

    private static void sleepUntil(long epochMillis) throws InterruptedException {
        long left = epochMillis - System.currentTimeMillis();
        if (left > 0) {
            Thread.sleep(left);
        }
    }

    /** The test has no API server: nothing to reload, save or delete. */
    private static final class NoCheckpoint extends ServerMetricsCheckpoint {
        NoCheckpoint() {
            super(null);
        }

        @Override
        public Optional<List<Scrape>> load(BenchmarkRun run) {
            return Optional.empty();
        }

        @Override
        public int save(BenchmarkRun run, List<Scrape> scrapes) {
            return 0;
        }

        @Override
        public void delete(BenchmarkRun run) {}
    }
}
