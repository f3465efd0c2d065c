package io.inferencebench.profile.server.prometheus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.prom.MetricFamily;
import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.prom.Sample;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowStatistics;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Server metrics of a stage window read from a Prometheus server's HTTP API instead of scraping the
 * model server directly.
 *
 * <p>For a window {@code [start, end]} the source asks {@code /api/v1/label/__name__/values} which
 * metric names the selector matches, keeps those the catalog would summarise (histograms with their
 * {@code _bucket}, {@code _sum} and {@code _count} series), reads their types from {@code
 * /api/v1/metadata}, and queries {@code /api/v1/query_range} at a step no coarser than the scrape
 * interval, aligned so that both {@code start} and {@code end} are evaluation points. Each returned
 * series is assigned to a replica (label {@code pod} when present, else {@code instance}, or the
 * configured label), and every (replica, evaluation time) becomes one {@link Scrape} holding a page
 * of the values Prometheus had at that time; a replica whose {@code up} was 0 gets a failed scrape.
 * {@link WindowStatistics} then computes the same statistics as for direct scrapes.
 *
 * <p>What differs from direct scraping: a value at time t is the last sample Prometheus took at or
 * before t (within its lookback window), so window edges lag by up to one scrape interval.
 *
 * <p>Prometheus is not trusted more than a scraped endpoint: every answer is read with a {@link
 * ScrapeBodyReader}, so a body larger than the bound is cut there (a window whose {@code
 * query_range} answer is over it is asked again in smaller parts) and the configured timeout runs
 * from the request to the body's last byte (a body that never ends costs one timeout, and a timeout
 * ends the window's queries). {@link #cancel()} aborts what is in flight.
 *
 * <p>Thread-safe; close it to release the HTTP client.
 */
public final class PrometheusApiSource implements AutoCloseable {

    /** Prometheus refuses range queries with more points per series than this. */
    public static final int MAX_POINTS_PER_QUERY = 11_000;

    /** Step used when no step is configured and Prometheus reports no scrape interval. */
    public static final Duration FALLBACK_STEP = Duration.ofSeconds(15);

    private static final int MAX_WARNINGS = 20;
    private static final Pattern DURATION_PART = Pattern.compile("(\\d+)(ms|y|w|d|h|m|s)");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final PrometheusSourceConfig config;
    private final PrometheusSelector selector;
    private final String base;
    private final Duration timeout;
    private final HttpClient http;
    private final ScrapeBodyReader bodyReader;
    private final Set<Runnable> inFlight = ConcurrentHashMap.newKeySet();
    private volatile boolean cancelled;

    /**
     * The scrapes rebuilt from Prometheus for one window.
     *
     * @param scrapes one per replica and evaluation time, in time order
     * @param expectedScrapes evaluation points times replicas seen
     * @param stepMillis the query step used
     * @param replicas the replicas seen
     * @param warnings what Prometheus warned about and what was skipped (bounded)
     */
    public record Window(
            List<Scrape> scrapes,
            int expectedScrapes,
            long stepMillis,
            Set<String> replicas,
            List<String> warnings) {

        /** Defensive copies. */
        public Window {
            scrapes = List.copyOf(scrapes);
            replicas = java.util.Collections.unmodifiableSet(new TreeSet<>(replicas));
            warnings = List.copyOf(warnings);
        }
    }

    /**
     * Creates a source whose answers may hold {@link ScrapeBodyReader#DEFAULT_MAX_BYTES} each.
     *
     * @param config where and how to query
     * @throws IllegalArgumentException when the configuration is invalid (the message lists every
     *     problem, see {@link PrometheusSourceConfig#validate})
     */
    public PrometheusApiSource(PrometheusSourceConfig config) {
        this(config, ScrapeBodyReader.DEFAULT_MAX_BYTES);
    }

