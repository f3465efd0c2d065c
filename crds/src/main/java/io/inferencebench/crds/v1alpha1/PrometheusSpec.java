package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Map;

/**
 * Reading the model server's metrics from a Prometheus server's HTTP API ({@code
 * spec.metrics.prometheus}) instead of scraping the server pods directly: for users whose servers
 * are already scraped. The same statistics are computed for every stage window.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.url) || self.url.matches(r'''" + PrometheusSpec.URL_PATTERN + "''')",
        message =
                "url must be an http:// or https:// URL with a host and an optional path, e.g."
                        + " http://prometheus.monitoring:9090; no user info (put credentials in"
                        + " bearerTokenSecretRef), query or fragment",
        fieldPath = ".url")
@ValidationRule(
        value =
                "!has(self.selector) || self.selector.matches(r'''"
                        + PrometheusSpec.SELECTOR_PATTERN
                        + "''')",
        message =
                "selector must be PromQL label matchers with quoted values, with or without"
                        + " braces, e.g. {namespace=\"llm\",job=~\"vllm-.*\"}; no metric name",
        fieldPath = ".selector")
@ValidationRule(
        value = "!has(self.selector) || !self.selector.matches('(^|[{,])\\\\s*__name__\\\\s*[=!]')",
        message =
                "selector must not match __name__: the metric names come from the backend's"
                        + " catalog and spec.metrics.include/exclude",
        fieldPath = ".selector")
@ValidationRule(
        value =
                "!has(self.labels) || self.labels.all(k,"
                        + " k.matches('^[a-zA-Z_][a-zA-Z0-9_]*$') && k != '__name__')",
        message =
                "labels keys must be Prometheus label names (letters, digits and _, not starting"
                        + " with a digit; __name__ not allowed)",
        fieldPath = ".labels")
@ValidationRule(
        value = "!has(self.step) || self.step.matches('[1-9]')",
        message = "step must be greater than zero",
        fieldPath = ".step")
@ValidationRule(
        value = "!has(self.timeout) || self.timeout.matches('[1-9]')",
        message = "timeout must be greater than zero",
        fieldPath = ".timeout")
public class PrometheusSpec {

    /**
     * An http(s) URL with a host and an optional path prefix; no user info, query or fragment
     * (credentials belong in {@code bearerTokenSecretRef}).
     */
    public static final String URL_PATTERN = "^https?://[^\\s/?#@]+(/[^\\s?#]*)?$";

    /** A Prometheus label name. */
    public static final String LABEL_NAME_PATTERN = "^[a-zA-Z_][a-zA-Z0-9_]*$";

    private static final String MATCHER =
            "\\s*[a-zA-Z_][a-zA-Z0-9_]*\\s*(=|!=|=~|!~)\\s*"
                    + "(\"([^\"\\\\]|\\\\.)*\"|'([^'\\\\]|\\\\.)*'|`[^`]*`)\\s*";

    /**
     * PromQL label matchers separated by commas, with or without the surrounding braces, for
     * example {@code {namespace="llm",job=~"vllm-.*"}}.
     */
    public static final String SELECTOR_PATTERN =
            "^\\s*(\\{("
                    + MATCHER
                    + "(,"
                    + MATCHER
                    + ")*,?)?\\s*\\}|"
                    + MATCHER
                    + "(,"
                    + MATCHER
                    + ")*)\\s*$";

    /** Default timeout of each HTTP request to Prometheus. */
    public static final String DEFAULT_TIMEOUT = "30s";

    @JsonPropertyDescription(
            "Base URL of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090 or"
                    + " https://thanos.example/prometheus (a path prefix is kept; /api/v1/... is"
                    + " appended). No user info, query or fragment.")
    @Required
    @Size(min = 1, max = 2048)
    private String url;

    @JsonPropertyDescription(
            "Secret key holding a bearer token sent to Prometheus as 'Authorization: Bearer"
                    + " <token>'. Read by the operator when a stage ends; never copied into"
                    + " status, ConfigMaps, Events or logs. A missing Secret or key leaves the run"
                    + " running and sets ServerMetricsCollected=False.")
    private SecretKeyRef bearerTokenSecretRef;

    @JsonPropertyDescription(
            "PromQL label matchers picking the model server's series, with or without braces,"
                    + " e.g. {namespace=\"llm\",service=\"vllm\"} or job=~\"vllm-.*\". Operators"
                    + " =, !=, =~, !~; no metric name and no __name__ (the metric names come from"
                    + " the backend's catalog).")
    @Size(min = 1, max = 1024)
    private String selector;

    @JsonPropertyDescription(
            "Extra equality matchers (label name to value), added to selector, e.g."
                    + " {namespace: llm}.")
    @Size(max = 32)
    private Map<String, @Size(max = 1024) String> labels;

    @JsonPropertyDescription("Shortcut for the matcher job=\"<job>\".")
    @Size(min = 1, max = 256)
    @Pattern("\\S")
    private String job;

    @JsonPropertyDescription(
            "Label that tells replicas apart, for the per-replica breakdown; default: pod when a"
                    + " series has it, else instance.")
    @Size(min = 1, max = 128)
    @Pattern(LABEL_NAME_PATTERN)
    private String replicaLabel;

    @JsonPropertyDescription(
            "Query resolution within a stage window; default: the scrape interval Prometheus"
                    + " reports for the matching targets (15s when it reports none).")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String step;

    @JsonPropertyDescription("Timeout of each HTTP request to Prometheus.")
    @Default(DEFAULT_TIMEOUT)
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String timeout = DEFAULT_TIMEOUT;

    public String getUrl() {
        return url;
    }

    public void setUrl(String url) {
        this.url = url;
    }

    public SecretKeyRef getBearerTokenSecretRef() {
        return bearerTokenSecretRef;
    }

    public void setBearerTokenSecretRef(SecretKeyRef bearerTokenSecretRef) {
        this.bearerTokenSecretRef = bearerTokenSecretRef;
    }

    public String getSelector() {
        return selector;
    }

    public void setSelector(String selector) {
        this.selector = selector;
    }

    public Map<String, String> getLabels() {
        return labels;
    }

    public void setLabels(Map<String, String> labels) {
        this.labels = labels;
    }

    public String getJob() {
        return job;
    }

    public void setJob(String job) {
        this.job = job;
    }

    public String getReplicaLabel() {
        return replicaLabel;
    }

    public void setReplicaLabel(String replicaLabel) {
        this.replicaLabel = replicaLabel;
    }

    public String getStep() {
        return step;
    }

    public void setStep(String step) {
        this.step = step;
    }

    public String getTimeout() {
        return timeout;
    }

    public void setTimeout(String timeout) {
        this.timeout = timeout;
    }
}
