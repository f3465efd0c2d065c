package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.IntOrString;
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
@ValidationRule(
        value =
                "!has(self.port) || type(self.port) != int"
                        + " || (self.port >= 1 && self.port <= 65535)",
        message = "port number must be from 1 to 65535",
        fieldPath = ".port")
@ValidationRule(
        value =
                "!has(self.port) || type(self.port) != string || (self.port.size() <= 15"
                        + " && self.port.matches('"
                        + MetricsSpec.PORT_NAME_PATTERN
                        + "') && self.port.matches('[a-z]') && !self.port.contains('--'))",
        message =
                "port name must be a Kubernetes port name (IANA_SVC_NAME): at most 15 lowercase"
                        + " letters, digits and '-', with at least one letter, starting and ending"
                        + " with a letter or digit, no '--'; e.g. metrics",
        fieldPath = ".port")
public class MetricsSpec {

    /**
     * The characters and shape of a Kubernetes port name (IANA_SVC_NAME); a name must also be at
     * most 15 characters long, hold a letter and no {@code --}.
     */
    public static final String PORT_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

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
            "Port of the metrics endpoint on each server pod, by number (1-65535) or by name: a"
                    + " port name of the target Service (as in its EndpointSlices), else a"
                    + " container port name of the server pod; default: the target port.")
    private IntOrString port;

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

    /**
     * The metrics port: a number, a port name, or {@code null} for the target port.
     *
     * @return the port
     */
    public IntOrString getPort() {
        return port;
    }

    public void setPort(IntOrString port) {
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
