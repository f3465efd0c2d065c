package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;

/** A Service in the BenchmarkRun's namespace that fronts the model server. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ServiceTarget {

    @JsonPropertyDescription("Name of the Service, in the same namespace as the BenchmarkRun.")
    @Required
    @Size(min = 1, max = 63)
    @Pattern(Names.DNS_LABEL)
    private String name;

    @JsonPropertyDescription("Service port the model server's HTTP API listens on.")
    @Required
    @Min(1)
    @Max(65535)
    private Integer port;

    @JsonPropertyDescription("URL scheme of the API: http or https.")
    @Default("http")
    @Pattern("^https?$")
    private String scheme = "http";

    public ServiceTarget() {}

    public ServiceTarget(String name, int port) {
        this.name = name;
        this.port = port;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public Integer getPort() {
        return port;
    }

    public void setPort(Integer port) {
        this.port = port;
    }

    public String getScheme() {
        return scheme;
    }

    public void setScheme(String scheme) {
        this.scheme = scheme;
    }
}
