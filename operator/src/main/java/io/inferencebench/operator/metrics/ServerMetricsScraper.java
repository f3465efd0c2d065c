package io.inferencebench.operator.metrics;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.MetricsSpec;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.prometheus.PrometheusApiSource;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Server metrics of a run's stage windows. Direct scraping: every ready endpoint of the target
 * Service (or the target URL) at {@code spec.metrics.interval}, plus once at each stage's start
 * barrier and once more at its end; {@code spec.metrics.port} may name a port of the Service (as
 * its EndpointSlices list them) or, failing that, a container port of the endpoint's pod; pages are
 * trimmed to the backend's catalog right away, so memory stays small, and the current stage
 * window's scrapes are checkpointed in a ConfigMap ({@link ServerMetricsCheckpoint}) so an operator
 * restart keeps them. With {@code spec.metrics.prometheus} nothing is scraped: each stage window is
 * read from that Prometheus server when the stage ends ({@link PrometheusStageSource}).
 *
 * <p>This class schedules the rounds and saves the checkpoints; each page is fetched by {@link
 * ScrapeClient}, and each run's rounds and its window's report are its {@link ScrapeRounds}.
 */
public class ServerMetricsScraper implements StageWindows, AutoCloseable {

    private static final Logger LOG = Logger.getLogger(ServerMetricsScraper.class);

    /**
     * Least time between two checkpoint writes of one run. Each write replaces the whole ConfigMap,
     * which grows through the stage, and etcd keeps every version until its next compaction (5
     * minutes by default). Measured (ServerMetricsCheckpointTest): two vLLM replicas at the default
     * 5 s interval make a 100 KiB checkpoint after 10 minutes, and saving every round sends 6 MiB
     * in 121 writes over those 10 minutes, about 10 KiB/s per run. So a round is saved right after
     * it is scraped, but never more often than every 5 s: faster intervals are batched, and a
     * restart loses at most the last 5 s of scrapes, next to the ones it misses while no operator
     * runs anyway.
     */
    static final long MIN_SAVE_GAP_MILLIS = 5_000;

    /**
     * How long before a start barrier its scrape is taken. A loopback scrape takes a few ms; from
     * an operator pod on a busy node (endpoint lookup, a cold HTTP client, CPU shared with the
     * runner pods) it took over 150 ms, and a page the server produced after the barrier leaves the
     * first requests of the stage out of its window. Nothing is sent between the runners' readiness
     * (or the previous stage's end) and a barrier, which {@code RunningStep.BARRIER_LEAD} (2 s)
     * plus the cool-down places ahead, so a longer lead is as exact.
     */
    static final long BARRIER_SCRAPE_LEAD_MILLIS = 2_000;

    /**
     * Time allowed, beyond one step, for the first Prometheus scrape at or after a stage end to be
     * taken and stored before the window is queried.
     */
    static final long PROMETHEUS_END_MARGIN_MILLIS = 500;

    private final ScheduledExecutorService scheduler =
            // two threads: a barrier scrape must not wait behind another run's slow round
            Executors.newScheduledThreadPool(
                    2,
                    r -> {
                        Thread thread = new Thread(r, "server-metrics-scraper");
                        thread.setDaemon(true);
                        return thread;
                    });
    private final MetricsEndpoints endpoints;
    private final ScrapeClient scrapeClient;
    private final ServerMetricsCheckpoint checkpoint;
    private final PrometheusStageSource prometheus;
    private final Map<String, ScrapeRounds> runs = new ConcurrentHashMap<>();
    private final Map<String, PrometheusEnd> prometheusEnds = new ConcurrentHashMap<>();

    /**
     * When a stage's window read from Prometheus ends: one step (Prometheus' newest sample is up to
     * that old) plus a margin after the operator saw the stage finish.
     */
    private record PrometheusEnd(String uid, int stage, long windowEndMillis) {}

    public ServerMetricsScraper(KubernetesClient client) {
        this(client, ScrapeClient.bodyReaderFromConfig(), new ServerMetricsCheckpoint(client));
    }

