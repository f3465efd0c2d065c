package io.inferencebench.runner.metrics;

import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.prometheus.PrometheusApiSource;
import io.inferencebench.profile.server.prometheus.PrometheusSourceConfig;

/**
 * Asks a Prometheus server for each stage window once the stage has ended, for servers that
 * Prometheus already scrapes. Nothing runs during the stage.
 */
public final class PrometheusWindowSource implements ServerMetricsSource {

    private final PrometheusSourceConfig config;
    private final PrometheusApiSource source;
    private final ServerMetricCatalog catalog;
    private long windowStartMillis = -1;

    /**
     * Creates the source.
     *
     * @param config Prometheus URL, selector and token
     * @param catalog which metrics to read and summarise
     */
    public PrometheusWindowSource(PrometheusSourceConfig config, ServerMetricCatalog catalog) {
        this.config = config;
        this.source = new PrometheusApiSource(config);
        this.catalog = catalog;
    }

    @Override
    public String describe() {
        return "querying Prometheus at " + config.url() + " for " + source.selector();
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
        return source.report(catalog, start, end);
    }

    @Override
    public void close() {
        source.close();
    }
}
