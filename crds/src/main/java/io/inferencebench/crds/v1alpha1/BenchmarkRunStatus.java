package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The observed state of a run. Written only by the operator. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BenchmarkRunStatus {

    @JsonPropertyDescription(
            "Pending, Initializing, Running, Aggregating, Succeeded, Failed or Cancelled.")
    private Phase phase;

    @JsonPropertyDescription("Human-readable explanation of the phase.")
    private String message;

    @JsonPropertyDescription("The metadata.generation this status describes.")
    private Long observedGeneration;

    @JsonPropertyDescription(
            "TargetReady, (with the operator's active-run cap) Queued, RunnersReady, Completed,"
                    + " ServerMetricsCollected, LoadDelivered, (with spec.slo) SloMet and (with"
                    + " spec.baseline) Regressed.")
    private List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription("When the first stage started (RFC 3339).")
    private String startTime;

    @JsonPropertyDescription("When the run reached a terminal phase (RFC 3339).")
    private String completionTime;

    @JsonPropertyDescription("The model requests are sent with (spec.target.model or discovered).")
    private String model;

    @JsonPropertyDescription(
            "Start instants (RFC 3339) the operator set at each stage barrier, in stage order.")
    private List<String> stageStartTimes;

    @JsonPropertyDescription(
            "With spec.workload.prefixCache: the state each stage started from, in stage order:"
                    + " cold (every ready endpoint reset just before its barrier), or undeclared"
                    + " followed by the endpoints that were not reset and why. With state warm,"
                    + " warm where every endpoint was reset; whether the first runner warmed them"
                    + " all before the barrier is in the stage's result.")
    private List<String> stagePrefixCache;

    @JsonPropertyDescription(
            "With spec.workload.prefixCache.state warm: the endpoints (base URLs, comma-separated)"
                    + " reset before each stage, in stage order, which the first runner pod warms"
                    + " with the workload's shared prefixes before the stage's barrier.")
    private List<String> stageWarmTargets;

    @JsonPropertyDescription("Current stage for display, e.g. 2/3.")
    private String stage;

    @JsonPropertyDescription("Request counts so far.")
    private RunProgress progress;

    @JsonPropertyDescription("Live figures of the running stage.")
    private LiveStatus live;

    @JsonPropertyDescription("Short figures shown by kubectl get.")
    private RunSummary summary;

    @JsonPropertyDescription("Per-stage results, in stage order.")
    private List<StageSummary> results;

    @JsonPropertyDescription(
            "One LPG latency profile document per finished stage (metrics, dimensions, config,"
                    + " summary_stats), in stage order; left out when all profiles together"
                    + " exceed what status keeps (condition ResultsStored says so): they are"
                    + " then only in profileConfigMaps, under each result's profileKey.")
    private List<JsonNode> profiles;

    @JsonPropertyDescription(
            "Name of the (first) ConfigMap holding the profiles, one key per stage.")
    private String profileConfigMap;

    @JsonPropertyDescription(
            "With spec.baseline: this run's profiles compared with the baseline's.")
    private RunComparison comparison;

    @JsonPropertyDescription(
            "With spec.search: the capacity found and every probe, filled while the search runs.")
    private CapacityStatus capacity;

    @JsonPropertyDescription(
            "What was measured: target images and digests, server version and arguments, GPU"
                    + " product and count, ready replicas over the run.")
    private EnvironmentStatus environment;

    @JsonPropertyDescription(
            "Every ConfigMap holding the profiles, in stage order: spec.output.configMapName,"
                    + " then <name>-2, <name>-3, ... when the profiles outgrow one ConfigMap"
                    + " (1 MiB).")
    private List<String> profileConfigMaps;

    /**
     * Finds a condition by type.
     *
     * @param type e.g. {@link ConditionTypes#TARGET_READY}
     * @return the condition, if reported
     */
    public Optional<Condition> condition(String type) {
        if (conditions == null) {
            return Optional.empty();
        }
        return conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    public Phase getPhase() {
        return phase;
    }

    public void setPhase(Phase phase) {
        this.phase = phase;
    }

    public String getMessage() {
        return message;
    }

    public void setMessage(String message) {
        this.message = message;
    }

    public Long getObservedGeneration() {
        return observedGeneration;
    }

    public void setObservedGeneration(Long observedGeneration) {
        this.observedGeneration = observedGeneration;
    }

    public List<Condition> getConditions() {
        return conditions;
    }

    public void setConditions(List<Condition> conditions) {
        this.conditions = conditions;
    }

    public String getStartTime() {
        return startTime;
    }

    public void setStartTime(String startTime) {
        this.startTime = startTime;
    }

    public String getCompletionTime() {
        return completionTime;
    }

    public void setCompletionTime(String completionTime) {
        this.completionTime = completionTime;
    }

    public String getModel() {
        return model;
    }

    public void setModel(String model) {
        this.model = model;
    }

    public List<String> getStageStartTimes() {
        return stageStartTimes;
    }

    public void setStageStartTimes(List<String> stageStartTimes) {
        this.stageStartTimes = stageStartTimes;
    }

    public List<String> getStagePrefixCache() {
        return stagePrefixCache;
    }

    public void setStagePrefixCache(List<String> stagePrefixCache) {
        this.stagePrefixCache = stagePrefixCache;
    }

    public List<String> getStageWarmTargets() {
        return stageWarmTargets;
    }

    public void setStageWarmTargets(List<String> stageWarmTargets) {
        this.stageWarmTargets = stageWarmTargets;
    }

    public String getStage() {
        return stage;
    }

    public void setStage(String stage) {
        this.stage = stage;
    }

    public RunProgress getProgress() {
        return progress;
    }

    public void setProgress(RunProgress progress) {
        this.progress = progress;
    }

    public LiveStatus getLive() {
        return live;
    }

    public void setLive(LiveStatus live) {
        this.live = live;
    }

    public RunSummary getSummary() {
        return summary;
    }

    public void setSummary(RunSummary summary) {
        this.summary = summary;
    }

    public List<StageSummary> getResults() {
        return results;
    }

    public void setResults(List<StageSummary> results) {
        this.results = results;
    }

    public List<JsonNode> getProfiles() {
        return profiles;
    }

    public void setProfiles(List<JsonNode> profiles) {
        this.profiles = profiles;
    }

    public String getProfileConfigMap() {
        return profileConfigMap;
    }

    public void setProfileConfigMap(String profileConfigMap) {
        this.profileConfigMap = profileConfigMap;
    }

    public RunComparison getComparison() {
        return comparison;
    }

    public void setComparison(RunComparison comparison) {
        this.comparison = comparison;
    }

    public EnvironmentStatus getEnvironment() {
        return environment;
    }

    public void setEnvironment(EnvironmentStatus environment) {
        this.environment = environment;
    }

    public List<String> getProfileConfigMaps() {
        return profileConfigMaps;
    }

    public void setProfileConfigMaps(List<String> profileConfigMaps) {
        this.profileConfigMaps = profileConfigMaps;
    }

    public CapacityStatus getCapacity() {
        return capacity;
    }

    public void setCapacity(CapacityStatus capacity) {
        this.capacity = capacity;
    }
}