    /**
     * @param bodyReader bounds every scraped page's size and time, and every Prometheus answer's
     *     size
     */
    ServerMetricsScraper(
            KubernetesClient client,
            ScrapeBodyReader bodyReader,
            ServerMetricsCheckpoint checkpoint) {
        this.endpoints = new MetricsEndpoints(client);
        this.scrapeClient = new ScrapeClient(bodyReader);
        this.checkpoint = checkpoint;
        this.prometheus = new PrometheusStageSource(client, bodyReader.maxBytes());
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
     * Starts periodic scraping of a running run, first reloading the scrapes checkpointed before an
     * operator restart (no-op when already tracked, disabled, or reading from Prometheus).
     *
     * @param run the run
     */
    @Override
    public void track(BenchmarkRun run) {
        MetricsSpec metrics = run.getSpec().getMetrics();
        if (Boolean.FALSE.equals(metrics.getEnabled()) || metrics.getPrometheus() != null) {
            return;
        }
        String key = key(run);
        ScrapeRounds existing = runs.get(key);
        if (existing != null && existing.uid.equals(run.getMetadata().getUid())) {
            return;
        }
        if (existing != null) {
            existing.task.cancel(false);
        }
        List<Scrape> scrapes = new CopyOnWriteArrayList<>();
        checkpoint.load(run).ifPresent(scrapes::addAll);
        if (!scrapes.isEmpty()) {
            LOG.infof(
                    "%s: %d server-metric scrape(s) reloaded from ConfigMap %s",
                    key, scrapes.size(), ResourceNames.serverMetrics(run.getMetadata().getName()));
        }
        ScrapeRounds tracked = new ScrapeRounds(run, catalog(run), scrapes);
        tracked.lastSaveMillis = System.currentTimeMillis();
        runs.put(key, tracked);
        tracked.task =
                scheduler.scheduleAtFixedRate(
                        () -> {
                            // an exception escaping here would cancel the periodic task for good
                            try {
                                tracked.scrape(endpoints, scrapeClient, null);
                                tracked.dirty = true;
                                saveIfDue(tracked);
                            } catch (RuntimeException e) {
                                LOG.warnf(e, "%s: server-metrics round failed", key);
                            }
                        },
                        0,
                        tracked.intervalMillis,
                        TimeUnit.MILLISECONDS);
    }

    /**
     * Announces a stage's start barrier: one scrape is taken right before it and stamped with the
     * barrier instant, so the window's counters and histograms start exactly there, and the scrapes
     * before the barrier (the previous window, already reported, and the cool-down) are dropped at
     * that moment. Stamping the barrier is exact because no runner sends anything between that
     * scrape and the barrier. When the barrier has already passed (the operator restarted or saw it
     * late) the old scrapes are dropped at once and no barrier scrape is taken. Repeated calls with
     * the same instant do nothing.
     *
     * @param run the run
     * @param startMillis the stage's start barrier, epoch ms
     */
    @Override
    public void windowStarts(BenchmarkRun run, long startMillis) {
        ScrapeRounds tracked = runs.get(key(run));
        if (tracked == null || tracked.windowStartMillis == startMillis) {
            return;
        }
        tracked.windowStartMillis = startMillis;
        long now = System.currentTimeMillis();
        if (startMillis <= now) {
            tracked.dropBefore(startMillis);
            return;
        }
        // less than the lead left: scrape at once (answered before the barrier, it stands for it)
        long lead = Math.max(0, startMillis - BARRIER_SCRAPE_LEAD_MILLIS - now);
        scheduler.schedule(
                () -> {
                    if (runs.get(key(run)) != tracked || tracked.windowStartMillis != startMillis) {
                        return;
                    }
                    try {
                        tracked.dropBefore(startMillis);
                        tracked.scrape(endpoints, scrapeClient, startMillis);
                        tracked.dirty = true;
                    } catch (RuntimeException e) {
                        LOG.warnf(e, "%s: barrier scrape failed", key(run));
                    }
                },
                lead,
                TimeUnit.MILLISECONDS);
    }

    /**
     * Stops scraping a run and forgets its samples, deleting its checkpoint.
     *
     * @param run the run
     * @param finishedJustNow whether the run just became terminal: then the checkpoint is deleted
     *     even if this operator never tracked the run (it may have been written before a restart)
     */
    @Override
    public void forget(BenchmarkRun run, boolean finishedJustNow) {
        ScrapeRounds tracked = runs.remove(key(run));
        prometheusEnds.remove(key(run));
        if (tracked != null) {
            tracked.task.cancel(false);
        }
        if (tracked != null || finishedJustNow) {
            checkpoint.delete(run);
        }
    }

    /**
     * How long until a finished stage's server metrics can be reported. Zero for direct scraping
     * (the end scrape is taken when reporting). From Prometheus, whose newest sample is up to one
     * scrape interval old, the window ends one step ({@link PrometheusApiSource#step}) plus {@link
     * #PROMETHEUS_END_MARGIN_MILLIS} after the first call for the stage, so that its last
     * evaluation point sees the first sample taken at or after the stage end; the caller reconciles
     * again after the returned time instead of waiting. An operator restart in between starts that
     * wait over.
     *
     * @param run the run
     * @param stage the finished stage, 1-based
     * @param nowMillis the stage end as seen now, epoch ms
     * @return the time left, zero when due
     */
    @Override
    public Duration reportDueIn(BenchmarkRun run, int stage, long nowMillis) {
        MetricsSpec metrics = run.getSpec().getMetrics();
        if (Boolean.FALSE.equals(metrics.getEnabled()) || metrics.getPrometheus() == null) {
            return Duration.ZERO;
        }
        String uid = run.getMetadata().getUid();
        PrometheusEnd end = prometheusEnds.get(key(run));
        if (end == null || !end.uid().equals(uid) || end.stage() != stage) {
            // reconciles of one run never overlap, so nobody else decides this end meanwhile
            end =
                    new PrometheusEnd(
                            uid,
                            stage,
                            nowMillis + prometheus.stepMillis(run) + PROMETHEUS_END_MARGIN_MILLIS);
            prometheusEnds.put(key(run), end);
        }
        return Duration.ofMillis(Math.max(0, end.windowEndMillis() - nowMillis));
    }

    /**
     * The server-metric report of one stage window: from Prometheus when {@code
     * spec.metrics.prometheus} is set (ending where {@link #reportDueIn} decided), else from the
     * scrapes taken plus one more at its end.
     *
     * @param run the run
     * @param stage the stage, 1-based
     * @param startMillis window start, epoch ms
     * @param endMillis window end, epoch ms
     * @return the report, or {@code null} when server metrics are disabled or scraping was not
     *     running
     */
    public ServerMetricsReport report(
            BenchmarkRun run, int stage, long startMillis, long endMillis) {
        return report(run, stage, startMillis, endMillis, null);
    }

    /**
     * The server-metric report of one stage window, as {@link #report(BenchmarkRun, int, long,
     * long)}, knowing when the runners sent the stage's first request.
     *
     * @param run the run
     * @param stage the stage, 1-based
     * @param startMillis window start (the stage's barrier), epoch ms
     * @param endMillis window end, epoch ms
     * @param firstRequestMillis when the first request of the stage was sent (the earliest first
     *     dispatch of the runner parts), epoch ms, or {@code null} when unknown
     * @return the report, or {@code null} when server metrics are disabled or scraping was not
     *     running
     */
    @Override
    public ServerMetricsReport report(
            BenchmarkRun run,
            int stage,
            long startMillis,
            long endMillis,
            Long firstRequestMillis) {
        MetricsSpec metrics = run.getSpec().getMetrics();
        if (Boolean.FALSE.equals(metrics.getEnabled())) {
            return null;
        }
        if (metrics.getPrometheus() != null) {
            PrometheusEnd end = prometheusEnds.get(key(run));
            long windowEnd =
                    end != null
                                    && end.uid().equals(run.getMetadata().getUid())
                                    && end.stage() == stage
                            ? end.windowEndMillis()
                            : endMillis;
            return prometheus.report(run, catalog(run), startMillis, windowEnd);
        }
        ScrapeRounds tracked = runs.get(key(run));
        if (tracked == null) {
            return null;
        }
        return tracked.report(endpoints, scrapeClient, startMillis, endMillis, firstRequestMillis);
    }

    private void saveIfDue(ScrapeRounds tracked) {
        long now = System.currentTimeMillis();
        // half a second of slack: rounds at exactly the gap must not wait for the next one
        if (!tracked.dirty || now - tracked.lastSaveMillis + 500 < MIN_SAVE_GAP_MILLIS) {
            return;
        }
        tracked.dirty = false;
        tracked.lastSaveMillis = now;
        if (runs.get(key(tracked.run)) != tracked) {
            return; // forgotten meanwhile: do not recreate its checkpoint
        }
        checkpoint.save(tracked.run, List.copyOf(tracked.scrapes));
        if (runs.get(key(tracked.run)) != tracked) {
            checkpoint.delete(tracked.run); // forgotten while saving
        }
    }

    static String key(BenchmarkRun run) {
        return run.getMetadata().getNamespace() + "/" + run.getMetadata().getName();
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
