package io.inferencebench.runner.metrics;

import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.prometheus.PrometheusApiSource;
import io.inferencebench.profile.server.prometheus.PrometheusSourceConfig;
import java.util.function.Consumer;

/**
 * Asks a Prometheus server for each stage window once the stage has ended, for servers that
 * Prometheus already scrapes. Nothing runs during the stage. Every answer is bounded in size and
 * time like a scrape ({@link PrometheusApiSource}), and an interrupt aborts the query at once.
 */
public final class PrometheusWindowSource implements ServerMetricsSource {

    private final PrometheusSourceConfig config;
    private final PrometheusApiSource source;
    private final ServerMetricCatalog catalog;
    private final Consumer<String> warn;
    private boolean warned;
    private volatile boolean cancelled;
    private long windowStartMillis = -1;

    /**
     * Creates the source.
     *
     * @param config Prometheus URL, selector, token and the timeout of each query
     * @param maxBodyBytes most bytes accepted in one answer (after gzip decompression)
     * @param catalog which metrics to read and summarise
     * @param warn receives the one warning when a window could not be read
     */
    public PrometheusWindowSource(
            PrometheusSourceConfig config,
            long maxBodyBytes,
            ServerMetricCatalog catalog,
            Consumer<String> warn) {
        this.config = config;
        this.warn = warn;
        this.source = new PrometheusApiSource(config, maxBodyBytes);
        this.catalog = catalog;
    }

    @Override
    public String describe() {
        return "querying Prometheus at "
                + PrometheusApiSource.redact(config.url())
                + " for "
                + source.selector();
    }

    @Override
    public void stageStarting() {
        windowStartMillis = System.currentTimeMillis();
    }

    @Override
    public ServerMetricsReport stageFinished() {
        if (windowStartMillis < 0) {
            throw new IllegalStateException("stageFinished() without stageStarting()");
        }
        long end = System.currentTimeMillis();
        long start = windowStartMillis;
        windowStartMillis = -1;
        ServerMetricsReport report = source.report(catalog, start, end);
        ScrapeCoverage c = report.coverage();
        if (cancelled) {
            warn.accept(
                    "server metrics: interrupted while querying Prometheus at "
                            + PrometheusApiSource.redact(config.url())
                            + " for the stage window; the stage's profile is written without"
                            + " server metrics (its server_metrics_coverage says so)");
        } else if (!warned && (c == null || c.succeeded() == 0)) {
            warned = true;
            String why =
                    c == null || c.errors().isEmpty() ? "no matching series" : c.errors().get(0);
            warn.accept(
                    "warning: server metrics: Prometheus gave nothing for the stage window ("
                            + why
                            + "); the run goes on and the profile's server_metrics_coverage"
                            + " records it");
        }
        return report;
    }

    @Override
    public void cancel() {
        cancelled = true;
        source.cancel();
    }

    @Override
    public void close() {
        source.close();
    }
}
