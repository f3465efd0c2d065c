package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Sampling parameters sent with every request. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SamplingSpec {

    @JsonPropertyDescription("Sampling temperature; 0 is greedy decoding.")
    @Default("0.0")
    @Min(0)
    @Max(2)
    private Double temperature = 0.0;

    @JsonPropertyDescription("Nucleus sampling probability mass (top_p), in (0, 1].")
    @Min(value = 0, inclusive = false)
    @Max(1)
    private Double topP;

    @JsonPropertyDescription("Top-k sampling (top_k); -1 disables it. Not every server honours it.")
    @Min(-1)
    @Max(1_000_000)
    private Integer topK;

    public Double getTemperature() {
        return temperature;
    }

    public void setTemperature(Double temperature) {
        this.temperature = temperature;
    }

    public Double getTopP() {
        return topP;
    }

    public void setTopP(Double topP) {
        this.topP = topP;
    }

    public Integer getTopK() {
        return topK;
    }

    public void setTopK(Integer topK) {
        this.topK = topK;
    }
}
