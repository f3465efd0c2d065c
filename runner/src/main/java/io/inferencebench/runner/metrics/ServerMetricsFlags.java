package io.inferencebench.runner.metrics;

import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.prometheus.PrometheusSourceConfig;
import io.inferencebench.runner.http.TlsOptions;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import picocli.CommandLine.Option;

/** The {@code run} command's server-metrics flags (a picocli mixin). */
public final class ServerMetricsFlags {

    /** Value picocli gives {@code --scrape-metrics} when no URL follows it. */
    static final String DEFAULT_URL = "<base-url>/metrics";

    @Option(
            names = "--scrape-metrics",
            arity = "0..1",
            fallbackValue = DEFAULT_URL,
            paramLabel = "URL[,URL...]",
            description =
                    "Scrape the server's Prometheus metrics during every stage (default URL"
                            + " <base-url>/metrics; a comma list scrapes several replicas) and put"
                            + " their statistics in the profiles.")
    String scrapeUrl;

    @Option(
            names = "--scrape-interval",
            description = "Time between scrapes inside a stage (default 5s).")
    String scrapeInterval;

    @Option(
            names = "--scrape-timeout",
            description =
                    "Limit on each scrape, from the request to the body's last byte (default: the"
                            + " interval, at most 10s); with --prometheus-url the limit on each"
                            + " Prometheus query (default 30s).")
    String scrapeTimeout;

    @Option(
            names = "--metrics-max-bytes",
            paramLabel = "SIZE",
            description =
                    "Most bytes accepted from one metrics page (or one Prometheus answer), after"
                            + " gzip decompression, e.g. 8MiB (default), 512KiB, 1000000; a"
                            + " larger page is a failed scrape.")
    String maxBodyBytes;

    @Option(
            names = "--metrics-include",
            split = ",",
            description =
                    "Extra server metrics to summarise: names or globs (* ?), optionally with"
                            + " :sum or :mean for the replica aggregation (comma list).")
    List<String> include;

    @Option(
            names = "--metrics-exclude",
            split = ",",
            description = "Server metrics to leave out: names or globs (comma list).")
    List<String> exclude;

    @Option(
            names = "--prometheus-url",
            description =
                    "Read the server metrics of each stage window from this Prometheus server's"
                            + " HTTP API instead of scraping the server.")
    String prometheusUrl;

    @Option(
            names = "--prometheus-selector",
            description = "Label matchers picking the server's series, e.g. {job=\"vllm\"}.")
    String prometheusSelector;

    @Option(
            names = "--prometheus-token-file",
            description = "File holding a bearer token for --prometheus-url.")
    Path prometheusTokenFile;

    /**
     * Whether any server-metrics source was asked for.
     *
     * @return {@code true} with {@code --scrape-metrics} or {@code --prometheus-url}
     */
    public boolean enabled() {
        return scrapeUrl != null || prometheusUrl != null;
    }

    /**
     * Checks the flags without opening anything.
     *
     * @param baseUrl the run's {@code --base-url}
     * @return one message per problem naming the flag; empty when valid
     */
    public List<String> validate(String baseUrl) {
        List<String> messages = new ArrayList<>();
        if (scrapeUrl != null && prometheusUrl != null) {
            messages.add(
                    "--scrape-metrics and --prometheus-url: choose one source of server metrics");
        }
        boolean sourceless = !enabled();
        if (sourceless
                && (include != null
                        || exclude != null
                        || scrapeInterval != null
                        || scrapeTimeout != null
                        || maxBodyBytes != null)) {
            messages.add(
                    "--scrape-interval, --scrape-timeout, --metrics-max-bytes, --metrics-include"
                            + " and --metrics-exclude need --scrape-metrics or --prometheus-url");
        }
        if (prometheusUrl == null && (prometheusSelector != null || prometheusTokenFile != null)) {
            messages.add("--prometheus-selector and --prometheus-token-file need --prometheus-url");
        }
        if (prometheusUrl != null && scrapeInterval != null) {
            messages.add(
                    "--scrape-interval applies to --scrape-metrics, not to --prometheus-url"
                            + " (Prometheus scrapes the server itself)");
        }
        if (maxBodyBytes != null) {
            try {
                byteSize(maxBodyBytes);
            } catch (IllegalArgumentException e) {
                messages.add("--metrics-max-bytes: " + e.getMessage());
            }
        }
        for (String m : ServerMetricCatalog.validateSelectors(include, exclude)) {
            messages.add(
                    m.replace("metrics.include", "--metrics-include")
                            .replace("metrics.exclude", "--metrics-exclude"));
        }
        if (scrapeUrl != null) {
            for (String url : scrapeUrls(baseUrl)) {
                String problem = httpUrlProblem(url);
                if (problem != null) {
                    messages.add("--scrape-metrics: " + problem);
                }
            }
            Duration interval = duration("--scrape-interval", scrapeInterval, "5s", messages);
            if (scrapeTimeout != null) {
                duration("--scrape-timeout", scrapeTimeout, null, messages);
            }
            if (interval != null && interval.toMillis() < 100) {
                messages.add("--scrape-interval: must be at least 100ms, got " + scrapeInterval);
            }
        }
        if (prometheusUrl != null) {
            if (scrapeTimeout != null) {
                duration("--scrape-timeout", scrapeTimeout, null, messages);
            }
            String problem = httpUrlProblem(prometheusUrl);
            if (problem != null) {
                messages.add("--prometheus-url: " + problem);
            } else {
                for (String m : prometheusConfig(null).validate("prometheus")) {
                    messages.add(
                            m.replace("prometheus.url", "--prometheus-url")
                                    .replace("prometheus.selector", "--prometheus-selector"));
                }
            }
            if (prometheusTokenFile != null && !Files.isReadable(prometheusTokenFile)) {
                messages.add("--prometheus-token-file: cannot read " + prometheusTokenFile);
            }
        }
        return messages;
    }

