package io.inferencebench.operator;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.MetricsSpec;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowStatistics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Scrapes the target's Prometheus endpoint while a run is running: every ready endpoint of the
 * target Service (or the target URL) at {@code spec.metrics.interval}, plus on demand at each stage
 * end. Pages are trimmed to the backend's catalog right away, so memory stays small. Samples live
 * in memory: after an operator restart a stage's window has only the scrapes taken since.
 */
public class ServerMetricsScraper implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(ServerMetricsScraper.class);

    private final KubernetesClient client;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final ScheduledExecutorService scheduler =
            Executors.newScheduledThreadPool(
                    1,
                    r -> {
                        Thread thread = new Thread(r, "server-metrics-scraper");
                        thread.setDaemon(true);
                        return thread;
                    });
    private final Map<String, Tracked> runs = new ConcurrentHashMap<>();

    private record Tracked(
            String uid,
            ServerMetricCatalog catalog,
            List<Scrape> scrapes,
            ScheduledFuture<?> task) {}

    public ServerMetricsScraper(KubernetesClient client) {
        this.client = client;
    }

    /** The catalog a run's metrics spec selects. */
    static ServerMetricCatalog catalog(BenchmarkRun run) {
        MetricsSpec metrics = run.getSpec().getMetrics();
        return ServerMetricCatalog.forBackend(run.getSpec().getTarget().getBackend().wireName())
                .adjust(
                        metrics.getInclude() == null ? List.of() : metrics.getInclude(),
                        metrics.getExclude() == null ? List.of() : metrics.getExclude());
    }

    /**
     * Starts periodic scraping of a running run (no-op when already tracked or disabled).
     *
     * @param run the run
     */
    public void track(BenchmarkRun run) {
        if (Boolean.FALSE.equals(run.getSpec().getMetrics().getEnabled())) {
            return;
        }
        String key = key(run);
        Tracked existing = runs.get(key);
        if (existing != null && existing.uid().equals(run.getMetadata().getUid())) {
            return;
        }
        if (existing != null) {
            existing.task().cancel(false);
        }
        long intervalMillis =
                Math.max(200, Durations.parse(run.getSpec().getMetrics().getInterval()).toMillis());
        List<Scrape> scrapes = new CopyOnWriteArrayList<>();
        ServerMetricCatalog catalog = catalog(run);
        BenchmarkRun snapshot = run;
        ScheduledFuture<?> task =
                scheduler.scheduleAtFixedRate(
                        () -> scrapeInto(snapshot, catalog, scrapes),
                        0,
                        intervalMillis,
                        TimeUnit.MILLISECONDS);
        runs.put(key, new Tracked(run.getMetadata().getUid(), catalog, scrapes, task));
    }

    /**
     * Stops scraping a run and forgets its samples.
     *
     * @param run the run
     */
    public void forget(BenchmarkRun run) {
        Tracked tracked = runs.remove(key(run));
        if (tracked != null) {
            tracked.task().cancel(false);
        }
    }

    /**
     * The server-metric report of one stage window, after one more scrape at its end.
     *
     * @param run the run
     * @param startMillis window start, epoch ms
     * @param endMillis window end, epoch ms
     * @return the report, or {@code null} when scraping is disabled or was not running
     */
    public ServerMetricsReport report(BenchmarkRun run, long startMillis, long endMillis) {
        Tracked tracked = runs.get(key(run));
        if (tracked == null) {
            return null;
        }
        scrapeInto(run, tracked.catalog(), tracked.scrapes());
        long end = Math.max(endMillis, System.currentTimeMillis());
        long intervalMillis =
                Math.max(200, Durations.parse(run.getSpec().getMetrics().getInterval()).toMillis());
        int expected = (int) Math.max(1, (end - startMillis) / intervalMillis + 1);
        ServerMetricsReport report =
                WindowStatistics.compute(
                        tracked.catalog(),
                        List.copyOf(tracked.scrapes()),
                        startMillis,
                        end,
                        expected);
        // Samples before this window are no longer needed.
        tracked.scrapes().removeIf(s -> s.timestampMillis() < startMillis);
        return report;
    }

    private void scrapeInto(BenchmarkRun run, ServerMetricCatalog catalog, List<Scrape> scrapes) {
        try {
            for (Map.Entry<String, URI> target : endpoints(run).entrySet()) {
                scrapes.add(scrape(target.getKey(), target.getValue(), catalog));
            }
        } catch (RuntimeException e) {
            LOG.debugf(e, "scrape of %s failed", key(run));
        }
    }

    private Scrape scrape(String replica, URI uri, ServerMetricCatalog catalog) {
        long now = System.currentTimeMillis();
        try {
            HttpResponse<byte[]> response =
                    http.send(
                            HttpRequest.newBuilder(uri)
                                    .timeout(Duration.ofSeconds(3))
                                    .header("Accept", PrometheusTextParser.ACCEPT_HEADER)
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofByteArray());
            if (response.statusCode() != 200) {
                return Scrape.failure(replica, now, "HTTP " + response.statusCode());
            }
            ParsedPage page =
                    PrometheusTextParser.parse(
                            response.body(),
                            response.headers().firstValue("Content-Type").orElse(null));
            return Scrape.success(replica, now, catalog.trim(page));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Scrape.failure(replica, now, "interrupted");
        } catch (Exception e) {
            return Scrape.failure(replica, now, e.getClass().getSimpleName());
        }
    }

    /** Replica name to metrics URL of every ready endpoint (or the target URL). */
    Map<String, URI> endpoints(BenchmarkRun run) {
        TargetSpec target = run.getSpec().getTarget();
        MetricsSpec metrics = run.getSpec().getMetrics();
        Map<String, URI> endpoints = new java.util.TreeMap<>();
        if (target.getUrl() != null) {
            URI base = URI.create(target.getUrl());
            int port = metrics.getPort() != null ? metrics.getPort() : base.getPort();
            endpoints.put(
                    base.getHost(),
                    URI.create(
                            base.getScheme()
                                    + "://"
                                    + base.getHost()
                                    + (port > 0 ? ":" + port : "")
                                    + metrics.getPath()));
            return endpoints;
        }
        int port = metrics.getPort() != null ? metrics.getPort() : target.getService().getPort();
        String scheme = target.getService().getScheme();
        List<EndpointSlice> slices =
                client.discovery()
                        .v1()
                        .endpointSlices()
                        .inNamespace(run.getMetadata().getNamespace())
                        .withLabel("kubernetes.io/service-name", target.getService().getName())
                        .list()
                        .getItems();
        for (EndpointSlice slice : slices) {
            for (Endpoint endpoint :
                    slice.getEndpoints() == null
                            ? new ArrayList<Endpoint>()
                            : slice.getEndpoints()) {
                if (endpoint.getConditions() != null
                        && Boolean.FALSE.equals(endpoint.getConditions().getReady())) {
                    continue;
                }
                if (endpoint.getAddresses() == null || endpoint.getAddresses().isEmpty()) {
                    continue;
                }
                String address = endpoint.getAddresses().getFirst();
                String replica =
                        endpoint.getTargetRef() != null && endpoint.getTargetRef().getName() != null
                                ? endpoint.getTargetRef().getName()
                                : address;
                String host = address.contains(":") ? "[" + address + "]" : address;
                endpoints.put(
                        replica,
                        URI.create(scheme + "://" + host + ":" + port + metrics.getPath()));
            }
        }
        return endpoints;
    }

    private static String key(BenchmarkRun run) {
        return run.getMetadata().getNamespace() + "/" + run.getMetadata().getName();
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
