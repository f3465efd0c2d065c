package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * A capacity search under {@code spec.slo}: the operator probes request rates one stage at a time,
 * growing from {@code minRate} until a rate misses the SLO, then bisecting until the highest
 * passing and the lowest failing rate are within {@code precision}. Each probe is a stage of the
 * size {@code spec.load.numPrompts} / {@code spec.load.duration}; its rate is decided after the
 * previous probe's results are merged.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "self.maxRate > self.minRate",
        message = "maxRate must be greater than minRate",
        fieldPath = ".maxRate",
        reason = "FieldValueInvalid")
public class SearchSpec {

    /** Default relative precision of the answer. */
    public static final double DEFAULT_PRECISION = 0.05;

    /** Default extra probes of each edge of the final bracket. */
    public static final int DEFAULT_CONFIRMATIONS = 1;

    /** Default and largest probe budget (each probe is a stage). */
    public static final int DEFAULT_MAX_PROBES = 20;

    @JsonPropertyDescription("First rate probed, requests/s (> 0).")
    @Required
    @Min(value = 0, inclusive = false)
    @Max(StageSpec.MAX_REQUEST_RATE)
    private Double minRate;

    @JsonPropertyDescription("Highest rate probed, requests/s (> minRate).")
    @Required
    @Min(value = 0, inclusive = false)
    @Max(StageSpec.MAX_REQUEST_RATE)
    private Double maxRate;

    @JsonPropertyDescription(
            "Relative width at which the search stops: (failing - passing) / passing, in (0, 1).")
    @Default("0.05")
    @Min(value = 0, inclusive = false)
    @Max(value = 1, inclusive = false)
    private Double precision = DEFAULT_PRECISION;

    @JsonPropertyDescription(
            "Extra probes of each edge of the final bracket, judged on the pooled requests: near"
                    + " the knee one probe can pass by luck, and a flipped edge moves the bracket."
                    + " 0 trusts single probes.")
    @Default("1")
    @Min(0)
    @Max(5)
    private Integer confirmations = DEFAULT_CONFIRMATIONS;

    @JsonPropertyDescription(
            "Most probes (stages) the search runs; it stops with what it has when they run out.")
    @Default("20")
    @Min(1)
    @Max(LoadSpec.MAX_STAGES)
    private Integer maxProbes = DEFAULT_MAX_PROBES;

    public Double getMinRate() {
        return minRate;
    }

    public void setMinRate(Double minRate) {
        this.minRate = minRate;
    }

    public Double getMaxRate() {
        return maxRate;
    }

    public void setMaxRate(Double maxRate) {
        this.maxRate = maxRate;
    }

    public Double getPrecision() {
        return precision;
    }

    public void setPrecision(Double precision) {
        this.precision = precision;
    }

    public Integer getConfirmations() {
        return confirmations;
    }

    public void setConfirmations(Integer confirmations) {
        this.confirmations = confirmations;
    }

    public Integer getMaxProbes() {
        return maxProbes;
    }

    public void setMaxProbes(Integer maxProbes) {
        this.maxProbes = maxProbes;
    }
}
