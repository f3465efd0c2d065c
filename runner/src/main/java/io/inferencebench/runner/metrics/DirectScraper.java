package io.inferencebench.runner.metrics;

import io.inferencebench.profile.prom.MetricsPageFetch;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowRounds;
import io.inferencebench.profile.server.WindowStatistics;
import io.inferencebench.runner.http.TlsOptions;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Scrapes one server's Prometheus endpoint during each stage window: once when the stage starts,
 * every interval while it runs and once when it ends.
 *
 * <p>Everything (requests, parsing, statistics) runs on one low-priority daemon thread of its own,
 * with the JDK HTTP client's threads created from it (so they inherit its priority), never on the
 * load engine's dispatcher or event loops. Scrapes are serialised on that thread, so a slow server
 * delays the next scrape instead of piling requests up. Only the families the catalog needs are
 * kept between scrapes. A failed scrape is recorded in the coverage and warned about once; it never
 * fails the run.
 */
public final class DirectScraper implements ServerMetricsSource {

    private final List<URI> urls;
    private final ServerMetricCatalog catalog;
    private final Duration interval;
    private final Duration timeout;
    private final ScrapeBodyReader bodyReader;
    private final Consumer<String> warn;
    private final TlsOptions tls;
    private final ScheduledExecutorService scraperThread;
    private final ExecutorService clientThreads;
    private final AtomicBoolean warned = new AtomicBoolean();
    private final List<Scrape> scrapes = new ArrayList<>();
    private HttpClient client;
    private ScheduledFuture<?> periodic;
    private volatile long windowStartMillis;
    // scraper-thread confined: rounds started since the window's start round, that one included
    private int roundsInWindow;

    /**
     * Creates a scraper; nothing is requested until {@link #stageStarting()}.
     *
     * @param urls the replicas' metrics URLs, e.g. {@code http://127.0.0.1:8000/metrics}; each
     *     round scrapes them one after the other
     * @param catalog which metrics to keep and summarise
     * @param interval time between scrapes inside a stage
     * @param timeout limit on each scrape (connect to last byte)
     * @param warn receives the one warning about failing scrapes
     */
    public DirectScraper(
            List<URI> urls,
            ServerMetricCatalog catalog,
            Duration interval,
            Duration timeout,
            Consumer<String> warn) {
        this(urls, catalog, interval, timeout, ScrapeBodyReader.DEFAULT_MAX_BYTES, warn);
    }

    /**
     * Creates a scraper; nothing is requested until {@link #stageStarting()}.
     *
     * @param urls the replicas' metrics URLs; each round scrapes them one after the other
     * @param catalog which metrics to keep and summarise
     * @param interval time between scrapes inside a stage
     * @param timeout limit on each scrape (connect to last byte)
     * @param maxBodyBytes most decompressed bytes accepted from one page; a larger page is a failed
     *     scrape
     * @param warn receives the one warning about failing scrapes
     */
    public DirectScraper(
            List<URI> urls,
            ServerMetricCatalog catalog,
            Duration interval,
            Duration timeout,
            long maxBodyBytes,
            Consumer<String> warn) {
        this(urls, catalog, interval, timeout, maxBodyBytes, TlsOptions.VERIFY, warn);
    }

