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

/** Scraping the model server's Prometheus metrics during each stage. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.interval) || self.interval.matches('[1-9]')",
        message = "interval must be greater than zero",
        fieldPath = ".interval")
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
}
