package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * How load is applied: a list of stages, or a request-rate sweep with a shared size. A plain
 * Jackson object with Java defaults: the runner's {@code --config} YAML reads it without
 * Kubernetes.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.requestRates) || has(self.numPrompts) || has(self.duration)",
        message =
                "requestRates needs numPrompts or duration (shared by every rate; with both, each"
                        + " stage ends at whichever comes first)",
        fieldPath = ".requestRates",
        reason = "FieldValueRequired")
@ValidationRule(
        value = "!has(self.stages) || (!has(self.numPrompts) && !has(self.duration))",
        message =
                "numPrompts and duration at load level apply only to requestRates; with stages set"
                        + " them on each stage",
        fieldPath = ".stages",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "!has(self.requestRates) || self.requestRates.all(r, r > 0.0)",
        message = "every entry of requestRates must be greater than 0",
        fieldPath = ".requestRates")
@ValidationRule(
        value = "!has(self.burstiness) || self.burstiness == 1.0 || self.arrival == 'gamma'",
        message = "burstiness other than 1 needs arrival gamma",
        fieldPath = ".burstiness")
@ValidationRule(
        value = "!has(self.duration) || self.duration.matches('[1-9]')",
        message = "duration must be greater than zero",
        fieldPath = ".duration")
@ValidationRule(
        value =
                "!has(self.repeats) || self.repeats * (has(self.stages) ? size(self.stages)"
                        + " : has(self.requestRates) ? size(self.requestRates) : 1) <= 50",
        message =
                "repeats times the stages (or requestRates) must be at most 50: each repeat of a"
                        + " stage is a profile of its own",
        fieldPath = ".repeats")
@ValidationRule(
        value = "!has(self.requestTimeout) || self.requestTimeout.matches('[1-9]')",
        message = "requestTimeout must be greater than zero",
        fieldPath = ".requestTimeout")
public class LoadSpec {

    /** Most warm-up requests accepted (the schema's bound). */
    public static final int MAX_WARMUP_REQUESTS = 100_000;

    /** Most stages (or sweep rates) in one run; each stage becomes one profile. */
    public static final int MAX_STAGES = 50;

    @JsonPropertyDescription(
            "Load stages, run in order, each starting on a barrier after cooldown. Each stage sets"
                    + " exactly one of requestRate or concurrency and at least one of numPrompts"
                    + " or duration.")
    @Size(min = 1, max = MAX_STAGES)
    private List<StageSpec> stages;

    @JsonPropertyDescription(
            "Shorthand for a rate sweep: one stage per rate (requests/s, > 0), each with the"
                    + " load-level numPrompts and/or duration.")
    @Size(min = 1, max = MAX_STAGES)
    private List<Double> requestRates;

    @JsonPropertyDescription("With requestRates: requests per rate.")
    @Min(1)
    @Max(StageSpec.MAX_PROMPTS)
    private Integer numPrompts;

    @JsonPropertyDescription("With requestRates: how long each rate runs, e.g. 60s.")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String duration;

    @JsonPropertyDescription(
            "Runs the whole list of stages this many times, interleaved (stage 1, 2, 3, then 1,"
                    + " 2, 3 again), each repeat a profile of its own, so that a comparison can"
                    + " judge every figure against the run-to-run noise (compare and"
                    + " spec.baseline test the repeats' values, and say inconclusive when the"
                    + " noise hides a change of the threshold's size). Default 1.")
    @Min(1)
    @Max(MAX_STAGES)
    private Integer repeats;

    @JsonPropertyDescription(
            "Arrival process of rate stages: poisson (exponential gaps), constant (equal gaps) or"
                    + " gamma (shape burstiness).")
    @Default("poisson")
    private ArrivalProcess arrival = ArrivalProcess.POISSON;

    @JsonPropertyDescription(
            "Gamma shape for arrival gamma: < 1 is burstier than Poisson, > 1 more regular, 1 equals"
                    + " Poisson.")
    @Default("1.0")
    @Min(value = 0, inclusive = false)
    @Max(1000)
    private Double burstiness = 1.0;

    @JsonPropertyDescription(
            "Cap on requests in flight across all runner pods in rate stages; requests due while"
                    + " at the cap wait and their delay shows as schedule lag. Unset: no cap.")
    @Min(1)
    @Max(StageSpec.MAX_CONCURRENCY)
    private Integer maxConcurrency;

    @JsonPropertyDescription(
            "Requests sent before the first stage's start barrier, excluded from results; split"
                    + " across the runner pods like a stage's requests (parallelism 3 and 10 warm-up"
                    + " requests: 4, 3 and 3).")
    @Default("0")
    @Min(0)
    @Max(MAX_WARMUP_REQUESTS)
    private Integer warmupRequests = 0;

    @JsonPropertyDescription(
            "Pause after each stage's last response before the next stage starts, so queues"
                    + " drain.")
    @Default("5s")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String cooldown = "5s";

    @JsonPropertyDescription(
            "Per-request timeout from send to last byte; a request exceeding it counts as a"
                    + " timeout error.")
    @Default("5m")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String requestTimeout = "5m";

    @JsonPropertyDescription(
            "Most failed requests a stage may have, as a share of its finished requests (0-1)."
                    + " Above it the stage did not deliver its load: LoadDelivered is False,"
                    + " naming the failure classes.")
    @Default("0.1")
    @Min(0)
    @Max(1)
    private Double maxFailureRatio = DEFAULT_MAX_FAILURE_RATIO;