    /**
     * Creates a scraper; nothing is requested until {@link #stageStarting()}.
     *
     * @param urls the replicas' metrics URLs; each round scrapes them one after the other
     * @param catalog which metrics to keep and summarise
     * @param interval time between scrapes inside a stage
     * @param timeout limit on each scrape (connect to last byte)
     * @param maxBodyBytes most decompressed bytes accepted from one page; a larger page is a failed
     *     scrape
     * @param tls the certificate checks of an https URL: the target's, as for the load
     * @param warn receives the one warning about failing scrapes
     */
    public DirectScraper(
            List<URI> urls,
            ServerMetricCatalog catalog,
            Duration interval,
            Duration timeout,
            long maxBodyBytes,
            TlsOptions tls,
            Consumer<String> warn) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive, got " + interval);
        }
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("at least one metrics URL is needed");
        }
        this.urls = List.copyOf(urls);
        this.catalog = catalog;
        this.interval = interval;
        this.timeout = timeout;
        this.bodyReader = new ScrapeBodyReader(maxBodyBytes, timeout);
        this.warn = warn;
        this.tls = tls;
        this.scraperThread =
                Executors.newSingleThreadScheduledExecutor(lowPriority("server-metrics-scraper"));
        this.clientThreads = Executors.newCachedThreadPool(lowPriority("server-metrics-http"));
    }

    private static ThreadFactory lowPriority(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            t.setPriority(Thread.MIN_PRIORITY);
            return t;
        };
    }

    @Override
    public String describe() {
        return "scraping "
                + String.join(", ", urls.stream().map(URI::toString).toList())
                + " every "
                + interval.toMillis()
                + " ms";
    }

    @Override
    public void stageStarting() {
        try {
            onScraperThread(
                    () -> {
                        scrapes.clear();
                        roundsInWindow = 0;
                        windowStartMillis = scrapeRound()[0];
                        return null;
                    });
        } catch (IllegalStateException e) {
            warn.accept("warning: " + e.getMessage());
            windowStartMillis = System.currentTimeMillis();
        }
        long period = interval.toMillis();
        periodic =
                scraperThread.scheduleAtFixedRate(
                        this::scrapeRound, period, period, TimeUnit.MILLISECONDS);
    }

    @Override
    public ServerMetricsReport stageFinished() {
        if (periodic == null) {
            throw new IllegalStateException("stageFinished() without stageStarting()");
        }
        periodic.cancel(false);
        periodic = null;
        try {
            return onScraperThread(this::finishWindow);
        } catch (IllegalStateException e) {
            // whatever broke the summary, the load's own results still stand
            warn.accept(
                    "warning: " + e.getMessage() + "; this stage's profile has no server metrics");
            return new ServerMetricsReport(
                    List.of(),
                    Map.of(),
                    new ScrapeCoverage(0, 0, 1, 0, List.of(e.getMessage()), Map.of()));
        }
    }

    /** Runs on the scraper thread: the end scrape, then the window's statistics. */
    private ServerMetricsReport finishWindow() {
        long end = Math.max(scrapeRound()[1], windowStartMillis);
        long start = windowStartMillis;
        // Every round the scraper started (start, periodic, end) times the replicas, as the
        // operator counts: coverage reports what the servers did not deliver; a periodic tick
        // that a busy machine delayed past the stage end is not a missing scrape of the server.
        int expected = WindowRounds.expectedScrapes(roundsInWindow, urls.size());
        roundsInWindow = 0;
        List<Scrape> window = List.copyOf(scrapes);
        scrapes.clear();
        return WindowStatistics.compute(catalog, window, start, end, expected);
    }

    private <T> T onScraperThread(java.util.concurrent.Callable<T> task) {
        try {
            return scraperThread.submit(task).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while scraping " + urls, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof VirtualMachineError error) {
                // The JVM failed, not the server: the run ends on it (a scrape failure would not).
                throw error;
            }
            String message = cause.getMessage() == null ? "" : ": " + cause.getMessage();
            throw new IllegalStateException(
                    "server metrics: " + cause.getClass().getSimpleName() + message, cause);
        }
    }

    /**
     * One round: every replica once, in order. Runs on the scraper thread only, never throws.
     *
     * @return timestamps of the round's first and last scrape (the window runs from the start
     *     round's first scrape to the end round's last)
     */
    private long[] scrapeRound() {
        roundsInWindow++;
        long first = -1;
        long last = -1;
        for (URI url : urls) {
            long t = scrapeOnce(url).timestampMillis();
            first = first < 0 ? t : first;
            last = t;
        }
        return new long[] {first, last};
    }

    /** One scrape of one replica; runs on the scraper thread only, never throws. */
    private Scrape scrapeOnce(URI url) {
        String replica = url.getAuthority() == null ? url.toString() : url.getAuthority();
        Scrape scrape;
        try {
            if (client == null) {
                // created here so the client's selector thread inherits this thread's priority
                HttpClient.Builder builder =
                        HttpClient.newBuilder()
                                .version(HttpClient.Version.HTTP_1_1)
                                .connectTimeout(timeout)
                                .followRedirects(HttpClient.Redirect.NORMAL)
                                .executor(clientThreads);
                if (urls.stream().anyMatch(u -> "https".equalsIgnoreCase(u.getScheme()))) {
                    builder.sslContext(tls.jdkContext());
                }
                client = builder.build();
            }
            MetricsPageFetch.Page page = MetricsPageFetch.fetch(client, url, bodyReader);
            scrape = Scrape.success(replica, page.bodyReadMillis(), catalog.trim(page.page()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            scrape = Scrape.failure(replica, System.currentTimeMillis(), "interrupted");
        } catch (IOException | RuntimeException e) {
            scrape = Scrape.failure(replica, System.currentTimeMillis(), describe(e));
        }
        scrapes.add(scrape);
        if (!scrape.succeeded() && warned.compareAndSet(false, true)) {
            warn.accept(
                    "warning: server metrics: scraping "
                            + url
                            + " failed ("
                            + scrape.error()
                            + "); the run goes on and each profile's server_metrics_coverage"
                            + " records the missed scrapes");
        }
        return scrape;
    }

    private String describe(Throwable e) {
        if (TlsOptions.tlsFailure(e) != null) {
            return "tls: " + TlsOptions.describeFailure(e);
        }
        if (e instanceof ScrapeBodyReader.BodyRefused
                || e instanceof MetricsPageFetch.StatusRefused) {
            return e.getMessage();
        }
        if (e instanceof HttpTimeoutException) {
            return bodyReader.timedOutReason();
        }
        if (e instanceof ConnectException) {
            return "connection refused or unreachable";
        }
        String message = e.getMessage();
        return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }

    @Override
    public void close() {
        scraperThread.shutdownNow();
        clientThreads.shutdownNow();
        try {
            scraperThread.awaitTermination(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        HttpClient c = client;
        if (c != null) {
            c.shutdownNow();
        }
    }
}
