package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;

/** Where the profiles are written besides status. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class OutputSpec {

    @JsonPropertyDescription(
            "Name of the output ConfigMap (one key per stage, named like LPG files:"
                    + " <backend>-<rate>qps-<model>-<date>.json). Default: <run>-profile.")
    @Size(min = 1, max = 253)
    @Pattern(Names.DNS_SUBDOMAIN)
    private String configMapName;

    @JsonPropertyDescription(
            "Keep the output ConfigMap when the BenchmarkRun is deleted (it is then not owned by"
                    + " the run).")
    @Default("false")
    private Boolean retain = Boolean.FALSE;

    public String getConfigMapName() {
        return configMapName;
    }

    public void setConfigMapName(String configMapName) {
        this.configMapName = configMapName;
    }

    public Boolean getRetain() {
        return retain;
    }

    public void setRetain(Boolean retain) {
        this.retain = retain;
    }
}
