package io.inferencebench.profile.server.prometheus;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.profile.prom.MetricFamily;
import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.prom.Sample;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a {@link PrometheusApiSource} makes of Prometheus' answers: which of the names it has the
 * catalog wants, the {@code query_range} matrix as samples by replica and time, those samples as
 * one page per replica and evaluation time (families and types rebuilt from the sample names and
 * the metadata), and the scrape interval and metric types of the targets and metadata answers. Each
 * series is assigned to a replica by the configured label, else {@code pod}, {@code instance} or
 * {@code job}.
 */
final class PrometheusAnswers {

    private static final Pattern DURATION_PART = Pattern.compile("(\\d+)(ms|y|w|d|h|m|s)");

    private final PrometheusSourceConfig config;

    /**
     * @param config the source's configuration: its replica label, and its URL for messages
     */
    PrometheusAnswers(PrometheusSourceConfig config) {
        this.config = config;
    }

    /** The samples and {@code up} values of a window's range answers, by replica and time. */
    static final class Matrix {

        final Map<String, TreeMap<Long, List<Sample>>> samples = new TreeMap<>();
        final Map<String, TreeMap<Long, Double>> up = new TreeMap<>();

        /** Every replica seen, in a sample or in {@code up}. */
        Set<String> replicas() {
            Set<String> replicas = new TreeSet<>(samples.keySet());
            replicas.addAll(up.keySet());
            return replicas;
        }
    }

    /**
     * The window's scrapes: one per replica and evaluation time, in time order; a replica whose
     * {@code up} was 0 at a time gets a failed scrape there.
     *
     * @param matrix the window's range answers
     * @param metadata metric types by family name
     * @return the scrapes
     */
    static List<Scrape> scrapes(Matrix matrix, Map<String, String> metadata) {
        Map<String, SeriesShape> shapes = shapes(matrix.samples, metadata);
        List<Scrape> scrapes = new ArrayList<>();
        for (String replica : matrix.replicas()) {
            TreeMap<Long, List<Sample>> byTime =
                    matrix.samples.getOrDefault(replica, new TreeMap<>());
            TreeMap<Long, Double> upByTime = matrix.up.getOrDefault(replica, new TreeMap<>());
            Set<Long> times = new TreeSet<>(byTime.keySet());
            times.addAll(upByTime.keySet());
            for (long t : times) {
                Double u = upByTime.get(t);
                if (u != null && u == 0.0) {
                    scrapes.add(
                            Scrape.failure(
                                    replica, t, "target down at this time (up=0 in Prometheus)"));
                } else {
                    scrapes.add(
                            Scrape.success(
                                    replica, t, page(byTime.getOrDefault(t, List.of()), shapes)));
                }
            }
        }
        scrapes.sort(java.util.Comparator.comparingLong(Scrape::timestampMillis));
        return scrapes;
    }

    // ---- which names, which types ----

    /** Catalog-wanted sample names among those Prometheus has (histogram parts included). */
    static Set<String> wantedNames(ServerMetricCatalog catalog, Set<String> names) {
        Map<String, MetricFamily> probe = new LinkedHashMap<>();
        for (String n : names) {
            probe.put(n, new MetricFamily(n, MetricType.UNKNOWN, null, null, List.of()));
            String b = histogramBase(n);
            if (b != null) {
                probe.putIfAbsent(
                        b, new MetricFamily(b, MetricType.UNKNOWN, null, null, List.of()));
            }
        }
        Set<String> kept =
                catalog.trim(
                                new ParsedPage(
                                        PrometheusTextParser.Format.TEXT_0_0_4,
                                        probe,
                                        List.of(),
                                        0,
                                        0))
                        .families()
                        .keySet();
        Set<String> wanted = new TreeSet<>();
        for (String n : names) {
            String b = histogramBase(n);
            if (kept.contains(n) || (b != null && kept.contains(b))) {
                wanted.add(n);
            }
        }
        wanted.remove("up");
        return wanted;
    }

    static String histogramBase(String name) {
        for (String suffix : List.of("_bucket", "_sum", "_count")) {
            if (name.endsWith(suffix) && name.length() > suffix.length()) {
                return name.substring(0, name.length() - suffix.length());
            }
        }
        return null;
    }

    /** How one sample name maps onto a family. */
    private record SeriesShape(String family, MetricType type) {}

