package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * Service-level objectives. A request is good when it succeeded and meets every objective set
 * (vLLM's goodput definition); a stage meets the SLO when its share of good requests is at least
 * {@code minAttainment}. The run's SloMet condition is True when every stage does.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "has(self.ttft) || has(self.tpot) || has(self.e2eLatency)",
        message = "at least one of ttft, tpot or e2eLatency must be set",
        reason = "FieldValueRequired")
public class SloSpec {

    @JsonPropertyDescription("Largest acceptable time to first token, e.g. 500ms.")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String ttft;

    @JsonPropertyDescription("Largest acceptable time per output token after the first, e.g. 50ms.")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String tpot;

    @JsonPropertyDescription("Largest acceptable end-to-end request latency, e.g. 10s.")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String e2eLatency;

    @JsonPropertyDescription("Share of requests (0-1] that must meet every objective set.")
    @Default("0.95")
    @Min(value = 0, inclusive = false)
    @Max(1)
    private Double minAttainment = 0.95;

    public String getTtft() {
        return ttft;
    }

    public void setTtft(String ttft) {
        this.ttft = ttft;
    }

    public String getTpot() {
        return tpot;
    }

    public void setTpot(String tpot) {
        this.tpot = tpot;
    }

    public String getE2eLatency() {
        return e2eLatency;
    }

    public void setE2eLatency(String e2eLatency) {
        this.e2eLatency = e2eLatency;
    }

    public Double getMinAttainment() {
        return minAttainment;
    }

    public void setMinAttainment(Double minAttainment) {
        this.minAttainment = minAttainment;
    }
}
