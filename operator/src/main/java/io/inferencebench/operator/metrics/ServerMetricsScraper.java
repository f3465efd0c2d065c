package io.inferencebench.operator.metrics;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.MetricsSpec;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowStatistics;
import io.inferencebench.profile.server.prometheus.PrometheusApiSource;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.ConfigProvider;
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

    /** Configuration property: most decompressed bytes accepted from one metrics page. */
    static final String MAX_BODY_BYTES_PROPERTY = "inferencebench.metrics.max-body-bytes";

    /** Configuration property: time allowed for one scrape, request start to the body's end. */
    static final String SCRAPE_TIMEOUT_PROPERTY = "inferencebench.metrics.scrape-timeout";

    static final Duration DEFAULT_SCRAPE_TIMEOUT = Duration.ofSeconds(3);

    private final KubernetesClient client;
    private final ScrapeBodyReader bodyReader;
    private final ServerMetricsCheckpoint checkpoint;
    private final PrometheusStageSource prometheus;
    // HTTP/1.1: metrics endpoints speak it, and the default HTTP/2 client first tries an h2c
    // upgrade on every plain-http request.
    private final HttpClient http =
            HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
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
    private final Map<String, Tracked> runs = new ConcurrentHashMap<>();
    private final Map<String, PrometheusEnd> prometheusEnds = new ConcurrentHashMap<>();

    /**
     * When a stage's window read from Prometheus ends: one step (Prometheus' newest sample is up to
     * that old) plus a margin after the operator saw the stage finish.
     */
    private record PrometheusEnd(String uid, int stage, long windowEndMillis) {}

    private static final class Tracked {
        final String uid;
        final BenchmarkRun run;
        final ServerMetricCatalog catalog;
        final List<Scrape> scrapes;

        /** When each scrape round of the current window started (or the barrier it stands for). */
        final List<Long> rounds = new CopyOnWriteArrayList<>();

        /**
         * When this process received each successful page, by replica and stamp, where that is
         * later than the stamp (a periodic round is stamped when it starts; its page can come
         * seconds later when the endpoint lookup waits on a slow API server). Not checkpointed:
         * after a restart a reloaded scrape's stamp stands for its answer.
         */
        final Map<StampedReplica, Long> answeredAfterStamp = new ConcurrentHashMap<>();

        volatile ScheduledFuture<?> task;
        volatile long windowStartMillis = Long.MIN_VALUE;
        volatile long lastSaveMillis;
        volatile boolean dirty;

        Tracked(BenchmarkRun run, ServerMetricCatalog catalog, List<Scrape> scrapes) {
            this.uid = run.getMetadata().getUid();
            this.run = run;
            this.catalog = catalog;
            this.scrapes = scrapes;
        }
    }

    /** A replica's scrape by its stamp. */
    record StampedReplica(String replica, long stampMillis) {}

    public ServerMetricsScraper(KubernetesClient client) {
        this(client, bodyReaderFromConfig());
    }

    /**
     * @param bodyReader bounds every scraped page's size and time (the operator serves every run
     *     from one process, so one hostile endpoint must cost a failed scrape, not the heap)
     */
    ServerMetricsScraper(KubernetesClient client, ScrapeBodyReader bodyReader) {
        this(client, bodyReader, new ServerMetricsCheckpoint(client));
    }

    ServerMetricsScraper(
            KubernetesClient client,
            ScrapeBodyReader bodyReader,
            ServerMetricsCheckpoint checkpoint) {
        this.client = client;
        this.endpoints = new MetricsEndpoints(client);
        this.bodyReader = bodyReader;
        this.checkpoint = checkpoint;
        this.prometheus = new PrometheusStageSource(client, bodyReader.maxBytes());
    }

    static ScrapeBodyReader bodyReaderFromConfig() {
        var config = ConfigProvider.getConfig();
        return new ScrapeBodyReader(
                config.getOptionalValue(MAX_BODY_BYTES_PROPERTY, Long.class)
                        .orElse(ScrapeBodyReader.DEFAULT_MAX_BYTES),
                config.getOptionalValue(SCRAPE_TIMEOUT_PROPERTY, String.class)
                        .map(Durations::parse)
                        .orElse(DEFAULT_SCRAPE_TIMEOUT));
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
        Tracked existing = runs.get(key);
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
        Tracked tracked = new Tracked(run, catalog(run), scrapes);
        tracked.lastSaveMillis = System.currentTimeMillis();
        runs.put(key, tracked);
        tracked.task =
                scheduler.scheduleAtFixedRate(
                        () -> {
                            // an exception escaping here would cancel the periodic task for good
                            try {
                                scrapeInto(tracked, null);
                                tracked.dirty = true;
                                saveIfDue(tracked);
                            } catch (RuntimeException e) {
                                LOG.warnf(e, "%s: server-metrics round failed", key);
                            }
                        },
                        0,
                        intervalMillis(run),
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
        Tracked tracked = runs.get(key(run));
        if (tracked == null || tracked.windowStartMillis == startMillis) {
            return;
        }
        tracked.windowStartMillis = startMillis;
        long now = System.currentTimeMillis();
        if (startMillis <= now) {
            dropBefore(tracked, startMillis);
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
                        dropBefore(tracked, startMillis);
                        scrapeInto(tracked, startMillis);
                        tracked.dirty = true;
                    } catch (RuntimeException e) {
                        LOG.warnf(e, "%s: barrier scrape failed", key(run));
                    }
                },
                lead,
                TimeUnit.MILLISECONDS);
    }

    private static void dropBefore(Tracked tracked, long startMillis) {
        tracked.rounds.removeIf(t -> t < startMillis);
        tracked.answeredAfterStamp.keySet().removeIf(k -> k.stampMillis() < startMillis);
        if (tracked.scrapes.removeIf(s -> s.timestampMillis() < startMillis)) {
            tracked.dirty = true;
        }
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
        Tracked tracked = runs.remove(key(run));
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
        Tracked tracked = runs.get(key(run));
        if (tracked == null) {
            return null;
        }
        long end;
        List<Scrape> scrapes;
        List<Long> rounds;
        Map<StampedReplica, Long> answered;
        synchronized (tracked) {
            scrapeInto(tracked, null);
            end = Math.max(endMillis, System.currentTimeMillis());
            scrapes = List.copyOf(tracked.scrapes);
            rounds = List.copyOf(tracked.rounds);
            answered = Map.copyOf(tracked.answeredAfterStamp);
        }
        // Every replica seen in the window (a replica lost later counts) is expected in every
        // round of it: those attempted (the periodic ones, the start barrier's and the end's) plus
        // those missed. After an operator restart the rounds before it are unknown; the reloaded
        // scrapes' instants stand in for them, and the time without an operator is a gap of
        // missed rounds.
        List<Scrape> inWindow =
                scrapes.stream()
                        .filter(
                                s ->
                                        s.timestampMillis() >= startMillis
                                                && s.timestampMillis() <= end)
                        .toList();
        long replicas = inWindow.stream().map(Scrape::replica).distinct().count();
        TreeSet<Long> instants = new TreeSet<>();
        rounds.stream().filter(t -> t >= startMillis && t <= end).forEach(instants::add);
        // only reloaded scrapes precede this process's rounds; later ones belong to a round
        long firstRound = rounds.stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
        scrapes.stream()
                .map(Scrape::timestampMillis)
                .filter(t -> t >= startMillis && t <= end && t < firstRound)
                .forEach(instants::add);
        long expectedRounds =
                instants.size() + missedRounds(instants, startMillis, end, intervalMillis(run));
        int expected =
                (int)
                        Math.min(
                                Integer.MAX_VALUE,
                                Math.max(1, expectedRounds * Math.max(1, replicas)));
        // Never fewer than were taken: a barrier scrape answered after the barrier keeps its own
        // time, apart from its round's instant.
        expected = (int) Math.min(Integer.MAX_VALUE, Math.max(expected, inWindow.size()));
        ServerMetricsReport report =
                WindowStatistics.compute(tracked.catalog, scrapes, startMillis, end, expected);
        // No round near the window start (an operator restarted before the window's beginning
        // was checkpointed): the first scrapes came after the servers had already served part of
        // the stage, so every increase would be too small by an unknown amount.
        if (startUnobserved(instants, startMillis, intervalMillis(run))) {
            report =
                    report.withoutWindowDeltas(
                            report.perReplica().keySet(),
                            "counter and histogram increases left out: no scrape within 1.5"
                                    + " intervals of the stage start (the operator restarted"
                                    + " before the window's start was saved)");
        } else {
            Map<String, Long> late =
                    lateStarts(
                            inWindow,
                            answered,
                            startMillis,
                            firstRequestMillis,
                            intervalMillis(run));
            if (!late.isEmpty()) {
                report =
                        report.withoutWindowDeltas(
                                late.keySet(), lateStartReason(late, firstRequestMillis));
            }
        }
        // Samples before this window are no longer needed; the window itself is kept until the
        // next one starts, so a retried reconcile of this stage computes the same report.
        dropBefore(tracked, startMillis);
        return report;
    }

    /**
     * Replicas whose first page in the window came too late to be the window's baseline, with how
     * late it came. A counter or histogram delta starts at the window's first page of a replica; it
     * is exact only if the server produced that page before it counted anything of the stage.
     * Nothing of the stage exists before its first request is sent, so when that instant is known
     * (the runner parts record their first dispatch) a first page answered after it (or after the
     * barrier, when the parts say the first request went out earlier) is late: the requests the
     * server finished in between would be missing from every increase while the coverage still says
     * 1. A barrier scrape answered before the barrier is never late. When the first request's
     * instant is unknown, a page answered more than one scrape interval after the barrier is late.
     *
     * @param inWindow the window's scrapes
     * @param answeredAfterStamp when pages stamped earlier than their answer were answered
     * @param startMillis the window start (barrier)
     * @param firstRequestMillis the stage's first request, epoch ms, or {@code null}
     * @param intervalMillis the scrape interval
     * @return replica to milliseconds its first page came after the allowed instant
     */
    static Map<String, Long> lateStarts(
            List<Scrape> inWindow,
            Map<StampedReplica, Long> answeredAfterStamp,
            long startMillis,
            Long firstRequestMillis,
            long intervalMillis) {
        // the baseline is the replica's earliest page by stamp; its answer decides
        Map<String, Long> firstStamp = new java.util.TreeMap<>();
        for (Scrape s : inWindow) {
            if (s.succeeded() && s.timestampMillis() >= startMillis) {
                firstStamp.merge(s.replica(), s.timestampMillis(), Math::min);
            }
        }
        long allowed =
                firstRequestMillis != null
                        ? Math.max(startMillis, firstRequestMillis)
                        : startMillis + intervalMillis;
        Map<String, Long> late = new java.util.TreeMap<>();
        firstStamp.forEach(
                (replica, stamp) -> {
                    long answered =
                            answeredAfterStamp.getOrDefault(
                                    new StampedReplica(replica, stamp), stamp);
                    if (answered > allowed) {
                        late.put(replica, answered - allowed);
                    }
                });
        return late;
    }

    private static String lateStartReason(Map<String, Long> late, Long firstRequestMillis) {
        String which =
                late.entrySet().stream()
                        .map(e -> e.getKey() + " " + e.getValue() + " ms")
                        .collect(java.util.stream.Collectors.joining(", "));
        return "counter and histogram increases of "
                + String.join(", ", late.keySet())
                + " left out: the window's first page came after "
                + (firstRequestMillis != null
                        ? "the stage's first request"
                        : "the stage start plus one scrape interval")
                + " ("
                + which
                + " later), so the server may have served part of the stage before it";
    }

    /**
     * Whether no round came within an interval and a half of the window start.
     *
     * @param instants the rounds' instants in the window, ascending
     * @param startMillis the window start
     * @param intervalMillis the scrape interval
     * @return {@code true} when the window's beginning was not observed
     */
    static boolean startUnobserved(
            SortedSet<Long> instants, long startMillis, long intervalMillis) {
        return instants.isEmpty() || 2 * (instants.first() - startMillis) > 3 * intervalMillis;
    }

    /**
     * Rounds missed in a window: each gap between consecutive rounds (and from the window start to
     * the first, and from the last to the end) that is more than one and a half intervals long
     * stands for the rounds that should have fallen in it. A tick a busy scheduler ran a little
     * late, even across the window end, is not a missed round: the window still holds a scrape at
     * least every interval and a half.
     *
     * @param instants the rounds' instants in the window, ascending
     * @param startMillis the window start
     * @param endMillis the window end
     * @param intervalMillis the scrape interval
     * @return rounds missed, {@code >= 0}
     */
    static long missedRounds(
            SortedSet<Long> instants, long startMillis, long endMillis, long intervalMillis) {
        long missed = 0;
        long previous = startMillis;
        for (long instant : instants) {
            missed += missedIn(instant - previous, intervalMillis);
            previous = instant;
        }
        return missed + missedIn(endMillis - previous, intervalMillis);
    }

    private static long missedIn(long gapMillis, long intervalMillis) {
        // round(gap / interval) - 1, in integers: a gap of 1.5 intervals or more misses a round
        return Math.max(0, (2 * gapMillis + intervalMillis) / (2 * intervalMillis) - 1);
    }

    private void saveIfDue(Tracked tracked) {
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

    private static long intervalMillis(BenchmarkRun run) {
        return Math.max(200, Durations.parse(run.getSpec().getMetrics().getInterval()).toMillis());
    }

    /**
     * Scrapes every endpoint once: one round.
     *
     * @param stampMillis timestamp to record instead of the scrape's own when the scrape started
     *     before it, or {@code null}
     */
    private void scrapeInto(Tracked tracked, Long stampMillis) {
        // One round at a time per run, each stamped when it starts: a round and all its scrapes
        // fall on the same side of a window edge, so the rounds counted as expected and the
        // scrapes found in the window always agree.
        synchronized (tracked) {
            scrapeRound(tracked, stampMillis);
        }
    }

    private void scrapeRound(Tracked tracked, Long stampMillis) {
        BenchmarkRun run = tracked.run;
        long roundStart = System.currentTimeMillis();
        tracked.rounds.add(
                stampMillis != null && roundStart < stampMillis ? stampMillis : roundStart);
        try {
            for (Map.Entry<String, MetricsEndpoints.MetricsEndpoint> target :
                    endpoints.resolve(run).entrySet()) {
                MetricsEndpoints.MetricsEndpoint endpoint = target.getValue();
                Scrape scrape =
                        endpoint.problem() != null
                                ? Scrape.failure(
                                        target.getKey(),
                                        System.currentTimeMillis(),
                                        endpoint.problem())
                                : scrape(target.getKey(), endpoint.uri(), tracked.catalog);
                // Only a scrape answered before the barrier may stand for the barrier; a busy
                // scheduler or a slow answer makes it late, and then it keeps the time its answer
                // came (the page shows the server at some moment before that). Other scrapes
                // carry their round's start (later replicas of a round differ by the few ms the
                // earlier ones took).
                long answered = System.currentTimeMillis();
                long stamp =
                        stampMillis == null
                                ? roundStart
                                : answered <= stampMillis
                                        ? stampMillis
                                        : Math.max(answered, scrape.timestampMillis());
                if (stampMillis != null && answered > stampMillis) {
                    LOG.infof(
                            "%s: barrier scrape of %s answered %d ms after the barrier; the"
                                    + " window starts at its answer",
                            key(run), target.getKey(), answered - stampMillis);
                }
                if (stamp != scrape.timestampMillis()) {
                    scrape = new Scrape(scrape.replica(), stamp, scrape.page(), scrape.error());
                }
                if (scrape.succeeded() && answered > stamp) {
                    tracked.answeredAfterStamp.put(
                            new StampedReplica(scrape.replica(), stamp), answered);
                }
                tracked.scrapes.add(scrape);
            }
        } catch (RuntimeException e) {
            LOG.debugf(e, "scrape of %s failed", key(run));
        }
    }

    Scrape scrape(String replica, URI uri, ServerMetricCatalog catalog) {
        long now = System.currentTimeMillis();
        long startNanos = System.nanoTime();
        try {
            HttpResponse<InputStream> response =
                    http.send(
                            HttpRequest.newBuilder(uri)
                                    .timeout(bodyReader.timeout())
                                    .header("Accept", PrometheusTextParser.ACCEPT_HEADER)
                                    .header("Accept-Encoding", "gzip")
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofInputStream());
            if (response.statusCode() != 200) {
                response.body().close();
                return Scrape.failure(replica, now, "HTTP " + response.statusCode());
            }
            byte[] body =
                    bodyReader.read(
                            response.body(),
                            response.headers().firstValue("Content-Encoding").orElse(null),
                            startNanos);
            ParsedPage page =
                    PrometheusTextParser.parse(
                            body, response.headers().firstValue("Content-Type").orElse(null));
            return Scrape.success(replica, now, catalog.trim(page));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Scrape.failure(replica, now, "interrupted");
        } catch (ScrapeBodyReader.BodyRefused e) {
            return Scrape.failure(replica, now, e.getMessage());
        } catch (HttpTimeoutException e) {
            return Scrape.failure(replica, now, bodyReader.timedOutReason());
        } catch (Exception e) {
            return Scrape.failure(replica, now, e.getClass().getSimpleName());
        }
    }

    private static String key(BenchmarkRun run) {
        return run.getMetadata().getNamespace() + "/" + run.getMetadata().getName();
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
