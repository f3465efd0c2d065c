package io.inferencebench.operator.metrics;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowRounds;
import io.inferencebench.profile.server.WindowStatistics;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.stream.Collectors;
import org.jboss.logging.Logger;

/**
 * One directly scraped run's current stage window: the scrape rounds taken in it and when, the
 * scrapes they brought, and the window's report from them. One round at a time per run (this
 * object's monitor), each stamped when it starts: a round and all its scrapes fall on the same side
 * of a window edge, so the rounds counted as expected and the scrapes found in the window always
 * agree. {@link ServerMetricsScraper} schedules the rounds and saves the scrapes.
 */
final class ScrapeRounds {

    private static final Logger LOG = Logger.getLogger(ScrapeRounds.class);

    final String uid;
    final BenchmarkRun run;
    final ServerMetricCatalog catalog;
    final long intervalMillis;

    /** The window's scrapes (and, until the barrier, the previous window's and cool-down's). */
    final List<Scrape> scrapes;

    /** When each scrape round of the current window started (or the barrier it stands for). */
    private final List<Long> rounds = new CopyOnWriteArrayList<>();

    /**
     * When this process received each successful page, by replica and stamp, where that is later
     * than the stamp (a periodic round is stamped when it starts; its page can come seconds later
     * when the endpoint lookup waits on a slow API server). Not checkpointed: after a restart a
     * reloaded scrape's stamp stands for its answer.
     */
    private final Map<StampedReplica, Long> answeredAfterStamp = new ConcurrentHashMap<>();

    volatile ScheduledFuture<?> task;
    volatile long windowStartMillis = Long.MIN_VALUE;
    volatile long lastSaveMillis;
    volatile boolean dirty;

    /** A replica's scrape by its stamp. */
    record StampedReplica(String replica, long stampMillis) {}

    /**
     * @param run the run
     * @param catalog the families its pages are trimmed to
     * @param scrapes where the scrapes go, holding those reloaded from a checkpoint
     */
    ScrapeRounds(BenchmarkRun run, ServerMetricCatalog catalog, List<Scrape> scrapes) {
        this.uid = run.getMetadata().getUid();
        this.run = run;
        this.catalog = catalog;
        this.intervalMillis = intervalMillis(run);
        this.scrapes = scrapes;
    }

    private static long intervalMillis(BenchmarkRun run) {
        return Math.max(200, Durations.parse(run.getSpec().getMetrics().getInterval()).toMillis());
    }

    /** Forgets the rounds and scrapes before a window's start. */
    void dropBefore(long startMillis) {
        rounds.removeIf(t -> t < startMillis);
        answeredAfterStamp.keySet().removeIf(k -> k.stampMillis() < startMillis);
        if (scrapes.removeIf(s -> s.timestampMillis() < startMillis)) {
            dirty = true;
        }
    }