    /**
     * Creates a source.
     *
     * @param config where and how to query
     * @param maxBodyBytes most bytes (after gzip decompression) accepted in one answer
     * @throws IllegalArgumentException when the configuration is invalid (the message lists every
     *     problem, see {@link PrometheusSourceConfig#validate}) or the bound is not positive
     */
    public PrometheusApiSource(PrometheusSourceConfig config, long maxBodyBytes) {
        List<String> problems =
                config == null
                        ? List.of("prometheus: configuration required")
                        : config.validate("prometheus");
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
        this.config = config;
        this.selector = config.effectiveSelector();
        String u = config.url().toString();
        while (u.endsWith("/")) {
            u = u.substring(0, u.length() - 1);
        }
        this.base = u;
        this.timeout =
                config.timeout() == null
                        ? PrometheusSourceConfig.DEFAULT_TIMEOUT
                        : config.timeout();
        this.bodyReader = new ScrapeBodyReader(maxBodyBytes, timeout);
        this.http =
                HttpClient.newBuilder()
                        .connectTimeout(timeout)
                        .followRedirects(HttpClient.Redirect.NEVER)
                        .build();
    }

    /**
     * Aborts the request in flight and refuses every later one; they fail with {@link
     * PrometheusQueryException.Kind#INTERRUPTED}. For a run that is being interrupted. Callable
     * from any thread.
     */
    public void cancel() {
        cancelled = true;
        for (Runnable abort : inFlight) {
            abort.run();
        }
    }

    /**
     * The combined selector this source queries with.
     *
     * @return selector, labels and job together
     */
    public PrometheusSelector selector() {
        return selector;
    }

    /**
     * The largest step a window query uses: the configured step, else the smallest scrape interval
     * Prometheus reports for the matching targets (asked from its targets API), else {@link
     * #FALLBACK_STEP}. Prometheus' newest sample is up to this old, so a caller that wants a
     * window's end edge to include everything up to that end waits this long (plus the scrape's own
     * time) after it before querying.
     *
     * @return the step
     */
    public Duration step() {
        if (config.step() != null) {
            return config.step();
        }
        try {
            return Duration.ofMillis(scrapeIntervalMillis(new ArrayList<>()));
        } catch (PrometheusQueryException e) {
            return FALLBACK_STEP;
        }
    }

    /**
     * Computes the statistics of one window; never throws: when Prometheus cannot be asked, the
     * report is empty and its coverage says why (one failed scrape with the message).
     *
     * @param catalog which metrics to summarise
     * @param windowStartMillis window start, epoch ms
     * @param windowEndMillis window end, epoch ms
     * @return the report; Prometheus warnings are appended to the coverage errors
     */
    public ServerMetricsReport report(
            ServerMetricCatalog catalog, long windowStartMillis, long windowEndMillis) {
        Window window;
        try {
            window = fetch(catalog, windowStartMillis, windowEndMillis);
        } catch (PrometheusQueryException e) {
            return new ServerMetricsReport(
                    List.of(),
                    Map.of(),
                    new ScrapeCoverage(
                            0, 0, 1, 0, List.of("prometheus: " + e.getMessage()), Map.of()));
        }
        ServerMetricsReport report =
                WindowStatistics.compute(
                        catalog,
                        window.scrapes(),
                        windowStartMillis,
                        windowEndMillis,
                        window.expectedScrapes());
        if (window.warnings().isEmpty() || report.coverage() == null) {
            return report;
        }
        ScrapeCoverage c = report.coverage();
        List<String> errors = new ArrayList<>(c.errors());
        for (String w : window.warnings()) {
            if (errors.size() >= WindowStatistics.MAX_ERRORS) {
                break;
            }
            errors.add("prometheus: " + w);
        }
        return new ServerMetricsReport(
                report.aggregate(),
                report.perReplica(),
                new ScrapeCoverage(
                        c.expected(),
                        c.succeeded(),
                        c.failed(),
                        c.replicas(),
                        errors,
                        c.succeededByReplica()));
    }

    /**
     * Reads the catalog's metrics for one window and rebuilds them as scrapes.
     *
     * @param catalog which metrics to read
     * @param windowStartMillis window start, epoch ms
     * @param windowEndMillis window end, epoch ms (not before the start)
     * @return the scrapes, expected count and warnings; no scrapes when nothing matched
     * @throws PrometheusQueryException when Prometheus cannot be reached, times out, answers with
     *     an error or with something that is not its API's JSON (the message says which)
     */
    public Window fetch(ServerMetricCatalog catalog, long windowStartMillis, long windowEndMillis)
            throws PrometheusQueryException {
        if (windowEndMillis < windowStartMillis) {
            throw new PrometheusQueryException(
                    "window end " + windowEndMillis + " is before its start " + windowStartMillis);
        }
        try {
            return doFetch(catalog, windowStartMillis, windowEndMillis);
        } catch (RuntimeException e) {
            throw new PrometheusQueryException(
                    "unexpected answer from Prometheus at "
                            + redact(config.url())
                            + ": "
                            + sanitize(String.valueOf(e.getMessage())));
        }
    }