    /** Default of {@code maxFailureRatio}. */
    public static final double DEFAULT_MAX_FAILURE_RATIO = 0.1;

    /**
     * The stages to run: {@code stages} as given, or one open-loop stage per entry of {@code
     * requestRates} with the shared numPrompts and duration.
     *
     * @return the stages in order; empty when neither is set
     */
    @JsonIgnore
    public List<StageSpec> resolvedStages() {
        if (stages != null) {
            return repeated(stages);
        }
        List<StageSpec> expanded = new ArrayList<>();
        if (requestRates != null) {
            for (Double rate : requestRates) {
                StageSpec stage = new StageSpec();
                stage.setRequestRate(rate);
                stage.setNumPrompts(numPrompts);
                stage.setDuration(duration);
                expanded.add(stage);
            }
        }
        return repeated(expanded);
    }

    /**
     * How many times the stages run ({@code repeats}, default 1).
     *
     * @return at least 1
     */
    @JsonIgnore
    public int repeatCount() {
        return repeats == null ? 1 : Math.max(1, repeats);
    }

    /** The stages {@link #repeatCount()} times over, in order each time (interleaved repeats). */
    private List<StageSpec> repeated(List<StageSpec> once) {
        List<StageSpec> all = new ArrayList<>();
        for (int r = 0; r < repeatCount(); r++) {
            all.addAll(once);
        }
        return List.copyOf(all);
    }

    /**
     * The stages of a load whose arrivals a trace sets: its (concurrency) stages, or one replay of
     * the trace bounded by the load's numPrompts and duration when set.
     *
     * @return the stages in order
     */
    public List<StageSpec> replayStages() {
        if (stages != null) {
            return repeated(stages);
        }
        StageSpec replay = new StageSpec();
        replay.setNumPrompts(numPrompts);
        replay.setDuration(duration);
        return repeated(List.of(replay));
    }

    /**
     * The stages of a capacity search so far: one open-loop stage per probed rate, each of the
     * shared numPrompts and duration (the probe size).
     *
     * @param rates the rates decided so far, in order
     * @return one stage per rate
     */
    public List<StageSpec> probeStages(List<Double> rates) {
        return probeStages(rates, List.of());
    }

    /**
     * The stages of a capacity search so far, each probe of its size: {@code size} times the shared
     * numPrompts and duration (a probe too short to judge runs again larger).
     *
     * @param rates the rates decided so far, in order
     * @param sizes each probe's size at the same index; a missing or null entry is 1
     * @return one stage per rate
     */
    public List<StageSpec> probeStages(List<Double> rates, List<Integer> sizes) {
        List<StageSpec> probes = new ArrayList<>();
        for (int i = 0; i < rates.size(); i++) {
            int size = i < sizes.size() && sizes.get(i) != null ? Math.max(1, sizes.get(i)) : 1;
            StageSpec stage = new StageSpec();
            stage.setRequestRate(rates.get(i));
            stage.setNumPrompts(
                    numPrompts == null
                            ? null
                            : (int) Math.min((long) numPrompts * size, StageSpec.MAX_PROMPTS));
            stage.setDuration(
                    duration == null || size == 1
                            ? duration
                            : Durations.format(Durations.parse(duration).multipliedBy(size)));
            probes.add(stage);
        }
        return List.copyOf(probes);
    }

    /**
     * The cool-down, parsed.
     *
     * @return the cool-down between stages
     */
    @JsonIgnore
    public Duration cooldownValue() {
        return cooldown == null ? Duration.ZERO : Durations.parse(cooldown);
    }

    /**
     * The request timeout, parsed.
     *
     * @return the per-request timeout
     */
    @JsonIgnore
    public Duration requestTimeoutValue() {
        return Durations.parse(requestTimeout == null ? "5m" : requestTimeout);
    }

    public Integer getRepeats() {
        return repeats;
    }

    public void setRepeats(Integer repeats) {
        this.repeats = repeats;
    }

    public List<StageSpec> getStages() {
        return stages;
    }

    public void setStages(List<StageSpec> stages) {
        this.stages = stages;
    }

    public List<Double> getRequestRates() {
        return requestRates;
    }

    public void setRequestRates(List<Double> requestRates) {
        this.requestRates = requestRates;
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

    public ArrivalProcess getArrival() {
        return arrival;
    }

    public void setArrival(ArrivalProcess arrival) {
        this.arrival = arrival;
    }

    public Double getBurstiness() {
        return burstiness;
    }

    public void setBurstiness(Double burstiness) {
        this.burstiness = burstiness;
    }

    public Integer getMaxConcurrency() {
        return maxConcurrency;
    }

    public void setMaxConcurrency(Integer maxConcurrency) {
        this.maxConcurrency = maxConcurrency;
    }

    public Integer getWarmupRequests() {
        return warmupRequests;
    }

    public void setWarmupRequests(Integer warmupRequests) {
        this.warmupRequests = warmupRequests;
    }

    public String getCooldown() {
        return cooldown;
    }

    public void setCooldown(String cooldown) {
        this.cooldown = cooldown;
    }

    public String getRequestTimeout() {
        return requestTimeout;
    }

    public void setRequestTimeout(String requestTimeout) {
        this.requestTimeout = requestTimeout;
    }

    public Double getMaxFailureRatio() {
        return maxFailureRatio;
    }

    public void setMaxFailureRatio(Double maxFailureRatio) {
        this.maxFailureRatio = maxFailureRatio;
    }
}
