package io.inferencebench.profile.server.prometheus;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Where and how to ask a Prometheus server for the model server's metrics ({@code
 * spec.metrics.prometheus}).
 *
 * @param url base URL of the Prometheus HTTP API, for example {@code http://prometheus:9090} (a
 *     path prefix such as {@code /prometheus} is kept; {@code /api/v1/...} is appended)
 * @param bearerToken sent as {@code Authorization: Bearer <token>}; {@code null} for none; never
 *     logged nor put in any message or {@link #toString()}
 * @param selector label matchers picking the server's series, for example {@code
 *     {namespace="x",service="y"}}; {@code null} for none
 * @param labels extra equality matchers (label to value); {@code null} for none
 * @param job shortcut for the matcher {@code job="<job>"}; {@code null} for none
 * @param replicaLabel label that identifies a replica; {@code null} picks {@code pod} when a series
 *     has it, else {@code instance}
 * @param step query resolution; {@code null} uses the scrape interval Prometheus reports for the
 *     matching targets (15 s when it reports none)
 * @param timeout timeout of each HTTP request; {@code null} for 30 s
 */
public record PrometheusSourceConfig(
        URI url,
        String bearerToken,
        String selector,
        Map<String, String> labels,
        String job,
        String replicaLabel,
        Duration step,
        Duration timeout) {

    /** Default per-request timeout. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

    /** Defensive copy of the labels. */
    public PrometheusSourceConfig {
        labels =
                labels == null
                        ? Map.of()
                        : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(labels));
    }

    /**
     * A configuration with only a URL and a selector; other fields default.
     *
     * @param url Prometheus base URL
     * @param selector label matchers, may be {@code null}
     * @return the configuration
     */
    public static PrometheusSourceConfig of(URI url, String selector) {
        return new PrometheusSourceConfig(url, null, selector, null, null, null, null, null);
    }

    /**
     * A copy with a bearer token.
     *
     * @param token the token
     * @return the copy
     */
    public PrometheusSourceConfig withBearerToken(String token) {
        return new PrometheusSourceConfig(
                url, token, selector, labels, job, replicaLabel, step, timeout);
    }

    /**
     * A copy with a fixed query step.
     *
     * @param newStep the step
     * @return the copy
     */
    public PrometheusSourceConfig withStep(Duration newStep) {
        return new PrometheusSourceConfig(
                url, bearerToken, selector, labels, job, replicaLabel, newStep, timeout);
    }

    /**
     * A copy with a request timeout.
     *
     * @param newTimeout the timeout
     * @return the copy
     */
    public PrometheusSourceConfig withTimeout(Duration newTimeout) {
        return new PrometheusSourceConfig(
                url, bearerToken, selector, labels, job, replicaLabel, step, newTimeout);
    }

    /**
     * Checks every field.
     *
     * @param field path prefix for messages, for example {@code spec.metrics.prometheus}
     * @return one message per problem, naming the field and what is allowed; empty when valid
     */
    public List<String> validate(String field) {
        List<String> messages = new ArrayList<>();
        if (url == null) {
            messages.add(field + ".url: required, for example http://prometheus.monitoring:9090");
        } else {
            String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
            if (!scheme.equals("http") && !scheme.equals("https")) {
                messages.add(field + ".url: must be an http:// or https:// URL");
            } else if (url.getHost() == null || url.getHost().isBlank()) {
                messages.add(field + ".url: must name a host");
            }
            if (url.getRawQuery() != null || url.getRawFragment() != null) {
                messages.add(field + ".url: must not have a query or fragment");
            }
        }
        if (bearerToken != null
                && (bearerToken.isBlank() || bearerToken.chars().anyMatch(c -> c < 0x20))) {
            // the token itself is never echoed
            messages.add(field + ".bearerToken: must be non-empty and free of control characters");
        }
        String selectorProblem = PrometheusSelector.problem(selector);
        if (selectorProblem != null) {
            messages.add(field + ".selector: " + selectorProblem);
        }
        labels.forEach(
                (k, v) -> {
                    if (k == null || !LABEL_NAME.matcher(k).matches() || k.equals("__name__")) {
                        messages.add(
                                field
                                        + ".labels: '"
                                        + k
                                        + "' is not a label name (letters, digits, '_', not"
                                        + " starting with a digit; __name__ not allowed)");
                    } else if (v == null) {
                        messages.add(field + ".labels." + k + ": value required");
                    }
                });
        if (job != null && job.isBlank()) {
            messages.add(field + ".job: must not be blank when set");
        }
        if (replicaLabel != null && !LABEL_NAME.matcher(replicaLabel).matches()) {
            messages.add(field + ".replicaLabel: must be a label name such as pod or instance");
        }
        if (step != null && (step.isNegative() || step.isZero() || step.toMillis() < 1)) {
            messages.add(field + ".step: must be at least 1ms");
        }
        if (timeout != null && (timeout.isNegative() || timeout.toMillis() < 1)) {
            messages.add(field + ".timeout: must be at least 1ms");
        }
        return messages;
    }

    /**
     * The selector, labels and job combined.
     *
     * @return all matchers
     * @throws IllegalArgumentException when the selector does not parse
     */
    public PrometheusSelector effectiveSelector() {
        PrometheusSelector s = PrometheusSelector.parse(selector);
        for (Map.Entry<String, String> e : labels.entrySet()) {
            s = s.and(e.getKey(), e.getValue());
        }
        if (job != null) {
            s = s.and("job", job);
        }
        return s;
    }

    /** Never shows the token. */
    @Override
    public String toString() {
        return "PrometheusSourceConfig[url="
                + PrometheusApiSource.redact(url)
                + ", bearerToken="
                + (bearerToken == null ? "none" : "<redacted>")
                + ", selector="
                + selector
                + ", labels="
                + labels
                + ", job="
                + job
                + ", replicaLabel="
                + replicaLabel
                + ", step="
                + step
                + ", timeout="
                + timeout
                + "]";
    }
}
