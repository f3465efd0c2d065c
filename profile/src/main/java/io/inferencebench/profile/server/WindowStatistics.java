package io.inferencebench.profile.server;

import io.inferencebench.profile.prom.MetricFamily;
import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.Sample;
import io.inferencebench.profile.stats.NumpyStats;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Server-metric statistics over one stage window, from time-ordered scrapes of every replica.
 *
 * <ul>
 *   <li><b>Gauges:</b> scrapes are grouped into rounds (one scrape per replica each); per round the
 *       replicas' values combine by the metric's {@link Aggregation} (several series of one replica
 *       first combine the same way); mean, median, population SD, min, max, p90 and p99 (numpy
 *       semantics) are taken over the rounds. Per replica: the same over that replica's scrapes.
 *   <li><b>Counters:</b> per series, the increase between consecutive scrapes with reset correction
 *       (a drop means the counter restarted, so the new value is the increase); a series missing
 *       from earlier scrapes of the replica counts from 0 (servers that create labelled series on
 *       first use). Rate = increase / time between the replica's first and last scrape. Replicas
 *       add up.
 *   <li><b>Histograms:</b> bucket, {@code _sum} and {@code _count} deltas between the window's
 *       first and last scrape (accumulated scrape to scrape, with reset correction), summed over
 *       series and replicas; mean = Δsum/Δcount; median/p90/p99 by {@link HistogramQuantile}
 *       (Prometheus' {@code histogram_quantile}); min/max are the bounds of the lowest and highest
 *       non-empty buckets (not true extremes); no SD.
 *   <li><b>Summaries:</b> mean = Δsum/Δcount; median/p90/p99 are the server's own quantiles at the
 *       last scrape (whatever window the server uses), averaged over replicas.
 * </ul>
 *
 * <p>Values a statistic cannot give (NaN) are left {@code null} and omitted from the profile. Gauge
 * samples the server reported as NaN are left out of the statistics and counted ({@link
 * ServerMetricSummary#nanSamples()}); a gauge that was only NaN is kept, with that count.
 */
public final class WindowStatistics {

    /** At most this many distinct scrape errors are kept in the coverage. */
    public static final int MAX_ERRORS = 10;

    private WindowStatistics() {}

    /**
     * Computes the report for one window.
     *
     * @param catalog which metrics to summarise
     * @param scrapes scrapes of all replicas (any order; those outside the window are ignored)
     * @param windowStartMillis window start, epoch ms, inclusive
     * @param windowEndMillis window end, epoch ms, inclusive
     * @param expectedScrapes scrapes the scraper planned in the window, {@code 0} if unknown
     * @return the report (aggregate, per replica, coverage)
     */
    public static ServerMetricsReport compute(
            ServerMetricCatalog catalog,
            List<Scrape> scrapes,
            long windowStartMillis,
            long windowEndMillis,
            int expectedScrapes) {
        List<Scrape> window = new ArrayList<>();
        for (Scrape s : scrapes) {
            if (s.timestampMillis() >= windowStartMillis
                    && s.timestampMillis() <= windowEndMillis) {
                window.add(s);
            }
        }
        window.sort(Comparator.comparingLong(Scrape::timestampMillis));

        int succeeded = 0;
        int failed = 0;
        Set<String> errors = new LinkedHashSet<>();
        Map<String, Integer> succeededByReplica = new TreeMap<>();
        Set<String> replicasSeen = new TreeSet<>();
        Map<String, List<Scrape>> byReplica = new TreeMap<>();
        List<ParsedPage> pages = new ArrayList<>();
        for (Scrape s : window) {
            replicasSeen.add(s.replica());
            if (s.succeeded()) {
                succeeded++;
                succeededByReplica.merge(s.replica(), 1, Integer::sum);
                byReplica.computeIfAbsent(s.replica(), r -> new ArrayList<>()).add(s);
                pages.add(s.page());
            } else {
                failed++;
                if (errors.size() < MAX_ERRORS) {
                    errors.add(s.replica() + ": " + s.error());
                }
            }
        }
        ScrapeCoverage coverage =
                new ScrapeCoverage(
                        expectedScrapes,
                        succeeded,
                        failed,
                        replicasSeen.size(),
                        new ArrayList<>(errors),
                        succeededByReplica);

        List<Map<String, ParsedPage>> rounds = rounds(window);
        List<ServerMetricSummary> aggregate = new ArrayList<>();
        Map<String, List<ServerMetricSummary>> perReplica = new TreeMap<>();
        for (ServerMetricCatalog.ResolvedMetric metric : catalog.resolve(pages)) {
            for (Selection selection : selections(metric, pages)) {
                ServerMetricSummary total;
                Map<String, ServerMetricSummary> replicas = new TreeMap<>();
                switch (metric.type()) {
                    case COUNTER -> total = counter(selection, byReplica, replicas);
                    case HISTOGRAM -> total = histogram(selection, byReplica, replicas);
                    case SUMMARY -> total = summary(selection, byReplica, replicas);
                    default -> total = gauge(selection, rounds, byReplica, replicas);
                }
                if (total != null) {
                    aggregate.add(total);
                }
                replicas.forEach(
                        (replica, summary) ->
                                perReplica
                                        .computeIfAbsent(replica, r -> new ArrayList<>())
                                        .add(summary));
            }
        }
        return new ServerMetricsReport(aggregate, perReplica, coverage);
    }

    /** One summarised signal: a metric, optionally restricted to one value of its split label. */
    private record Selection(
            ServerMetricCatalog.ResolvedMetric metric, String outputName, String splitValue) {

        boolean accepts(Sample s) {
            return splitValue == null || splitValue.equals(s.label(metric.splitLabel()));
        }
    }

    private static List<Selection> selections(
            ServerMetricCatalog.ResolvedMetric metric, List<ParsedPage> pages) {
        if (metric.splitLabel() == null) {
            return List.of(new Selection(metric, metric.name(), null));
        }
        Set<String> values = new TreeSet<>();
        for (ParsedPage page : pages) {
            MetricFamily f = page.family(metric.name());
            if (f != null) {
                for (Sample s : f.samples()) {
                    String v = s.label(metric.splitLabel());
                    if (v != null) {
                        values.add(v);
                    }
                }
            }
        }
        List<Selection> out = new ArrayList<>();
        for (String v : values) {
            out.add(
                    new Selection(
                            metric,
                            metric.name() + "{" + metric.splitLabel() + "=\"" + v + "\"}",
                            v));
        }
        return out;
    }

    /** Groups successful scrapes into rounds: a round closes when a replica shows up again. */
    private static List<Map<String, ParsedPage>> rounds(List<Scrape> window) {
        List<Map<String, ParsedPage>> rounds = new ArrayList<>();
        Map<String, ParsedPage> current = new LinkedHashMap<>();
        for (Scrape s : window) {
            if (!s.succeeded()) {
                continue;
            }
            if (current.containsKey(s.replica())) {
                rounds.add(current);
                current = new LinkedHashMap<>();
            }
            current.put(s.replica(), s.page());
        }
        if (!current.isEmpty()) {
            rounds.add(current);
        }
        return rounds;
    }

    // ---- gauges ----

    /**
     * The page's value of the gauge (its series combined), or null without a number; NaN samples
     * are counted into {@code nans[0]}.
     */
    private static Double gaugeValue(Selection sel, ParsedPage page, int[] nans) {
        MetricFamily f = page.family(sel.metric().name());
        if (f == null) {
            return null;
        }
        double[] values = new double[f.samples().size()];
        int n = 0;
        for (Sample s : f.samples()) {
            if (!sel.accepts(s)) {
                continue;
            }
            if (Double.isNaN(s.value())) {
                nans[0]++;
            } else if (Double.isFinite(s.value())) {
                values[n++] = s.value();
            }
        }
        if (n == 0) {
            return null;
        }
        return combine(values, n, sel.metric().aggregation());
    }

    private static double combine(double[] values, int n, Aggregation aggregation) {
        double sum = NumpyStats.sum(values, 0, n);
        return aggregation == Aggregation.MEAN ? sum / n : sum;
    }

    private static ServerMetricSummary gauge(
            Selection sel,
            List<Map<String, ParsedPage>> rounds,
            Map<String, List<Scrape>> byReplica,
            Map<String, ServerMetricSummary> replicas) {
        double[] roundValues = new double[rounds.size()];
        int n = 0;
        int[] nans = {0};
        for (Map<String, ParsedPage> round : rounds) {
            double[] values = new double[round.size()];
            int k = 0;
            for (ParsedPage page : round.values()) {
                Double v = gaugeValue(sel, page, nans);
                if (v != null) {
                    values[k++] = v;
                }
            }
            if (k > 0) {
                roundValues[n++] = combine(values, k, sel.metric().aggregation());
            }
        }
        byReplica.forEach(
                (replica, scrapes) -> {
                    double[] values = new double[scrapes.size()];
                    int k = 0;
                    int[] replicaNans = {0};
                    for (Scrape s : scrapes) {
                        Double v = gaugeValue(sel, s.page(), replicaNans);
                        if (v != null) {
                            values[k++] = v;
                        }
                    }
                    if (k > 0 || replicaNans[0] > 0) {
                        replicas.put(
                                replica, gaugeStats(sel.outputName(), values, k, replicaNans[0]));
                    }
                });
        return n == 0 && nans[0] == 0
                ? null
                : gaugeStats(sel.outputName(), roundValues, n, nans[0]);
    }

    private static ServerMetricSummary gaugeStats(String name, double[] values, int n, int nans) {
        if (n == 0) {
            // Only NaN: the metric is there, without a number to summarise.
            return ServerMetricSummary.onlyNaN(name, MetricType.GAUGE, nans);
        }
        double[] v = Arrays.copyOf(values, n);
        double[] sorted = v.clone();
        Arrays.sort(sorted);
        return new ServerMetricSummary(
                name,
                MetricType.GAUGE,
                NumpyStats.mean(v),
                NumpyStats.median(sorted),
                NumpyStats.sd(v),
                sorted[0],
                sorted[n - 1],
                NumpyStats.percentile(sorted, 90),
                NumpyStats.percentile(sorted, 99),
                null,
                null,
                n,
                nans);
    }

    // ---- counters ----

    private static Map<String, Double> counterValues(Selection sel, ParsedPage page) {
        MetricFamily f = page.family(sel.metric().name());
        Map<String, Double> values = new HashMap<>();
        if (f == null) {
            return values;
        }
        for (Sample s : f.samples()) {
            if (sel.accepts(s) && !Double.isNaN(s.value())) {
                values.put(seriesKey(s.labels(), null), s.value());
            }
        }
        return values;
    }

    private static ServerMetricSummary counter(
            Selection sel,
            Map<String, List<Scrape>> byReplica,
            Map<String, ServerMetricSummary> replicas) {
        double totalIncrease = 0;
        double totalRate = 0;
        int used = 0;
        boolean any = false;
        for (Map.Entry<String, List<Scrape>> e : byReplica.entrySet()) {
            List<Scrape> scrapes = e.getValue();
            if (scrapes.size() < 2) {
                continue;
            }
            Map<String, Double> previous = null;
            double increase = 0;
            boolean seen = false;
            for (Scrape s : scrapes) {
                Map<String, Double> current = counterValues(sel, s.page());
                seen |= !current.isEmpty();
                if (previous != null) {
                    for (Map.Entry<String, Double> c : current.entrySet()) {
                        Double before = previous.get(c.getKey());
                        double base = before == null ? 0.0 : before;
                        increase += c.getValue() >= base ? c.getValue() - base : c.getValue();
                    }
                    // keep series that vanished from this page so a reappearance is compared right
                    previous.forEach(current::putIfAbsent);
                }
                previous = current;
            }
            if (!seen) {
                continue;
            }
            double seconds =
                    (scrapes.get(scrapes.size() - 1).timestampMillis()
                                    - scrapes.get(0).timestampMillis())
                            / 1000.0;
            Double rate = seconds > 0 ? increase / seconds : null;
            replicas.put(
                    e.getKey(),
                    ServerMetricSummary.counter(sel.outputName(), rate, increase, scrapes.size()));
            any = true;
            totalIncrease += increase;
            totalRate += rate == null ? 0.0 : rate;
            used += scrapes.size();
        }
        if (!any) {
            return null;
        }
        return ServerMetricSummary.counter(sel.outputName(), totalRate, totalIncrease, used);
    }

    // ---- histograms ----

    /** Cumulative bucket counts plus sum and count of one histogram series (or a delta of them). */
    private static final class Buckets {
        final TreeMap<Double, Double> cumulative = new TreeMap<>();
        double sum;
        double count;
        boolean hasCount;

        void add(Buckets other) {
            other.cumulative.forEach((le, c) -> cumulative.merge(le, c, Double::sum));
            sum += other.sum;
            count += other.count;
            hasCount |= other.hasCount;
        }

        /** this - before, or this when the series restarted in between. */
        Buckets minus(Buckets before) {
            boolean reset = hasCount && before.hasCount && count < before.count;
            for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
                Double b = before.cumulative.get(e.getKey());
                if (b != null && e.getValue() < b) {
                    reset = true;
                }
            }
            Buckets d = new Buckets();
            d.hasCount = hasCount;
            if (reset) {
                d.add(this);
                return d;
            }
            cumulative.forEach(
                    (le, c) -> d.cumulative.put(le, c - before.cumulative.getOrDefault(le, 0.0)));
            d.sum = sum - before.sum;
            d.count = count - before.count;
            return d;
        }

        double observations() {
            if (hasCount) {
                return count;
            }
            Double inf = cumulative.get(Double.POSITIVE_INFINITY);
            return inf == null ? 0.0 : inf;
        }
    }

    private static Map<String, Buckets> histogramSeries(Selection sel, ParsedPage page) {
        Map<String, Buckets> series = new HashMap<>();
        MetricFamily f = page.family(sel.metric().name());
        if (f == null) {
            return series;
        }
        String base = f.name();
        for (Sample s : f.samples()) {
            if (!sel.accepts(s) || Double.isNaN(s.value())) {
                continue;
            }
            String suffix = s.name().substring(Math.min(base.length(), s.name().length()));
            switch (suffix) {
                case "_bucket" -> {
                    double le = parseBound(s.label("le"));
                    if (!Double.isNaN(le)) {
                        series.computeIfAbsent(seriesKey(s.labels(), "le"), k -> new Buckets())
                                .cumulative
                                .put(le, s.value());
                    }
                }
                case "_sum" ->
                        series.computeIfAbsent(seriesKey(s.labels(), "le"), k -> new Buckets())
                                        .sum =
                                s.value();
                case "_count" -> {
                    Buckets b =
                            series.computeIfAbsent(seriesKey(s.labels(), "le"), k -> new Buckets());
                    b.count = s.value();
                    b.hasCount = true;
                }
                default -> {
                    // a sample of another shape in the family: not part of the histogram
                }
            }
        }
        return series;
    }

    private static double parseBound(String le) {
        if (le == null) {
            return Double.NaN;
        }
        String t = le.trim();
        if (t.equalsIgnoreCase("+Inf") || t.equalsIgnoreCase("Inf")) {
            return Double.POSITIVE_INFINITY;
        }
        try {
            return Double.parseDouble(t);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    /**
     * Window delta of one replica, summed over its series; {@code null} with fewer than 2 scrapes.
     */
    private static Buckets replicaDelta(Selection sel, List<Scrape> scrapes, boolean[] seen) {
        if (scrapes.size() < 2) {
            return null;
        }
        Buckets total = new Buckets();
        Map<String, Buckets> previous = null;
        for (Scrape s : scrapes) {
            Map<String, Buckets> current = histogramSeries(sel, s.page());
            seen[0] |= !current.isEmpty();
            if (previous != null) {
                for (Map.Entry<String, Buckets> c : current.entrySet()) {
                    Buckets before = previous.getOrDefault(c.getKey(), new Buckets());
                    total.add(c.getValue().minus(before));
                }
                previous.forEach(current::putIfAbsent);
            }
            previous = current;
        }
        return total;
    }

    private static ServerMetricSummary histogram(
            Selection sel,
            Map<String, List<Scrape>> byReplica,
            Map<String, ServerMetricSummary> replicas) {
        Buckets total = new Buckets();
        boolean any = false;
        int used = 0;
        for (Map.Entry<String, List<Scrape>> e : byReplica.entrySet()) {
            boolean[] seen = {false};
            Buckets delta = replicaDelta(sel, e.getValue(), seen);
            if (delta == null || !seen[0]) {
                continue;
            }
            replicas.put(e.getKey(), histogramStats(sel.outputName(), delta, e.getValue().size()));
            total.add(delta);
            any = true;
            used += e.getValue().size();
        }
        return any ? histogramStats(sel.outputName(), total, used) : null;
    }

    private static ServerMetricSummary histogramStats(String name, Buckets delta, int samples) {
        double count = delta.observations();
        double[] bounds = new double[delta.cumulative.size()];
        double[] counts = new double[bounds.length];
        int i = 0;
        for (Map.Entry<Double, Double> e : delta.cumulative.entrySet()) {
            bounds[i] = e.getKey();
            counts[i] = e.getValue();
            i++;
        }
        Double mean = count > 0 ? finiteOrNull(delta.sum / count) : null;
        Double min = null;
        Double max = null;
        double runningMax = 0;
        double previous = 0;
        for (int k = 0; k < bounds.length; k++) {
            runningMax = Math.max(runningMax, counts[k]);
            double inBucket = runningMax - previous;
            previous = runningMax;
            if (inBucket > 0) {
                if (min == null) {
                    min = k == 0 ? (bounds[0] > 0 ? 0.0 : bounds[0]) : bounds[k - 1];
                }
                if (Double.isFinite(bounds[k])) {
                    max = bounds[k];
                } else if (k > 0) {
                    max = bounds[k - 1];
                }
            }
        }
        if (min != null && !Double.isFinite(min)) {
            min = null;
        }
        return new ServerMetricSummary(
                name,
                MetricType.HISTOGRAM,
                mean,
                finiteOrNull(HistogramQuantile.quantile(0.5, bounds, counts)),
                null,
                min,
                max,
                finiteOrNull(HistogramQuantile.quantile(0.9, bounds, counts)),
                finiteOrNull(HistogramQuantile.quantile(0.99, bounds, counts)),
                count,
                null,
                samples);
    }

    // ---- summaries ----

    private static ServerMetricSummary summary(
            Selection sel,
            Map<String, List<Scrape>> byReplica,
            Map<String, ServerMetricSummary> replicas) {
        double sum = 0;
        double count = 0;
        double[][] quantiles = new double[3][byReplica.size()];
        int[] quantileCounts = new int[3];
        boolean any = false;
        int used = 0;
        for (Map.Entry<String, List<Scrape>> e : byReplica.entrySet()) {
            List<Scrape> scrapes = e.getValue();
            boolean[] seen = {false};
            Buckets delta = replicaDelta(sel, scrapes, seen);
            if (delta == null || !seen[0]) {
                continue;
            }
            double[] q = lastQuantiles(sel, scrapes.get(scrapes.size() - 1).page());
            for (int k = 0; k < 3; k++) {
                if (!Double.isNaN(q[k])) {
                    quantiles[k][quantileCounts[k]++] = q[k];
                }
            }
            double c = delta.observations();
            replicas.put(
                    e.getKey(),
                    ServerMetricSummary.summary(
                            sel.outputName(),
                            c > 0 ? finiteOrNull(delta.sum / c) : null,
                            finiteOrNull(q[0]),
                            finiteOrNull(q[1]),
                            finiteOrNull(q[2]),
                            c,
                            scrapes.size()));
            sum += delta.sum;
            count += c;
            any = true;
            used += scrapes.size();
        }
        if (!any) {
            return null;
        }
        Double[] aggregated = new Double[3];
        for (int k = 0; k < 3; k++) {
            aggregated[k] =
                    quantileCounts[k] == 0
                            ? null
                            : finiteOrNull(NumpyStats.mean(quantiles[k], quantileCounts[k]));
        }
        return ServerMetricSummary.summary(
                sel.outputName(),
                count > 0 ? finiteOrNull(sum / count) : null,
                aggregated[0],
                aggregated[1],
                aggregated[2],
                count,
                used);
    }

    private static double[] lastQuantiles(Selection sel, ParsedPage page) {
        double[] out = {Double.NaN, Double.NaN, Double.NaN};
        double[] wanted = {0.5, 0.9, 0.99};
        MetricFamily f = page.family(sel.metric().name());
        if (f == null) {
            return out;
        }
        double[] sums = new double[3];
        int[] counts = new int[3];
        for (Sample s : f.samples()) {
            String q = s.label("quantile");
            if (q == null || !sel.accepts(s) || Double.isNaN(s.value())) {
                continue;
            }
            double qv = parseBound(q);
            for (int k = 0; k < 3; k++) {
                if (qv == wanted[k]) {
                    sums[k] += s.value();
                    counts[k]++;
                }
            }
        }
        for (int k = 0; k < 3; k++) {
            if (counts[k] > 0) {
                out[k] = sums[k] / counts[k];
            }
        }
        return out;
    }

    // ---- helpers ----

    private static String seriesKey(Map<String, String> labels, String without) {
        if (labels.isEmpty()) {
            return "";
        }
        TreeMap<String, String> sorted = new TreeMap<>(labels);
        if (without != null) {
            sorted.remove(without);
        }
        StringBuilder sb = new StringBuilder();
        sorted.forEach((k, v) -> sb.append(k).append('\u0000').append(v).append('\u0001'));
        return sb.toString();
    }

    private static Double finiteOrNull(double v) {
        return Double.isFinite(v) ? v : null;
    }
}