    /**
     * Scrapes every endpoint once: one round.
     *
     * @param stampMillis timestamp to record instead of the scrape's own when the scrape started
     *     before it, or {@code null}
     */
    synchronized void scrape(MetricsEndpoints endpoints, ScrapeClient client, Long stampMillis) {
        long roundStart = System.currentTimeMillis();
        rounds.add(stampMillis != null && roundStart < stampMillis ? stampMillis : roundStart);
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
                                : client.scrape(target.getKey(), endpoint.uri(), catalog);
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
                            key(), target.getKey(), answered - stampMillis);
                }
                if (stamp != scrape.timestampMillis()) {
                    scrape = new Scrape(scrape.replica(), stamp, scrape.page(), scrape.error());
                }
                if (scrape.succeeded() && answered > stamp) {
                    answeredAfterStamp.put(new StampedReplica(scrape.replica(), stamp), answered);
                }
                scrapes.add(scrape);
            }
        } catch (RuntimeException e) {
            LOG.debugf(e, "scrape of %s failed", key());
        }
    }

    /**
     * The report of the window from {@code startMillis}, after one more round for its end. The
     * window is kept until the next one starts, so a retried reconcile of the stage computes the
     * same report.
     *
     * @param startMillis window start (the stage's barrier), epoch ms
     * @param endMillis window end, epoch ms
     * @param firstRequestMillis when the first request of the stage was sent, epoch ms, or {@code
     *     null} when unknown
     * @return the report
     */
    ServerMetricsReport report(
            MetricsEndpoints endpoints,
            ScrapeClient client,
            long startMillis,
            long endMillis,
            Long firstRequestMillis) {
        long end;
        List<Scrape> taken;
        List<Long> roundsTaken;
        Map<StampedReplica, Long> answered;
        synchronized (this) {
            scrape(endpoints, client, null);
            end = Math.max(endMillis, System.currentTimeMillis());
            taken = List.copyOf(scrapes);
            roundsTaken = List.copyOf(rounds);
            answered = Map.copyOf(answeredAfterStamp);
        }
        // Every replica seen in the window (a replica lost later counts) is expected in every
        // round of it: those attempted (the periodic ones, the start barrier's and the end's) plus
        // those missed. After an operator restart the rounds before it are unknown; the reloaded
        // scrapes' instants stand in for them, and the time without an operator is a gap of
        // missed rounds.
        List<Scrape> inWindow =
                taken.stream()
                        .filter(
                                s ->
                                        s.timestampMillis() >= startMillis
                                                && s.timestampMillis() <= end)
                        .toList();
        long replicas = inWindow.stream().map(Scrape::replica).distinct().count();
        TreeSet<Long> instants = new TreeSet<>();
        roundsTaken.stream().filter(t -> t >= startMillis && t <= end).forEach(instants::add);
        // only reloaded scrapes precede this process's rounds; later ones belong to a round
        long firstRound =
                roundsTaken.stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
        taken.stream()
                .map(Scrape::timestampMillis)
                .filter(t -> t >= startMillis && t <= end && t < firstRound)
                .forEach(instants::add);
        long expectedRounds =
                instants.size()
                        + WindowRounds.missedRounds(instants, startMillis, end, intervalMillis);
        int expected =
                Math.max(1, WindowRounds.expectedScrapes(expectedRounds, Math.max(1, replicas)));
        // Never fewer than were taken: a barrier scrape answered after the barrier keeps its own
        // time, apart from its round's instant.
        expected = Math.max(expected, inWindow.size());
        ServerMetricsReport report =
                WindowStatistics.compute(catalog, taken, startMillis, end, expected);
        // No round near the window start (an operator restarted before the window's beginning
        // was checkpointed): the first scrapes came after the servers had already served part of
        // the stage, so every increase would be too small by an unknown amount.
        if (WindowRounds.startUnobserved(instants, startMillis, intervalMillis)) {
            report =
                    report.withoutWindowDeltas(
                            report.perReplica().keySet(),
                            "counter and histogram increases left out: no scrape within 1.5"
                                    + " intervals of the stage start (the operator restarted"
                                    + " before the window's start was saved)");
        } else {
            Map<String, Long> late =
                    lateStarts(inWindow, answered, startMillis, firstRequestMillis, intervalMillis);
            if (!late.isEmpty()) {
                report =
                        report.withoutWindowDeltas(
                                late.keySet(), lateStartReason(late, firstRequestMillis));
            }
        }
        // Samples before this window are no longer needed.
        dropBefore(startMillis);
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
        Map<String, Long> firstStamp = new TreeMap<>();
        for (Scrape s : inWindow) {
            if (s.succeeded() && s.timestampMillis() >= startMillis) {
                firstStamp.merge(s.replica(), s.timestampMillis(), Math::min);
            }
        }
        long allowed =
                firstRequestMillis != null
                        ? Math.max(startMillis, firstRequestMillis)
                        : startMillis + intervalMillis;
        Map<String, Long> late = new TreeMap<>();
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
                        .collect(Collectors.joining(", "));
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

    /** The run's namespace/name, for log lines. */
    String key() {
        return ServerMetricsScraper.key(run);
    }
}
