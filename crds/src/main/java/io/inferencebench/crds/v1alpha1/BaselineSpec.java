package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/**
 * What a run is compared with when it finishes: an earlier BenchmarkRun, several earlier runs of
 * one unchanged target (their spread is the noise floor), or a ConfigMap of LPG profiles (one key
 * per stage, as in a run's output ConfigMap). Exactly one is set.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value =
                "[has(self.runName), has(self.runNames), has(self.configMapRef)].filter(x, x).size()"
                        + " == 1",
        message = "exactly one of runName, runNames or configMapRef must be set",
        reason = "FieldValueInvalid")
public class BaselineSpec {

    @JsonPropertyDescription(
            "Name of a finished BenchmarkRun in the same namespace whose profiles are the"
                    + " baseline.")
    @Size(min = 1, max = Names.MAX_RUN_NAME_LENGTH)
    @Pattern(Names.DNS_SUBDOMAIN)
    private String runName;

    /** The most runs {@code runNames} may pool. */
    public static final int MAX_RUN_NAMES = 30;

    @JsonPropertyDescription(
            "Names of several finished BenchmarkRuns in the same namespace of one unchanged"
                    + " target, e.g. a BenchmarkSchedule's last runs: their profiles are pooled,"
                    + " each run's stages counting as repeats of the same stages, so the spread"
                    + " between them is the noise floor a change must beat (a single run is then"
                    + " judged by a prediction interval over that spread). 2 to 30 names.")
    @Size(min = 2, max = MAX_RUN_NAMES)
    @ValidationRule(
            value = "self.all(n, self.exists_one(m, m == n))",
            message = "names a run twice",
            reason = "FieldValueInvalid")
    private List<
                    @Size(min = 1, max = Names.MAX_RUN_NAME_LENGTH) @Pattern(Names.DNS_SUBDOMAIN)
                    String>
            runNames;

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

    /** A baseline pooling several earlier runs. */
    public static BaselineSpec runs(List<String> names) {
        BaselineSpec spec = new BaselineSpec();
        spec.setRunNames(List.copyOf(names));
        return spec;
    }

    public List<String> getRunNames() {
        return runNames;
    }

    public void setRunNames(List<String> runNames) {
        this.runNames = runNames;
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
                && java.util.Objects.equals(runNames, that.runNames)
                && java.util.Objects.equals(configMapRef, that.configMapRef);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(runName, runNames, configMapRef);
    }
}
