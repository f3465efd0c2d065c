package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/**
 * The model server's Prometheus metrics during each stage: scraped directly from every ready
 * endpoint, or read from a Prometheus server when {@link #getPrometheus() prometheus} is set.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.interval) || self.interval.matches('[1-9]')",
        message = "interval must be greater than zero",
        fieldPath = ".interval")
@ValidationRule(
        value = "!has(self.prometheus) || !has(self.enabled) || self.enabled",
        message = "prometheus needs enabled: true (enabled: false turns server metrics off)",
        fieldPath = ".prometheus")
public class MetricsSpec {

    /** A Prometheus metric name, optionally ending in {@code *} to match a prefix. */
    public static final String METRIC_NAME_PATTERN = "^[a-zA-Z_:][a-zA-Z0-9_:]*[*]?$";

    @JsonPropertyDescription("Scrape the server's metrics and add server_metrics to the profiles.")
    @Default("true")
    private Boolean enabled = Boolean.TRUE;

    @JsonPropertyDescription("HTTP path of the metrics endpoint.")
    @Default("/metrics")
    @Size(min = 1, max = 1024)
    @Pattern("^/[^\\s?#]*$")
    private String path = "/metrics";

    @JsonPropertyDescription(
            "Port of the metrics endpoint on each server pod; default: the target port.")
    @Min(1)
    @Max(65535)
    private Integer port;

    @JsonPropertyDescription(
            "Scrape interval within a stage; one extra scrape is taken at every stage start and"
                    + " end.")
    @Default("5s")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String interval = "5s";

    @JsonPropertyDescription(
            "Extra metric names to collect beyond the backend's catalog; a trailing * matches a"
                    + " prefix.")
    @Size(max = 256)
    private List<@Size(min = 1, max = 256) @Pattern(METRIC_NAME_PATTERN) String> include;

    @JsonPropertyDescription(
            "Metric names to drop from the catalog; a trailing * matches a prefix.")
    @Size(max = 256)
    private List<@Size(min = 1, max = 256) @Pattern(METRIC_NAME_PATTERN) String> exclude;

    @JsonPropertyDescription(
            "Read the server's metrics from this Prometheus server's HTTP API for each stage"
                    + " window instead of scraping the server pods (path, port and interval are"
                    + " then unused). For servers that a Prometheus already scrapes.")
    private PrometheusSpec prometheus;

    public Boolean getEnabled() {
        return enabled;
    }

    public void setEnabled(Boolean enabled) {
        this.enabled = enabled;
    }

    public String getPath() {
        return path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    public Integer getPort() {
        return port;
    }

    public void setPort(Integer port) {
        this.port = port;
    }

    public String getInterval() {
        return interval;
    }

    public void setInterval(String interval) {
        this.interval = interval;
    }

    public List<String> getInclude() {
        return include;
    }

    public void setInclude(List<String> include) {
        this.include = include;
    }

    public List<String> getExclude() {
        return exclude;
    }

    public void setExclude(List<String> exclude) {
        this.exclude = exclude;
    }

    public PrometheusSpec getPrometheus() {
        return prometheus;
    }

    public void setPrometheus(PrometheusSpec prometheus) {
        this.prometheus = prometheus;
    }
}
