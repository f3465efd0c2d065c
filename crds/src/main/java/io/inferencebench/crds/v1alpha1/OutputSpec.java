package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;

/** Where the profiles are written besides status. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.formats) || self.formats.exists(f, f == 'lpg')",
        message =
                "formats must include lpg (the profiles that status, compare and baselines read);"
                        + " for a Benchmark Report beside them give [lpg, br0.2]",
        fieldPath = ".formats")
@ValidationRule(
        value = "!has(self.formats) || self.formats.all(f, self.formats.exists_one(g, g == f))",
        message = "formats lists a format twice",
        fieldPath = ".formats")
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

    @JsonPropertyDescription(
            "Dialect of the LPG profiles in status.profiles and the output ConfigMaps: seed (the"
                    + " default: metrics.throughput in completed requests/s, server-metric"
                    + " statistics as strings) or final (LPG's last code, which its readers"
                    + " expect: throughput in output tokens/s, throughput_rps in requests/s,"
                    + " statistics as numbers). Both carry every other key of the other"
                    + " (num_prompts_attempted, the error counters, config.num_models, *_TTFT in"
                    + " seconds, ...).")
    @Default("seed")
    private LpgDialect lpgDialect = LpgDialect.SEED;

    @JsonPropertyDescription(
            "Files written per stage into the output ConfigMaps: lpg (the profile; always) and"
                    + " br0.2 (a Benchmark Report v0.2 beside it, key <profile key without"
                    + " .json>.br0.2.yaml, as llm-d-benchmark and inference-perf read it)."
                    + " Default: [lpg].")
    @Size(min = 1, max = 2)
    private List<OutputFormat> formats;

    public LpgDialect getLpgDialect() {
        return lpgDialect;
    }

    public void setLpgDialect(LpgDialect lpgDialect) {
        this.lpgDialect = lpgDialect;
    }

    public List<OutputFormat> getFormats() {
        return formats;
    }

    public void setFormats(List<OutputFormat> formats) {
        this.formats = formats;
    }

    /** Whether a Benchmark Report v0.2 is written beside each profile. */
    @JsonIgnore
    public boolean benchmarkReport() {
        return formats != null && formats.contains(OutputFormat.BR_0_2);
    }

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