    /**
     * Opens the source the flags ask for; call {@link #validate} first.
     *
     * @param baseUrl the run's {@code --base-url}
     * @param backend the backend whose catalog to use (e.g. {@code vllm})
     * @param warn receives warnings (printed once)
     * @return the source, or {@code null} when server metrics were not asked for
     * @throws IOException when the token file cannot be read
     */
    public ServerMetricsSource open(String baseUrl, String backend, Consumer<String> warn)
            throws IOException {
        return open(baseUrl, backend, TlsOptions.VERIFY, warn);
    }

    /**
     * Opens the source the flags ask for; call {@link #validate} first.
     *
     * @param baseUrl the run's {@code --base-url}
     * @param backend the backend whose catalog to use (e.g. {@code vllm})
     * @param tls the target's certificate checks, used for every https scrape URL (the target's
     *     replicas)
     * @param warn receives warnings (printed once)
     * @return the source, or {@code null} when server metrics were not asked for
     * @throws IOException when the token file cannot be read
     */
    public ServerMetricsSource open(
            String baseUrl, String backend, TlsOptions tls, Consumer<String> warn)
            throws IOException {
        if (!enabled()) {
            return null;
        }
        ServerMetricCatalog catalog =
                ServerMetricCatalog.forBackend(backend).adjust(include, exclude);
        if (prometheusUrl != null) {
            String token = null;
            if (prometheusTokenFile != null) {
                token = Files.readString(prometheusTokenFile, StandardCharsets.UTF_8).strip();
                if (token.isEmpty()) {
                    throw new IllegalArgumentException(
                            "--prometheus-token-file: " + prometheusTokenFile + " is empty");
                }
            }
            PrometheusSourceConfig config = prometheusConfig(token);
            if (scrapeTimeout != null) {
                config = config.withTimeout(Durations.parse(scrapeTimeout));
            }
            return new PrometheusWindowSource(config, maxBodyBytes(), catalog, warn);
        }
        Duration interval = Durations.parse(scrapeInterval == null ? "5s" : scrapeInterval);
        Duration timeout =
                scrapeTimeout != null
                        ? Durations.parse(scrapeTimeout)
                        : (interval.compareTo(Duration.ofSeconds(10)) < 0
                                ? interval
                                : Duration.ofSeconds(10));
        List<URI> urls = scrapeUrls(baseUrl).stream().map(URI::create).toList();
        return new DirectScraper(urls, catalog, interval, timeout, maxBodyBytes(), tls, warn);
    }

    private long maxBodyBytes() {
        return maxBodyBytes == null ? ScrapeBodyReader.DEFAULT_MAX_BYTES : byteSize(maxBodyBytes);
    }

    /** Parses {@code 1000}, {@code 512KiB}, {@code 8MiB} or {@code 1GiB} (also Ki, Mi, Gi). */
    static long byteSize(String text) {
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("(\\d{1,10})\\s*(|Ki|KiB|Mi|MiB|Gi|GiB)")
                        .matcher(text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "'" + text + "' is not a size; use e.g. 8MiB, 512KiB or a number of bytes");
        }
        long unit =
                switch (m.group(2)) {
                    case "Ki", "KiB" -> 1024L;
                    case "Mi", "MiB" -> 1024L * 1024;
                    case "Gi", "GiB" -> 1024L * 1024 * 1024;
                    default -> 1L;
                };
        long bytes = Long.parseLong(m.group(1)) * unit;
        if (bytes < 1 || bytes > 1024L * 1024 * 1024) {
            throw new IllegalArgumentException("must be between 1 byte and 1GiB, got " + text);
        }
        return bytes;
    }

    private PrometheusSourceConfig prometheusConfig(String token) {
        PrometheusSourceConfig config =
                PrometheusSourceConfig.of(URI.create(prometheusUrl), prometheusSelector);
        return token == null ? config : config.withBearerToken(token);
    }

    List<String> scrapeUrls(String baseUrl) {
        if (scrapeUrl == null || scrapeUrl.equals(DEFAULT_URL) || scrapeUrl.isBlank()) {
            String base = baseUrl;
            while (base.endsWith("/")) {
                base = base.substring(0, base.length() - 1);
            }
            return List.of(base + "/metrics");
        }
        List<String> urls = new ArrayList<>();
        for (String part : scrapeUrl.split(",")) {
            if (!part.isBlank()) {
                urls.add(part.strip());
            }
        }
        return urls.isEmpty() ? List.of(scrapeUrl) : urls;
    }

    private static String httpUrlProblem(String url) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            return "'" + url + "' is not a URL";
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme();
        if (!scheme.equalsIgnoreCase("http") && !scheme.equalsIgnoreCase("https")) {
            return "'" + url + "' must be an http:// or https:// URL";
        }
        if (uri.getHost() == null || uri.getHost().isBlank()) {
            return "'" + url + "' must name a host";
        }
        return null;
    }

    private static Duration duration(
            String flag, String text, String fallback, List<String> messages) {
        String value = text != null ? text : fallback;
        try {
            Duration d = Durations.parse(value);
            if (d.isNegative() || d.isZero()) {
                messages.add(flag + ": must be positive, got " + value);
                return null;
            }
            return d;
        } catch (IllegalArgumentException e) {
            messages.add(flag + ": '" + value + "' is not a duration; use e.g. 500ms, 5s, 1m");
            return null;
        }
    }
}
