package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.time.Duration;
import java.util.Objects;

/**
 * One load stage: an open-loop request rate or a closed-loop concurrency, ending after a number of
 * prompts or a duration (whichever comes first when both are set).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "has(self.requestRate) != has(self.concurrency)",
        message = "exactly one of requestRate or concurrency must be set",
        reason = "FieldValueInvalid")
@ValidationRule(
        value = "has(self.numPrompts) || has(self.duration)",
        message =
                "at least one of numPrompts or duration must be set (with both, the stage ends at"
                        + " whichever comes first)",
        reason = "FieldValueRequired")
@ValidationRule(
        value = "!has(self.rampUp) || has(self.requestRate)",
        message = "rampUp ramps a requestRate (its end rate); a concurrency stage has none",
        fieldPath = ".rampUp")
@ValidationRule(
        value =
                "!has(self.rampUp) || !has(self.requestRate) || self.rampUp.startRate <="
                        + " self.requestRate",
        message = "rampUp.startRate must be at most requestRate (a ramp rises to it)",
        fieldPath = ".rampUp.startRate")
@ValidationRule(
        value = "!has(self.rampUp) || self.rampUp.startRate > 0.0 || has(self.duration)",
        message =
                "a ramp from 0 needs the stage's duration (over its numPrompts alone the first"
                        + " request would never be followed)",
        fieldPath = ".rampUp.startRate")
@ValidationRule(
        value = "!has(self.duration) || self.duration.matches('[1-9]')",
        message = "duration must be greater than zero",
        fieldPath = ".duration")
public class StageSpec {

    /** Highest request rate accepted, requests per second across all runner pods. */
    public static final double MAX_REQUEST_RATE = 1_000_000;

    /** Longest a rate stage's schedule may span, seconds (7 days). */
    public static final double MAX_SCHEDULE_SECONDS = 7 * 86_400;

    /** Highest concurrency accepted across all runner pods. */
    public static final int MAX_CONCURRENCY = 100_000;

    /** Most prompts one stage may send. */
    public static final int MAX_PROMPTS = 10_000_000;

    @JsonPropertyDescription(
            "Open loop: requests per second across all runner pods, > 0. Send times follow"
                    + " load.arrival. For vLLM's 'inf' (everything at once) use concurrency"
                    + " instead; profiles of concurrency stages report request_rate \"inf\".")
    @Min(value = 0, inclusive = false)
    @Max(MAX_REQUEST_RATE)
    private Double requestRate;

    @JsonPropertyDescription(
            "Closed loop: this many requests in flight at all times across all runner pods.")
    @Min(1)
    @Max(MAX_CONCURRENCY)
    private Integer concurrency;

    @JsonPropertyDescription("Number of requests to send in this stage.")
    @Min(1)
    @Max(MAX_PROMPTS)
    private Integer numPrompts;

    @JsonPropertyDescription("How long the stage sends requests, e.g. 60s or 5m.")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String duration;

    @JsonPropertyDescription(
            "Ramp the rate from rampUp.startRate to requestRate over the stage (its duration, else"
                    + " its numPrompts requests, as vLLM does); the stage's mean rate is the"
                    + " ramp's. The profile carries config.ramp_up and metrics.ramp_up_windows (10"
                    + " equal time windows: the ramp's, scheduled and achieved rate, requests,"
                    + " TTFT and E2E p50/p99), so a knee shows inside one stage. With several"
                    + " runner pods each ramps its share, and windows need the stage's duration.")
    private RampUpSpec rampUp;

    public StageSpec() {}

    public RampUpSpec getRampUp() {
        return rampUp;
    }

    public void setRampUp(RampUpSpec rampUp) {
        this.rampUp = rampUp;
    }

    /**
     * An open-loop stage.
     *
     * @param requestRate requests per second
     * @param numPrompts requests to send, or {@code null}
     * @param duration how long to send, or {@code null}
     * @return the stage
     */
    public static StageSpec rate(double requestRate, Integer numPrompts, String duration) {
        StageSpec stage = new StageSpec();
        stage.setRequestRate(requestRate);
        stage.setNumPrompts(numPrompts);
        stage.setDuration(duration);
        return stage;
    }

    /**
     * A closed-loop stage.
     *
     * @param concurrency requests in flight
     * @param numPrompts requests to send, or {@code null}
     * @param duration how long to send, or {@code null}
     * @return the stage
     */
    public static StageSpec concurrency(int concurrency, Integer numPrompts, String duration) {
        StageSpec stage = new StageSpec();
        stage.setConcurrency(concurrency);
        stage.setNumPrompts(numPrompts);
        stage.setDuration(duration);
        return stage;
    }

    /**
     * The stage duration, parsed.
     *
     * @return the duration, or {@code null} when the stage is bounded only by numPrompts
     */
    @JsonIgnore
    public Duration durationValue() {
        return duration == null ? null : Durations.parse(duration);
    }

    /**
     * Whether this is an open-loop (request rate) stage.
     *
     * @return {@code true} when requestRate is set
     */
    @JsonIgnore
    public boolean isOpenLoop() {
        return requestRate != null;
    }

    public Double getRequestRate() {
        return requestRate;
    }

    public void setRequestRate(Double requestRate) {
        this.requestRate = requestRate;
    }

    public Integer getConcurrency() {
        return concurrency;
    }

    public void setConcurrency(Integer concurrency) {
        this.concurrency = concurrency;
    }

    public Integer getNumPrompts() {
        return numPrompts;
    }

    public void setNumPrompts(Integer numPrompts) {
        this.numPrompts = numPrompts;
    }

    public String getDuration() {
        return duration;
    }

    public void setDuration(String duration) {
        this.duration = duration;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StageSpec that
                && Objects.equals(requestRate, that.requestRate)
                && Objects.equals(concurrency, that.concurrency)
                && Objects.equals(numPrompts, that.numPrompts)
                && Objects.equals(duration, that.duration)
                && Objects.equals(rampUp, that.rampUp);
    }

    @Override
    public int hashCode() {
        return Objects.hash(requestRate, concurrency, numPrompts, duration, rampUp);
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        text.append(
                requestRate != null ? "requestRate=" + requestRate : "concurrency=" + concurrency);
        if (numPrompts != null) {
            text.append(", numPrompts=").append(numPrompts);
        }
        if (duration != null) {
            text.append(", duration=").append(duration);
        }
        if (rampUp != null) {
            text.append(", rampUp=")
                    .append(
                            rampUp.getStrategy() == null
                                    ? "linear"
                                    : rampUp.getStrategy().wireName())
                    .append(" from ")
                    .append(rampUp.getStartRate());
        }
        return text.toString();
    }
}