    private static Map<String, SeriesShape> shapes(
            Map<String, TreeMap<Long, List<Sample>>> samples, Map<String, String> metadata) {
        Set<String> names = new TreeSet<>();
        Set<String> histogramBases = new TreeSet<>();
        Set<String> summaryBases = new TreeSet<>();
        for (TreeMap<Long, List<Sample>> byTime : samples.values()) {
            for (List<Sample> list : byTime.values()) {
                for (Sample s : list) {
                    names.add(s.name());
                    if (s.name().endsWith("_bucket") && s.label("le") != null) {
                        histogramBases.add(histogramBase(s.name()));
                    } else if (s.label("quantile") != null) {
                        summaryBases.add(s.name());
                    }
                }
            }
        }
        for (Map.Entry<String, String> m : metadata.entrySet()) {
            if (m.getValue().equals("summary") && names.contains(m.getKey() + "_count")) {
                summaryBases.add(m.getKey());
            }
        }
        Map<String, SeriesShape> shapes = new LinkedHashMap<>();
        for (String n : names) {
            String b = histogramBase(n);
            if (b != null && histogramBases.contains(b)) {
                shapes.put(n, new SeriesShape(b, MetricType.HISTOGRAM));
            } else if (summaryBases.contains(n)) {
                shapes.put(n, new SeriesShape(n, MetricType.SUMMARY));
            } else if (b != null && !n.endsWith("_bucket") && summaryBases.contains(b)) {
                shapes.put(n, new SeriesShape(b, MetricType.SUMMARY));
            } else {
                shapes.put(n, new SeriesShape(n, typeOf(n, metadata)));
            }
        }
        return shapes;
    }

    private static MetricType typeOf(String name, Map<String, String> metadata) {
        String t = metadata.get(name);
        if (t == null && name.endsWith("_total")) {
            t = metadata.get(name.substring(0, name.length() - "_total".length()));
            if (t == null) {
                return MetricType.COUNTER;
            }
        }
        if (t == null) {
            return MetricType.UNKNOWN;
        }
        return switch (t) {
            case "counter" -> MetricType.COUNTER;
            case "gauge" -> MetricType.GAUGE;
            case "info" -> MetricType.INFO;
            case "stateset" -> MetricType.STATESET;
            default -> MetricType.UNKNOWN;
        };
    }

    private static ParsedPage page(List<Sample> samples, Map<String, SeriesShape> shapes) {
        Map<String, List<Sample>> byFamily = new LinkedHashMap<>();
        Map<String, MetricType> types = new LinkedHashMap<>();
        for (Sample s : samples) {
            SeriesShape shape = shapes.get(s.name());
            byFamily.computeIfAbsent(shape.family(), f -> new ArrayList<>()).add(s);
            types.putIfAbsent(shape.family(), shape.type());
        }
        Map<String, MetricFamily> families = new LinkedHashMap<>();
        byFamily.forEach(
                (f, list) -> families.put(f, new MetricFamily(f, types.get(f), null, null, list)));
        return new ParsedPage(
                PrometheusTextParser.Format.TEXT_0_0_4, families, List.of(), 0, samples.size());
    }

    // ---- decoding ----

