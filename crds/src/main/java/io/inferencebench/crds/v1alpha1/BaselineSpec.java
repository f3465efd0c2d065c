package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * What a run is compared with when it finishes: an earlier BenchmarkRun or a ConfigMap of LPG
 * profiles (one key per stage, as in a run's output ConfigMap). Exactly one is set.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "[has(self.runName), has(self.configMapRef)].filter(x, x).size() == 1",
        message = "exactly one of runName or configMapRef must be set",
        reason = "FieldValueInvalid")
public class BaselineSpec {

    @JsonPropertyDescription(
            "Name of a finished BenchmarkRun in the same namespace whose profiles are the"
                    + " baseline.")
    @Size(min = 1, max = Names.MAX_RUN_NAME_LENGTH)
    @Pattern(Names.DNS_SUBDOMAIN)
    private String runName;

    @JsonPropertyDescription(
            "A ConfigMap in the same namespace whose keys each hold one LPG profile (JSON) of the"
                    + " baseline, e.g. a copy of an earlier run's output ConfigMap.")
    private ConfigMapRef configMapRef;

    public BaselineSpec() {}

    /** A baseline naming an earlier run. */
    public static BaselineSpec run(String name) {
        BaselineSpec spec = new BaselineSpec();
        spec.setRunName(name);
        return spec;
    }

    public String getRunName() {
        return runName;
    }

    public void setRunName(String runName) {
        this.runName = runName;
    }

    public ConfigMapRef getConfigMapRef() {
        return configMapRef;
    }

    public void setConfigMapRef(ConfigMapRef configMapRef) {
        this.configMapRef = configMapRef;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BaselineSpec that
                && java.util.Objects.equals(runName, that.runName)
                && java.util.Objects.equals(configMapRef, that.configMapRef);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(runName, configMapRef);
    }
}
