package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.Objects;

/**
 * A rate stage whose rate ramps from {@code startRate} to the stage's {@code requestRate} over the
 * stage (vLLM's {@code --ramp-up-strategy}, {@code --ramp-up-start-rps}, {@code
 * --ramp-up-end-rps}).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.strategy) || self.strategy != 'exponential' || self.startRate > 0.0",
        message = "an exponential ramp needs startRate > 0",
        fieldPath = ".startRate")
public class RampUpSpec {

    @JsonPropertyDescription(
            "linear (default): the rate rises evenly; exponential: it grows by the same factor"
                    + " each second (startRate > 0).")
    @Default("linear")
    private RampStrategy strategy = RampStrategy.LINEAR;

    @JsonPropertyDescription(
            "Requests per second across all runner pods at the stage's start (at most the stage's"
                    + " requestRate, where the ramp ends).")
    @Required
    @Min(0)
    @Max(StageSpec.MAX_REQUEST_RATE)
    private Double startRate;

    /** How the rate moves from the start to the end rate. */
    public enum RampStrategy {
        @com.fasterxml.jackson.annotation.JsonProperty("linear")
        LINEAR,
        @com.fasterxml.jackson.annotation.JsonProperty("exponential")
        EXPONENTIAL;

        /** The value as written in YAML. */
        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public RampStrategy getStrategy() {
        return strategy;
    }

    public void setStrategy(RampStrategy strategy) {
        this.strategy = strategy;
    }

    public Double getStartRate() {
        return startRate;
    }

    public void setStartRate(Double startRate) {
        this.startRate = startRate;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RampUpSpec that
                && strategy == that.strategy
                && Objects.equals(startRate, that.startRate);
    }

    @Override
    public int hashCode() {
        return Objects.hash(strategy, startRate);
    }
}