    void decodeMatrix(JsonNode data, Matrix into, List<String> warnings)
            throws PrometheusQueryException {
        String type = data.path("resultType").asText("");
        if (!type.equals("matrix")) {
            throw new PrometheusQueryException(
                    "Prometheus at "
                            + PrometheusHttp.redact(config.url())
                            + " answered query_range with resultType '"
                            + type
                            + "' instead of 'matrix'");
        }
        for (JsonNode series : data.path("result")) {
            JsonNode metric = series.path("metric");
            String name = metric.path("__name__").asText("");
            if (name.isEmpty()) {
                PrometheusApiSource.warn(warnings, "a series without __name__ was skipped");
                continue;
            }
            Map<String, String> labels = new TreeMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = metric.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (!e.getKey().equals("__name__")) {
                    labels.put(e.getKey(), e.getValue().asText());
                }
            }
            Map<String, String> ordered =
                    java.util.Collections.unmodifiableMap(new LinkedHashMap<>(labels));
            String replica = replicaOf(labels);
            if (series.has("histograms") && !series.has("values")) {
                PrometheusApiSource.warn(
                        warnings, "native histogram series " + name + " skipped (not supported)");
                continue;
            }
            for (JsonNode point : series.path("values")) {
                if (!point.isArray() || point.size() < 2) {
                    PrometheusApiSource.warn(warnings, "malformed point in " + name + " skipped");
                    continue;
                }
                long t = Math.round(point.get(0).asDouble() * 1000.0);
                double v;
                try {
                    v = parseValue(point.get(1).asText());
                } catch (NumberFormatException e) {
                    PrometheusApiSource.warn(
                            warnings,
                            "unparsable value '"
                                    + point.get(1).asText()
                                    + "' in "
                                    + name
                                    + " skipped");
                    continue;
                }
                if (name.equals("up")) {
                    into.up.computeIfAbsent(replica, r -> new TreeMap<>()).put(t, v);
                } else {
                    into.samples
                            .computeIfAbsent(replica, r -> new TreeMap<>())
                            .computeIfAbsent(t, k -> new ArrayList<>())
                            .add(new Sample(name, ordered, v, t));
                }
            }
        }
    }

    /**
     * Parses a sample value as the Prometheus API writes it (a string, with {@code NaN}, {@code
     * +Inf} and {@code -Inf}).
     *
     * @param text the value string
     * @return the value
     * @throws NumberFormatException when it is not a number
     */
    static double parseValue(String text) {
        return switch (text) {
            case "NaN" -> Double.NaN;
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(text);
        };
    }

    private String replicaOf(Map<String, String> labels) {
        if (config.replicaLabel() != null) {
            String r = labels.get(config.replicaLabel());
            if (r != null) {
                return r;
            }
        }
        for (String l : List.of("pod", "instance", "job")) {
            String r = labels.get(l);
            if (r != null) {
                return r;
            }
        }
        return "prometheus";
    }

    // ---- step ----

    /**
     * The smallest scrape interval among the active targets of a {@code /api/v1/targets} answer
     * that the selector matches.
     *
     * @param data the answer's {@code data}
     * @param selector the source's selector; only the labels a target has are judged
     * @return milliseconds, or {@link Long#MAX_VALUE} when no matching target reports one
     */
    static long smallestScrapeInterval(JsonNode data, PrometheusSelector selector) {
        long best = Long.MAX_VALUE;
        for (JsonNode target : data.path("activeTargets")) {
            Map<String, String> labels = new LinkedHashMap<>();
            target.path("labels")
                    .fields()
                    .forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
            boolean matches = true;
            for (PrometheusSelector.Matcher m : selector.matchers()) {
                // metric-level labels are not target labels: only judge what the target has
                if (labels.containsKey(m.label()) && !m.matches(labels.get(m.label()))) {
                    matches = false;
                }
            }
            long interval = parseDuration(target.path("scrapeInterval").asText(""));
            if (matches && interval > 0) {
                best = Math.min(best, interval);
            }
        }
        return best;
    }

    /**
     * Parses a Prometheus duration such as {@code 15s}, {@code 1m30s} or {@code 500ms}.
     *
     * @param text the duration
     * @return milliseconds, or {@code -1} when it does not parse
     */
    static long parseDuration(String text) {
        if (text == null || text.isEmpty()) {
            return -1;
        }
        Matcher m = DURATION_PART.matcher(text);
        long total = 0;
        int pos = 0;
        while (m.find()) {
            if (m.start() != pos) {
                return -1;
            }
            long n = Long.parseLong(m.group(1));
            total +=
                    switch (m.group(2)) {
                        case "ms" -> n;
                        case "s" -> n * 1000;
                        case "m" -> n * 60_000;
                        case "h" -> n * 3_600_000;
                        case "d" -> n * 86_400_000;
                        case "w" -> n * 7 * 86_400_000;
                        default -> n * 365 * 86_400_000L;
                    };
            pos = m.end();
        }
        return pos == text.length() ? total : -1;
    }

    // ---- metadata ----

    /**
     * Metric types by family name from a {@code /api/v1/metadata} answer, lower case.
     *
     * @param data the answer's {@code data}
     * @return family name to type, e.g. {@code counter}
     */
    static Map<String, String> metricTypes(JsonNode data) {
        Map<String, String> types = new LinkedHashMap<>();
        data.fields()
                .forEachRemaining(
                        e -> {
                            JsonNode first = e.getValue().path(0);
                            String t = first.path("type").asText("");
                            if (!t.isEmpty()) {
                                types.put(e.getKey(), t.toLowerCase(Locale.ROOT));
                            }
                        });
        return types;
    }
}