    private Window doFetch(ServerMetricCatalog catalog, long start, long end)
            throws PrometheusQueryException {
        List<String> warnings = new ArrayList<>();
        long requestedStep =
                config.step() != null ? config.step().toMillis() : scrapeIntervalMillis(warnings);
        String match = "{" + join("__name__=~\".+\"", selector.render()) + "}";
        Map<String, List<String>> params = new LinkedHashMap<>();
        params.put("match[]", List.of(match));
        params.put("start", List.of(seconds(start)));
        params.put("end", List.of(seconds(end)));
        JsonNode namesNode = call("/api/v1/label/__name__/values", params, false, warnings);
        Set<String> names = new TreeSet<>();
        for (JsonNode n : namesNode) {
            names.add(n.asText());
        }
        Set<String> wanted = wantedNames(catalog, names);
        if (wanted.isEmpty()) {
            warn(
                    warnings,
                    names.isEmpty()
                            ? "no series match " + match + " in the window"
                            : "none of the "
                                    + names.size()
                                    + " metric names matching "
                                    + match
                                    + " is in the catalog");
        }
        Map<String, String> metadata = wanted.isEmpty() ? Map.of() : metadataTypes(warnings);

        long span = end - start;
        int intervals = span == 0 ? 0 : (int) Math.max(1, ceilDiv(span, requestedStep));
        long step = intervals == 0 ? Math.max(1, requestedStep) : Math.max(1, span / intervals);
        // Prometheus steps are whole milliseconds, so start + intervals * step may fall short of
        // the end by up to `intervals` ms: evaluate start + k * step for k < intervals, then the
        // end itself in a query of its own.
        int points = intervals + 1;

        Set<String> queried = new LinkedHashSet<>(wanted);
        queried.add("up");
        String query =
                "{" + join("__name__=~\"" + nameRegex(queried) + "\"", selector.render()) + "}";
        Map<String, TreeMap<Long, List<Sample>>> samples = new TreeMap<>();
        Map<String, TreeMap<Long, Double>> up = new TreeMap<>();
        for (int first = 0; first < intervals; first += MAX_POINTS_PER_QUERY) {
            int last = Math.min(intervals - 1, first + MAX_POINTS_PER_QUERY - 1);
            queryPoints(query, start, step, first, last, samples, up, warnings);
        }
        queryRange(query, end, end, step, samples, up, warnings);

        Map<String, SeriesShape> shapes = shapes(samples, metadata);
        Set<String> replicas = new TreeSet<>(samples.keySet());
        replicas.addAll(up.keySet());
        List<Scrape> scrapes = new ArrayList<>();
        for (String replica : replicas) {
            TreeMap<Long, List<Sample>> byTime = samples.getOrDefault(replica, new TreeMap<>());
            TreeMap<Long, Double> upByTime = up.getOrDefault(replica, new TreeMap<>());
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
        return new Window(scrapes, points * replicas.size(), step, replicas, warnings);
    }

    /**
     * Evaluation points {@code first..last} (of {@code start + k * step}); an answer over the body
     * bound is asked again as two halves, down to single points, so a long window of many series is
     * read in parts that each fit (a hostile server costs at most one request per halving).
     */
    private void queryPoints(
            String query,
            long start,
            long step,
            int first,
            int last,
            Map<String, TreeMap<Long, List<Sample>>> samples,
            Map<String, TreeMap<Long, Double>> up,
            List<String> warnings)
            throws PrometheusQueryException {
        try {
            queryRange(
                    query, start + first * step, start + last * step, step, samples, up, warnings);
        } catch (PrometheusQueryException e) {
            if (e.kind() != PrometheusQueryException.Kind.TOO_LARGE || first == last) {
                throw e;
            }
            warn(
                    warnings,
                    "query_range answers over "
                            + bodyReader.maxBytes()
                            + " bytes: the window was asked in smaller parts");
            int middle = first + (last - first) / 2;
            queryPoints(query, start, step, first, middle, samples, up, warnings);
            queryPoints(query, start, step, middle + 1, last, samples, up, warnings);
        }
    }

    private void queryRange(
            String query,
            long from,
            long to,
            long step,
            Map<String, TreeMap<Long, List<Sample>>> samples,
            Map<String, TreeMap<Long, Double>> up,
            List<String> warnings)
            throws PrometheusQueryException {
        Map<String, List<String>> q = new LinkedHashMap<>();
        q.put("query", List.of(query));
        q.put("start", List.of(seconds(from)));
        q.put("end", List.of(seconds(to)));
        q.put("step", List.of(seconds(step)));
        decodeMatrix(call("/api/v1/query_range", q, true, warnings), samples, up, warnings);
    }

    // ---- which names, which types ----

    /** Catalog-wanted sample names among those Prometheus has (histogram parts included). */
    private static Set<String> wantedNames(ServerMetricCatalog catalog, Set<String> names) {
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

    private static String histogramBase(String name) {
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

    private void decodeMatrix(
            JsonNode data,
            Map<String, TreeMap<Long, List<Sample>>> samples,
            Map<String, TreeMap<Long, Double>> up,
            List<String> warnings)
            throws PrometheusQueryException {
        String type = data.path("resultType").asText("");
        if (!type.equals("matrix")) {
            throw new PrometheusQueryException(
                    "Prometheus at "
                            + redact(config.url())
                            + " answered query_range with resultType '"
                            + type
                            + "' instead of 'matrix'");
        }
        for (JsonNode series : data.path("result")) {
            JsonNode metric = series.path("metric");
            String name = metric.path("__name__").asText("");
            if (name.isEmpty()) {
                warn(warnings, "a series without __name__ was skipped");
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
                warn(warnings, "native histogram series " + name + " skipped (not supported)");
                continue;
            }
            for (JsonNode point : series.path("values")) {
                if (!point.isArray() || point.size() < 2) {
                    warn(warnings, "malformed point in " + name + " skipped");
                    continue;
                }
                long t = Math.round(point.get(0).asDouble() * 1000.0);
                double v;
                try {
                    v = parseValue(point.get(1).asText());
                } catch (NumberFormatException e) {
                    warn(
                            warnings,
                            "unparsable value '"
                                    + point.get(1).asText()
                                    + "' in "
                                    + name
                                    + " skipped");
                    continue;
                }
                if (name.equals("up")) {
                    up.computeIfAbsent(replica, r -> new TreeMap<>()).put(t, v);
                } else {
                    samples.computeIfAbsent(replica, r -> new TreeMap<>())
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

    /** The smallest scrape interval of the active targets the selector matches. */
    private long scrapeIntervalMillis(List<String> warnings) throws PrometheusQueryException {
        Map<String, List<String>> params = Map.of("state", List.of("active"));
        JsonNode data;
        try {
            data = call("/api/v1/targets", params, false, warnings);
        } catch (PrometheusQueryException e) {
            if (endsWindow(e)) {
                throw e;
            }
            warn(
                    warnings,
                    "scrape interval unknown ("
                            + e.getMessage()
                            + "); step "
                            + FALLBACK_STEP.toSeconds()
                            + "s used");
            return FALLBACK_STEP.toMillis();
        }
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
        if (best == Long.MAX_VALUE) {
            warn(
                    warnings,
                    "no matching target reports a scrape interval; step "
                            + FALLBACK_STEP.toSeconds()
                            + "s used");
            return FALLBACK_STEP.toMillis();
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

    private Map<String, String> metadataTypes(List<String> warnings)
            throws PrometheusQueryException {
        JsonNode data;
        try {
            data = call("/api/v1/metadata", Map.of(), false, warnings);
        } catch (PrometheusQueryException e) {
            if (endsWindow(e)) {
                throw e;
            }
            warn(warnings, "metric types unknown (" + e.getMessage() + "); inferred from names");
            return Map.of();
        }
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

    // ---- HTTP ----

    private JsonNode call(
            String path, Map<String, List<String>> params, boolean post, List<String> warnings)
            throws PrometheusQueryException {
        String form = formEncode(params);
        String what = path.substring(path.lastIndexOf('/') + 1);
        HttpRequest.Builder request;
        try {
            request =
                    post
                            ? HttpRequest.newBuilder(new URI(base + path))
                                    .header("Content-Type", "application/x-www-form-urlencoded")
                                    .POST(HttpRequest.BodyPublishers.ofString(form))
                            : HttpRequest.newBuilder(
                                            new URI(
                                                    base
                                                            + path
                                                            + (form.isEmpty() ? "" : "?" + form)))
                                    .GET();
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new PrometheusQueryException(
                    "cannot build the " + what + " request URL from " + redact(config.url()));
        }
        request.timeout(timeout)
                .header("Accept", "application/json")
                .header("User-Agent", "inferencebench-profile");
        if (config.bearerToken() != null) {
            request.header("Authorization", "Bearer " + config.bearerToken());
        }
        long startNanos = System.nanoTime();
        HttpResponse<InputStream> response = awaitHeaders(request.build(), path);
        byte[] bytes = readBody(response, path, startNanos);
        int code = response.statusCode();
        JsonNode body;
        try {
            body = JSON.readTree(bytes);
        } catch (IOException e) {
            body = null;
        }
        if (body == null || !body.isObject() || !body.has("status")) {
            throw new PrometheusQueryException(
                    "Prometheus at "
                            + redact(config.url())
                            + " answered "
                            + path
                            + " with HTTP "
                            + code
                            + hint(code)
                            + " and a body that is not Prometheus API JSON"
                            + excerpt(bytes));
        }
        for (JsonNode w : body.path("warnings")) {
            warn(warnings, sanitize(w.asText()));
        }
        if (!"success".equals(body.path("status").asText())) {
            throw new PrometheusQueryException(
                    "Prometheus at "
                            + redact(config.url())
                            + " rejected "
                            + path
                            + " (HTTP "
                            + code
                            + hint(code)
                            + ", "
                            + body.path("errorType").asText("unknown error type")
                            + "): "
                            + sanitize(body.path("error").asText("no error message")));
        }
        if (code / 100 != 2) {
            throw new PrometheusQueryException(
                    "Prometheus at "
                            + redact(config.url())
                            + " answered "
                            + path
                            + " with HTTP "
                            + code
                            + hint(code));
        }
        return body.path("data");
    }

    /**
     * A timeout or a cancel ends the window's queries: a server that did not answer one request in
     * time is not asked the next ones, so a stalled Prometheus costs one timeout, not one per
     * request.
     */
    private static boolean endsWindow(PrometheusQueryException e) {
        return e.kind() == PrometheusQueryException.Kind.TIMED_OUT
                || e.kind() == PrometheusQueryException.Kind.INTERRUPTED;
    }

    /** Sends the request and waits for the status and headers, at most the timeout. */
    private HttpResponse<InputStream> awaitHeaders(HttpRequest request, String path)
            throws PrometheusQueryException {
        if (cancelled) {
            throw interrupted();
        }
        CompletableFuture<HttpResponse<InputStream>> pending =
                http.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream());
        Runnable abort = () -> pending.cancel(true);
        inFlight.add(abort);
        try {
            if (cancelled) {
                abort.run();
            }
            return pending.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            abort.run();
            throw timedOut(path);
        } catch (CancellationException e) {
            throw interrupted();
        } catch (InterruptedException e) {
            abort.run();
            Thread.currentThread().interrupt();
            throw interrupted();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cancelled) {
                throw interrupted();
            }
            if (cause instanceof HttpTimeoutException) {
                throw timedOut(path);
            }
            if (cause instanceof ConnectException) {
                throw new PrometheusQueryException(
                        "cannot connect to Prometheus at "
                                + redact(config.url())
                                + ": "
                                + sanitize(describe(cause)));
            }
            throw new PrometheusQueryException(
                    "request "
                            + path
                            + " to Prometheus at "
                            + redact(config.url())
                            + " failed: "
                            + sanitize(describe(cause)));
        } finally {
            inFlight.remove(abort);
        }
    }

    /** Reads the whole body within the bound and the deadline that began at {@code startNanos}. */
    private byte[] readBody(HttpResponse<InputStream> response, String path, long startNanos)
            throws PrometheusQueryException {
        InputStream body = response.body();
        Runnable abort = () -> closeQuietly(body);
        inFlight.add(abort);
        try {
            if (cancelled) {
                abort.run();
            }
            return bodyReader.read(
                    body,
                    response.headers().firstValue("Content-Encoding").orElse(null),
                    startNanos);
        } catch (ScrapeBodyReader.BodyRefused e) {
            if (cancelled) {
                throw interrupted();
            }
            if (e.timedOut()) {
                throw timedOut(path);
            }
            throw new PrometheusQueryException(
                    "Prometheus at "
                            + redact(config.url())
                            + " answered "
                            + path
                            + " with HTTP "
                            + response.statusCode()
                            + " and a body that was refused: "
                            + e.getMessage(),
                    e.tooLarge()
                            ? PrometheusQueryException.Kind.TOO_LARGE
                            : PrometheusQueryException.Kind.FAILED);
        } catch (IOException e) {
            if (cancelled) {
                throw interrupted();
            }
            throw new PrometheusQueryException(
                    "reading the answer to "
                            + path
                            + " from Prometheus at "
                            + redact(config.url())
                            + " failed: "
                            + sanitize(describe(e)));
        } finally {
            inFlight.remove(abort);
        }
    }

    private PrometheusQueryException timedOut(String path) {
        return new PrometheusQueryException(
                "Prometheus at "
                        + redact(config.url())
                        + " did not answer "
                        + path
                        + " within "
                        + timeout.toMillis()
                        + " ms",
                PrometheusQueryException.Kind.TIMED_OUT);
    }

    private PrometheusQueryException interrupted() {
        return new PrometheusQueryException(
                "interrupted while querying Prometheus at " + redact(config.url()),
                PrometheusQueryException.Kind.INTERRUPTED);
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException | RuntimeException ignored) {
            // the reader sees the closed stream
        }
    }

    private static String hint(int code) {
        return switch (code) {
            case 301, 302, 303, 307, 308 -> " redirect (not followed): use the final URL";
            case 401 -> " unauthorized: check the bearer token";
            case 403 -> " forbidden: the bearer token lacks access";
            case 404 -> " not found: check the URL and its path prefix";
            case 422 -> " unprocessable: the query could not be executed";
            case 503 -> " unavailable: the query timed out or was aborted";
            default -> "";
        };
    }

    private String excerpt(byte[] body) {
        if (body == null || body.length == 0) {
            return " (empty)";
        }
        String s = new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8);
        s = s.replaceAll("[\\p{Cntrl}]", " ").strip();
        return " (starts: '" + sanitize(s) + "')";
    }

    private static String describe(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getMessage() == null) {
            cause = cause.getCause();
        }
        String m = cause.getMessage();
        return cause.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    /** Removes the bearer token from text that might echo it. */
    private String sanitize(String text) {
        String t = config.bearerToken();
        if (text == null || t == null || t.isEmpty()) {
            return text;
        }
        return text.replace(t, "<redacted>");
    }

    /**
     * A URL fit for messages: scheme, host, port and path only (no user info, query or fragment).
     *
     * @param url the URL
     * @return the redacted form
     */
    public static String redact(URI url) {
        if (url == null) {
            return "null";
        }
        try {
            return new URI(
                            url.getScheme(),
                            null,
                            url.getHost(),
                            url.getPort(),
                            url.getPath(),
                            null,
                            null)
                    .toString();
        } catch (URISyntaxException e) {
            return "<unprintable URL>";
        }
    }

    private static String formEncode(Map<String, List<String>> params) {
        StringBuilder b = new StringBuilder();
        params.forEach(
                (k, values) -> {
                    for (String v : values) {
                        if (b.length() > 0) {
                            b.append('&');
                        }
                        b.append(URLEncoder.encode(k, StandardCharsets.UTF_8))
                                .append('=')
                                .append(URLEncoder.encode(v, StandardCharsets.UTF_8));
                    }
                });
        return b.toString();
    }

    private static String nameRegex(Set<String> names) {
        StringBuilder b = new StringBuilder();
        for (String n : names) {
            if (b.length() > 0) {
                b.append('|');
            }
            for (char c : n.toCharArray()) {
                if (!Character.isLetterOrDigit(c) && c != '_' && c != ':') {
                    b.append("\\\\");
                }
                b.append(c);
            }
        }
        return b.toString();
    }

    private static String join(String first, String rest) {
        return rest.isEmpty() ? first : first + "," + rest;
    }

    private static String seconds(long millis) {
        return java.math.BigDecimal.valueOf(millis, 3).toPlainString();
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    private static void warn(List<String> warnings, String warning) {
        if (warnings.size() < MAX_WARNINGS && !warnings.contains(warning)) {
            warnings.add(warning);
        }
    }

    /** Releases the HTTP client at once, aborting anything still in flight. */
    @Override
    public void close() {
        // close() would wait for every exchange to end, and a hostile server's never does.
        http.shutdownNow();
    }
}
