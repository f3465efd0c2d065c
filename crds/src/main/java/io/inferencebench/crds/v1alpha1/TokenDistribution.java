package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;

/** A distribution of token counts, used for synthetic (random) prompts and output lengths. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "self.type != 'fixed' || has(self.mean)",
        message = "type fixed needs mean (the token count of every request)",
        fieldPath = ".mean",
        reason = "FieldValueRequired")
@ValidationRule(
        value = "self.type != 'uniform' || (has(self.min) && has(self.max))",
        message = "type uniform needs min and max",
        fieldPath = ".max",
        reason = "FieldValueRequired")
@ValidationRule(
        value = "self.type != 'normal' || (has(self.mean) && has(self.stddev))",
        message = "type normal needs mean and stddev",
        fieldPath = ".stddev",
        reason = "FieldValueRequired")
@ValidationRule(
        value = "!has(self.min) || !has(self.max) || self.min <= self.max",
        message = "min must not be greater than max",
        fieldPath = ".min")
public class TokenDistribution {

    /** Largest token count accepted anywhere in a distribution. */
    public static final int MAX_TOKENS = 1_000_000;

    @JsonPropertyDescription(
            "Shape: fixed (every request uses mean), uniform (integers in [min, max]) or normal"
                    + " (mean and stddev, rounded, clamped to [min, max] when set, and to at least"
                    + " 1).")
    @Default("fixed")
    private DistributionType type = DistributionType.FIXED;

    @JsonPropertyDescription("Mean token count; required for fixed and normal.")
    @Min(1)
    @Max(MAX_TOKENS)
    private Integer mean;

    @JsonPropertyDescription(
            "Smallest token count; required for uniform, optional lower clamp for normal.")
    @Min(1)
    @Max(MAX_TOKENS)
    private Integer min;

    @JsonPropertyDescription(
            "Largest token count; required for uniform, optional upper clamp for normal.")
    @Min(1)
    @Max(MAX_TOKENS)
    private Integer max;

    @JsonPropertyDescription("Standard deviation in tokens; required for normal.")
    @Min(0)
    @Max(MAX_TOKENS)
    private Double stddev;

    public TokenDistribution() {}

    /**
     * A fixed length.
     *
     * @param tokens the token count of every request
     * @return the distribution
     */
    public static TokenDistribution fixed(int tokens) {
        TokenDistribution distribution = new TokenDistribution();
        distribution.setType(DistributionType.FIXED);
        distribution.setMean(tokens);
        return distribution;
    }

    /**
     * A uniform length.
     *
     * @param min smallest token count
     * @param max largest token count
     * @return the distribution
     */
    public static TokenDistribution uniform(int min, int max) {
        TokenDistribution distribution = new TokenDistribution();
        distribution.setType(DistributionType.UNIFORM);
        distribution.setMin(min);
        distribution.setMax(max);
        return distribution;
    }

    /**
     * A normal length.
     *
     * @param mean mean token count
     * @param stddev standard deviation
     * @return the distribution
     */
    public static TokenDistribution normal(int mean, double stddev) {
        TokenDistribution distribution = new TokenDistribution();
        distribution.setType(DistributionType.NORMAL);
        distribution.setMean(mean);
        distribution.setStddev(stddev);
        return distribution;
    }

    public DistributionType getType() {
        return type;
    }

    public void setType(DistributionType type) {
        this.type = type;
    }

    public Integer getMean() {
        return mean;
    }

    public void setMean(Integer mean) {
        this.mean = mean;
    }

    public Integer getMin() {
        return min;
    }

    public void setMin(Integer min) {
        this.min = min;
    }

    public Integer getMax() {
        return max;
    }

    public void setMax(Integer max) {
        this.max = max;
    }

    public Double getStddev() {
        return stddev;
    }

    public void setStddev(Double stddev) {
        this.stddev = stddev;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TokenDistribution that
                && type == that.type
                && Objects.equals(mean, that.mean)
                && Objects.equals(min, that.min)
                && Objects.equals(max, that.max)
                && Objects.equals(stddev, that.stddev);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, mean, min, max, stddev);
    }
}
