package io.inferencebench.profile.server.prometheus;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.prom.MetricFamily;
import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.prom.Sample;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowStatistics;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Prometheus server scrapes the project's model-server simulator every second while a
 * bounded load runs; the window statistics computed from Prometheus' HTTP API must agree with those
 * from scraping the simulator directly over the same window.
 */
class PrometheusSourceIT {

    private static final int TTFT_MS = 30;
    private static final int ITL_MS = 5;
    private static final int REQUESTS = 200;
    private static final int CONCURRENCY = 8;
    private static final int MAX_TOKENS = 16;

    /** Idle time around the load so that both sources see the same counter values at the edges. */
    private static final long IDLE_MARGIN_MS = 3_000;

    private static final String TTFT = "vllm:time_to_first_token_seconds";

    private final HttpClient http =
            HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5))
                    .build();

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void prometheusSourceAgreesWithDirectScraping(@TempDir Path tmp) throws Exception {
        Path repo = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
        Path prometheus = provisionPrometheus(repo);
        Path sim = provisionModelSim(repo);

        int simPort = freePort();
        int promPort = freePort();
        Process simProcess = null;
        Process promProcess = null;
        ScheduledExecutorService scraper = Executors.newSingleThreadScheduledExecutor();
        Path simLog = tmp.resolve("model-sim.log");
        Path promLog = tmp.resolve("prometheus.log");
        try {
            simProcess =
                    new ProcessBuilder(
                                    sim.toString(),
                                    "--model",
                                    "sim",
                                    "--host",
                                    "127.0.0.1",
                                    "--port",
                                    String.valueOf(simPort),
                                    "--time-to-first-token",
                                    String.valueOf(TTFT_MS),
                                    "--inter-token-latency",
                                    String.valueOf(ITL_MS),
                                    "--max-num-seqs",
                                    "100",
                                    "--force-dummy-tokenizer")
                            .redirectErrorStream(true)
                            .redirectOutput(simLog.toFile())
                            .start();
            String simBase = "http://127.0.0.1:" + simPort;
            awaitOk(simBase + "/metrics", Duration.ofSeconds(30), simProcess, simLog);

            Path config = tmp.resolve("prometheus.yml");
            Files.writeString(
                    config,
                    """
                    global:
                      scrape_interval: 1s
                      scrape_timeout: 1s
                      evaluation_interval: 1s
                    scrape_configs:
                      - job_name: model-sim
                        static_configs:
                          - targets: ['127.0.0.1:%d']
                            labels:
                              namespace: bench
                    """
                            .formatted(simPort));
            promProcess =
                    new ProcessBuilder(
                                    prometheus.toString(),
                                    "--config.file=" + config,
                                    "--storage.tsdb.path=" + tmp.resolve("data"),
                                    "--web.listen-address=127.0.0.1:" + promPort,
                                    "--log.level=warn")
                            .redirectErrorStream(true)
                            .redirectOutput(promLog.toFile())
                            .start();
            String promBase = "http://127.0.0.1:" + promPort;
            awaitOk(promBase + "/-/ready", Duration.ofSeconds(60), promProcess, promLog);
            awaitTargetUp(promBase, Duration.ofSeconds(30), promLog);

            // two requests create the labelled series before the window, then Prometheus catches up
            runLoad(simBase, 2, 2);
            Thread.sleep(IDLE_MARGIN_MS);

            String replica = "127.0.0.1:" + simPort;
            List<Scrape> direct = Collections.synchronizedList(new ArrayList<>());
            long start = System.currentTimeMillis();
            direct.add(scrape(simBase, replica));
            scraper.scheduleAtFixedRate(
                    () -> {
                        try {
                            direct.add(scrape(simBase, replica));
                        } catch (Exception e) {
                            direct.add(
                                    Scrape.failure(
                                            replica, System.currentTimeMillis(), e.toString()));
                        }
                    },
                    1000,
                    1000,
                    TimeUnit.MILLISECONDS);
            long loadStart = System.nanoTime();
            int ok = runLoad(simBase, REQUESTS, CONCURRENCY);
            long loadMillis = (System.nanoTime() - loadStart) / 1_000_000;
            assertThat(ok).as("streamed requests completed").isEqualTo(REQUESTS);
            Thread.sleep(IDLE_MARGIN_MS);
            scraper.shutdown();
            assertThat(scraper.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
            long end = System.currentTimeMillis();
            direct.add(scrape(simBase, replica));
            // the last Prometheus scrape at or before `end` must be stored before we ask for it
            Thread.sleep(2_000);

            ServerMetricCatalog catalog = ServerMetricCatalog.forBackend("llm-d-inference-sim");
            ServerMetricsReport directReport =
                    WindowStatistics.compute(catalog, new ArrayList<>(direct), start, end, 0);
            PrometheusSourceConfig cfg =
                    PrometheusSourceConfig.of(
                            URI.create(promBase), "{job=\"model-sim\",namespace=\"bench\"}");
            PrometheusApiSource.Window window;
            ServerMetricsReport promReport;
            try (PrometheusApiSource source = new PrometheusApiSource(cfg)) {
                window = source.fetch(catalog, start, end);
                promReport = source.report(catalog, start, end);
            }

            printComparison(start, end, loadMillis, window, directReport, promReport);

            // the step came from the target's 1 s scrape interval, shortened so that the window
            // splits into whole steps: ceil(span / 1000) of them
            long intervals = (end - start + 999) / 1000;
            assertThat(window.stepMillis()).isEqualTo((end - start) / intervals);
            assertThat(window.scrapes()).hasSize((int) intervals + 1);
            assertThat(window.replicas()).containsExactly(replica);
            assertThat(window.warnings()).isEmpty();
            assertThat(promReport.coverage().failed()).isZero();
            assertThat(promReport.coverage().succeeded())
                    .isEqualTo(window.expectedScrapes())
                    .isGreaterThanOrEqualTo((int) ((end - start) / 1000));
            assertThat(promReport.perReplica()).containsOnlyKeys(replica);

            // counters: idle edges, so both sources see exactly the same increase
            for (String counter :
                    List.of(
                            "vllm:request_success_total",
                            "vllm:generation_tokens_total",
                            "vllm:prompt_tokens_total")) {
                assertThat(summary(promReport, counter).increase())
                        .as(counter)
                        .isEqualTo(summary(directReport, counter).increase());
            }
            assertThat(summary(directReport, "vllm:request_success_total").increase())
                    .isEqualTo((double) REQUESTS);
            assertThat(summary(directReport, "vllm:generation_tokens_total").increase())
                    .isEqualTo((double) REQUESTS * MAX_TOKENS);

            // histograms: same observations; mean and quantiles agree (same bucket deltas)
            int histograms = 0;
            for (ServerMetricSummary d : directReport.aggregate()) {
                if (d.type() != io.inferencebench.profile.prom.MetricType.HISTOGRAM) {
                    continue;
                }
                histograms++;
                ServerMetricSummary p = summary(promReport, d.name());
                assertThat(p.increase()).as(d.name() + " count").isEqualTo(d.increase());
                if (d.mean() != null) {
                    assertThat(p.mean())
                            .as(d.name() + " mean")
                            .isCloseTo(
                                    d.mean(),
                                    org.assertj.core.data.Percentage.withPercentage(1e-6));
                    assertThat(p.median()).as(d.name() + " median").isEqualTo(d.median());
                    assertThat(p.p99()).as(d.name() + " p99").isEqualTo(d.p99());
                }
            }
            assertThat(histograms).isGreaterThanOrEqualTo(5);

            // TTFT mean within one bucket of the configured 30 ms, from both sources
            double[] bucket = bucketAround(direct, TTFT_MS / 1000.0);
            double width = bucket[1] - bucket[0];
            for (ServerMetricsReport r : List.of(directReport, promReport)) {
                ServerMetricSummary ttft = summary(r, TTFT);
                assertThat(ttft.increase()).isEqualTo((double) REQUESTS);
                assertThat(ttft.mean())
                        .isCloseTo(TTFT_MS / 1000.0, org.assertj.core.data.Offset.offset(width));
            }

            // gauges are sampled at different instants: compare their range, not their values
            for (ServerMetricsReport r : List.of(directReport, promReport)) {
                ServerMetricSummary running = summary(r, "vllm:num_requests_running");
                assertThat(running.min()).isZero();
                assertThat(running.max()).isBetween(1.0, (double) CONCURRENCY);
            }

            // a selector matching nothing: no scrapes and a warning, not an exception
            try (PrometheusApiSource none =
                    new PrometheusApiSource(
                            PrometheusSourceConfig.of(URI.create(promBase), "{job=\"absent\"}")
                                    .withStep(Duration.ofSeconds(1)))) {
                PrometheusApiSource.Window empty = none.fetch(catalog, start, end);
                assertThat(empty.scrapes()).isEmpty();
                assertThat(empty.warnings()).anyMatch(w -> w.contains("no series match"));
            }
            // a regular expression Java accepts but Prometheus (RE2) rejects: its error, verbatim
            try (PrometheusApiSource bad =
                    new PrometheusApiSource(
                            PrometheusSourceConfig.of(URI.create(promBase), "{job=~\"(?=m).*\"}")
                                    .withStep(Duration.ofSeconds(1)))) {
                ServerMetricsReport failed = bad.report(catalog, start, end);
                assertThat(failed.aggregate()).isEmpty();
                assertThat(failed.coverage().errors())
                        .singleElement()
                        .asString()
                        .contains("HTTP 400", "bad_data");
                System.out.println(
                        "Real Prometheus error as reported: " + failed.coverage().errors());
            }
        } finally {
            scraper.shutdownNow();
            stop(promProcess);
            stop(simProcess);
        }
    }

    private static void printComparison(
            long start,
            long end,
            long loadMillis,
            PrometheusApiSource.Window window,
            ServerMetricsReport direct,
            ServerMetricsReport prom) {
        StringBuilder b = new StringBuilder();
        b.append(
                String.format(
                        Locale.ROOT,
                        "%nPrometheus-source comparison: window %d ms (load %d ms, %d streaming"
                                + " requests, concurrency %d), Prometheus step %d ms, %d points;"
                                + " direct scrapes %d%n",
                        end - start,
                        loadMillis,
                        REQUESTS,
                        CONCURRENCY,
                        window.stepMillis(),
                        window.scrapes().size(),
                        direct.coverage().succeeded()));
        b.append(
                String.format(
                        Locale.ROOT,
                        "| %-46s | %-9s | %-26s | %-26s |%n",
                        "metric",
                        "type",
                        "direct (mean / median / p99 / increase)",
                        "prometheus (same)"));
        for (ServerMetricSummary d : direct.aggregate()) {
            ServerMetricSummary p =
                    prom.aggregate().stream()
                            .filter(s -> s.name().equals(d.name()))
                            .findFirst()
                            .orElse(null);
            b.append(
                    String.format(
                            Locale.ROOT,
                            "| %-46s | %-9s | %-26s | %-26s |%n",
                            d.name(),
                            d.type().textName(),
                            brief(d),
                            p == null ? "missing" : brief(p)));
        }
        System.out.println(b);
    }

    private static String brief(ServerMetricSummary s) {
        return String.format(
                Locale.ROOT,
                "%s / %s / %s / %s",
                num(s.mean()),
                num(s.median()),
                num(s.p99()),
                num(s.increase()));
    }

    private static String num(Double d) {
        return d == null ? "-" : String.format(Locale.ROOT, "%.6g", d);
    }

    private static ServerMetricSummary summary(ServerMetricsReport r, String name) {
        return r.aggregate().stream()
                .filter(s -> s.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError(name + " missing; have " + r.aggregate()));
    }

    /** Bounds (lower, upper] of the TTFT bucket that contains the value, from a direct page. */
    private static double[] bucketAround(List<Scrape> scrapes, double value) {
        TreeSet<Double> bounds = new TreeSet<>();
        for (Scrape s : scrapes) {
            if (s.succeeded()) {
                MetricFamily f = s.page().family(TTFT);
                if (f != null) {
                    for (Sample sample : f.samples()) {
                        String le = sample.label("le");
                        if (le != null && !le.contains("Inf")) {
                            bounds.add(Double.parseDouble(le));
                        }
                    }
                }
            }
        }
        Double upper = bounds.ceiling(value);
        Double lower = bounds.lower(value);
        assertThat(upper).as("a TTFT bucket bound above %s", value).isNotNull();
        return new double[] {lower == null ? 0.0 : lower, upper};
    }

    private Scrape scrape(String base, String replica) throws IOException, InterruptedException {
        long t = System.currentTimeMillis();
        HttpResponse<byte[]> r =
                http.send(
                        HttpRequest.newBuilder(URI.create(base + "/metrics"))
                                .header("Accept", PrometheusTextParser.ACCEPT_HEADER)
                                .timeout(Duration.ofSeconds(2))
                                .build(),
                        HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() != 200) {
            return Scrape.failure(replica, t, "HTTP " + r.statusCode());
        }
        ParsedPage page =
                PrometheusTextParser.parse(
                        r.body(), r.headers().firstValue("Content-Type").orElse(null));
        return Scrape.success(replica, t, page);
    }

    /** Sends {@code count} streaming completions with at most {@code concurrency} in flight. */
    private int runLoad(String base, int count, int concurrency) throws Exception {
        String body =
                "{\"model\":\"sim\",\"prompt\":\"the quick brown fox jumps over the lazy dog\","
                        + "\"max_tokens\":"
                        + MAX_TOKENS
                        + ",\"stream\":true,\"ignore_eos\":true}";
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger next = new AtomicInteger();
        try (ExecutorService pool = Executors.newFixedThreadPool(concurrency)) {
            List<Future<?>> workers = new ArrayList<>();
            for (int w = 0; w < concurrency; w++) {
                workers.add(
                        pool.submit(
                                () -> {
                                    while (next.getAndIncrement() < count) {
                                        HttpResponse<String> r =
                                                http.send(
                                                        HttpRequest.newBuilder(
                                                                        URI.create(
                                                                                base
                                                                                        + "/v1/completions"))
                                                                .header(
                                                                        "Content-Type",
                                                                        "application/json")
                                                                .timeout(Duration.ofSeconds(30))
                                                                .POST(
                                                                        HttpRequest.BodyPublishers
                                                                                .ofString(body))
                                                                .build(),
                                                        HttpResponse.BodyHandlers.ofString());
                                        if (r.statusCode() == 200 && r.body().contains("[DONE]")) {
                                            ok.incrementAndGet();
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : workers) {
                f.get(120, TimeUnit.SECONDS);
            }
        }
        return ok.get();
    }

    private void awaitOk(String url, Duration timeout, Process process, Path log) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError(
                        "process for "
                                + url
                                + " exited with "
                                + process.exitValue()
                                + ":\n"
                                + tail(log));
            }
            try {
                HttpResponse<Void> r =
                        http.send(
                                HttpRequest.newBuilder(URI.create(url))
                                        .timeout(Duration.ofSeconds(2))
                                        .build(),
                                HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new AssertionError(url + " not ready within " + timeout + ":\n" + tail(log));
    }

    private void awaitTargetUp(String promBase, Duration timeout, Path log) throws Exception {
        String query =
                promBase
                        + "/api/v1/query?query="
                        + java.net.URLEncoder.encode(
                                "up{job=\"model-sim\"} == 1", StandardCharsets.UTF_8);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r =
                    http.send(
                            HttpRequest.newBuilder(URI.create(query)).build(),
                            HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200 && r.body().contains("\"model-sim\"")) {
                return;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("Prometheus never scraped the simulator:\n" + tail(log));
    }

    private static Path provisionPrometheus(Path repo) throws Exception {
        Path script = repo.resolve("e2e/scripts/provision-prometheus.sh");
        String[] result = runScript(script);
        Assumptions.assumeTrue(
                result[0].equals("0") && !result[1].isBlank(),
                () ->
                        "skipped: a Prometheus server cannot be installed here ("
                                + script
                                + " failed: "
                                + result[2]
                                + ")");
        return Path.of(result[1].strip());
    }

    private static Path provisionModelSim(Path repo) throws Exception {
        String env = System.getenv("IB_MODEL_SIM");
        if (env != null && Files.isExecutable(Path.of(env))) {
            return Path.of(env);
        }
        Path script = repo.resolve("e2e/scripts/provision-model-sim.sh");
        String[] result = runScript(script);
        assertThat(result[0]).as("%s failed: %s", script, result[2]).isEqualTo("0");
        return Path.of(result[1].strip());
    }

    /** Runs a script; returns exit code, stdout, and the tail of stderr. */
    private static String[] runScript(Path script) throws Exception {
        Process p =
                new ProcessBuilder("bash", script.toString())
                        .redirectError(ProcessBuilder.Redirect.PIPE)
                        .start();
        try {
            Future<byte[]> err =
                    Executors.newVirtualThreadPerTaskExecutor()
                            .submit(() -> p.getErrorStream().readAllBytes());
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(15, TimeUnit.MINUTES)) {
                return new String[] {"timeout", "", "did not finish in 15 minutes"};
            }
            String stderr = new String(err.get(), StandardCharsets.UTF_8);
            String tail =
                    stderr.length() > 2000 ? stderr.substring(stderr.length() - 2000) : stderr;
            return new String[] {String.valueOf(p.exitValue()), out, tail};
        } finally {
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }
    }

    private static String tail(Path log) {
        try {
            String s = Files.readString(log);
            return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static void stop(Process p) throws InterruptedException {
        if (p == null) {
            return;
        }
        p.descendants().forEach(ProcessHandle::destroy);
        p.destroy();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
