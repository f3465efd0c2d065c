package io.inferencebench.profile.server;

import io.inferencebench.profile.prom.MetricType;

/**
 * Statistics of one server metric over one stage window, for one replica or aggregated over all.
 *
 * <p>Absent statistics are {@code null} and omitted from the profile (histograms have no SD;
 * counters have only a rate and an increase; a histogram quantile Prometheus would return NaN for).
 *
 * @param name metric (family) name as the server exposes it, e.g. {@code vllm:kv_cache_usage_perc}
 * @param type the metric type
 * @param mean gauge mean over the window's samples; histogram {@code Δsum/Δcount}; counter rate
 *     (per second)
 * @param median gauge median, histogram 0.5-quantile
 * @param sd gauge population SD
 * @param min gauge minimum; histogram lower bound of the lowest non-empty bucket
 * @param max gauge maximum; histogram upper bound of the highest non-empty finite bucket
 * @param p90 gauge p90, histogram 0.9-quantile
 * @param p99 gauge p99, histogram 0.99-quantile
 * @param increase counter increase (reset-corrected) or histogram observation count in the window
 * @param rate counter increase per second over the window
 * @param samples number of samples (scrape rounds) the statistics are based on
 * @param nanSamples gauge samples the server reported as NaN: left out of the statistics (there is
 *     no number to average) but counted, so a metric the server only ever reported as NaN still
 *     appears, with this count and no statistics
 */
public record ServerMetricSummary(
        String name,
        MetricType type,
        Double mean,
        Double median,
        Double sd,
        Double min,
        Double max,
        Double p90,
        Double p99,
        Double increase,
        Double rate,
        int samples,
        int nanSamples) {

    /**
     * A summary without NaN samples.
     *
     * @param name metric (family) name
     * @param type the metric type
     * @param mean mean or rate
     * @param median median
     * @param sd population SD
     * @param min minimum
     * @param max maximum
     * @param p90 p90
     * @param p99 p99
     * @param increase increase or observation count
     * @param rate rate per second
     * @param samples samples the statistics are based on
     */
    public ServerMetricSummary(
            String name,
            MetricType type,
            Double mean,
            Double median,
            Double sd,
            Double min,
            Double max,
            Double p90,
            Double p99,
            Double increase,
            Double rate,
            int samples) {
        this(name, type, mean, median, sd, min, max, p90, p99, increase, rate, samples, 0);
    }

    /** A metric that is there but had only NaN samples: no number to summarise. */
    static ServerMetricSummary onlyNaN(String name, MetricType type, int nanSamples) {
        return new ServerMetricSummary(
                name, type, null, null, null, null, null, null, null, null, null, 0, nanSamples);
    }

    /**
     * A counter's summary: its rate is both the mean and the rate.
     *
     * @param rate increase per second, or {@code null} when the window has no length
     * @param increase the increase over the window
     * @param samples scrapes the increase is based on
     */
    public static ServerMetricSummary counter(
            String name, Double rate, double increase, int samples) {
        return new ServerMetricSummary(
                name,
                MetricType.COUNTER,
                rate,
                null,
                null,
                null,
                null,
                null,
                null,
                increase,
                rate,
                samples);
    }

    /**
     * A Prometheus summary's summary: mean (sum over count), its quantiles as the server reported
     * them, and the count of observations.
     */
    static ServerMetricSummary summary(
            String name,
            Double mean,
            Double median,
            Double p90,
            Double p99,
            double count,
            int samples) {
        return new ServerMetricSummary(
                name,
                MetricType.SUMMARY,
                mean,
                median,
                null,
                null,
                null,
                p90,
                p99,
                count,
                null,
                samples);
    }
}
