package io.inferencebench.profile.server.prometheus;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowStatistics;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

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
 * <p>The exchange with Prometheus is {@link PrometheusHttp}'s, what is asked {@link
 * PrometheusQueries}', and what the answers mean {@link PrometheusAnswers}'.
 *
 * <p>Thread-safe; close it to release the HTTP client.
 */
public final class PrometheusApiSource implements AutoCloseable {

    /** Prometheus refuses range queries with more points per series than this. */
    public static final int MAX_POINTS_PER_QUERY = 11_000;

    /** Step used when no step is configured and Prometheus reports no scrape interval. */
    public static final Duration FALLBACK_STEP = Duration.ofSeconds(15);

    private static final int MAX_WARNINGS = 20;

    private final PrometheusSourceConfig config;
    private final PrometheusSelector selector;
    private final PrometheusHttp http;
    private final PrometheusAnswers answers;

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
        this.http = new PrometheusHttp(config, maxBodyBytes);
        this.answers = new PrometheusAnswers(config);
    }

    /**
     * Aborts the request in flight and refuses every later one; they fail with {@link
     * PrometheusQueryException.Kind#INTERRUPTED}. For a run that is being interrupted. Callable
     * from any thread.
     */
    public void cancel() {
        http.cancel();
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
                            + PrometheusHttp.redact(config.url())
                            + ": "
                            + http.sanitize(String.valueOf(e.getMessage())));
        }
    }

    private Window doFetch(ServerMetricCatalog catalog, long start, long end)
            throws PrometheusQueryException {
        List<String> warnings = new ArrayList<>();
        long requestedStep =
                config.step() != null ? config.step().toMillis() : scrapeIntervalMillis(warnings);
        String match = PrometheusQueries.anyName(selector);
        JsonNode namesNode =
                http.call(
                        "/api/v1/label/__name__/values",
                        PrometheusQueries.namesInWindow(match, start, end),
                        false,
                        warnings);
        Set<String> names = new TreeSet<>();
        for (JsonNode n : namesNode) {
            names.add(n.asText());
        }
        Set<String> wanted = PrometheusAnswers.wantedNames(catalog, names);
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

        PrometheusQueries.Grid grid = PrometheusQueries.grid(start, end, requestedStep);
        long step = grid.step();
        Set<String> queried = new LinkedHashSet<>(wanted);
        queried.add("up");
        String query = PrometheusQueries.names(queried, selector);
        PrometheusAnswers.Matrix matrix = new PrometheusAnswers.Matrix();
        for (int first = 0; first < grid.intervals(); first += MAX_POINTS_PER_QUERY) {
            int last = Math.min(grid.intervals() - 1, first + MAX_POINTS_PER_QUERY - 1);
            queryPoints(query, start, step, first, last, matrix, warnings);
        }
        queryRange(query, end, end, step, matrix, warnings);

        List<Scrape> scrapes = PrometheusAnswers.scrapes(matrix, metadata);
        Set<String> replicas = matrix.replicas();
        return new Window(scrapes, grid.points() * replicas.size(), step, replicas, warnings);
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
            PrometheusAnswers.Matrix matrix,
            List<String> warnings)
            throws PrometheusQueryException {
        try {
            queryRange(query, start + first * step, start + last * step, step, matrix, warnings);
        } catch (PrometheusQueryException e) {
            if (e.kind() != PrometheusQueryException.Kind.TOO_LARGE || first == last) {
                throw e;
            }
            warn(
                    warnings,
                    "query_range answers over "
                            + http.maxBodyBytes()
                            + " bytes: the window was asked in smaller parts");
            int middle = first + (last - first) / 2;
            queryPoints(query, start, step, first, middle, matrix, warnings);
            queryPoints(query, start, step, middle + 1, last, matrix, warnings);
        }
    }

    private void queryRange(
            String query,
            long from,
            long to,
            long step,
            PrometheusAnswers.Matrix matrix,
            List<String> warnings)
            throws PrometheusQueryException {
        answers.decodeMatrix(
                http.call(
                        "/api/v1/query_range",
                        PrometheusQueries.range(query, from, to, step),
                        true,
                        warnings),
                matrix,
                warnings);
    }

    /** The smallest scrape interval of the active targets the selector matches. */
    private long scrapeIntervalMillis(List<String> warnings) throws PrometheusQueryException {
        Map<String, List<String>> params = Map.of("state", List.of("active"));
        JsonNode data;
        try {
            data = http.call("/api/v1/targets", params, false, warnings);
        } catch (PrometheusQueryException e) {
            if (PrometheusHttp.endsWindow(e)) {
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
        long best = PrometheusAnswers.smallestScrapeInterval(data, selector);
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

    private Map<String, String> metadataTypes(List<String> warnings)
            throws PrometheusQueryException {
        JsonNode data;
        try {
            data = http.call("/api/v1/metadata", Map.of(), false, warnings);
        } catch (PrometheusQueryException e) {
            if (PrometheusHttp.endsWindow(e)) {
                throw e;
            }
            warn(warnings, "metric types unknown (" + e.getMessage() + "); inferred from names");
            return Map.of();
        }
        return PrometheusAnswers.metricTypes(data);
    }

    /**
     * A URL fit for messages: scheme, host, port and path only (no user info, query or fragment).
     *
     * @param url the URL
     * @return the redacted form
     */
    public static String redact(URI url) {
        return PrometheusHttp.redact(url);
    }

    /** Adds a warning of the window, once, up to a bound. */
    static void warn(List<String> warnings, String warning) {
        if (warnings.size() < MAX_WARNINGS && !warnings.contains(warning)) {
            warnings.add(warning);
        }
    }

    /** Releases the HTTP client at once, aborting anything still in flight. */
    @Override
    public void close() {
        http.close();
    }
}
