package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * The desired benchmark. Immutable once created, except {@code cancel}: changing a running
 * benchmark would make its results meaningless, so create a new BenchmarkRun instead.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value =
                "!has(self.workload) || !has(self.workload.dataset)"
                        + " || !has(self.workload.dataset.conversation)"
                        + " || (has(self.load.stages) && !has(self.load.requestRates)"
                        + " && self.load.stages.all(s, has(s.numPrompts) && !has(s.rampUp)))",
        message =
                "a conversation workload runs sessions: give load.stages, each with numPrompts"
                        + " (sessions to run) and concurrency (sessions in progress at once) or"
                        + " requestRate (sessions started per second), no rampUp",
        fieldPath = ".load",
        reason = "FieldValueInvalid")
@ValidationRule(
        value =
                "!has(self.workload) || !has(self.workload.dataset)"
                        + " || !has(self.workload.dataset.conversation)"
                        + " || (has(self.target.api) && self.target.api == 'chat')",
        message =
                "a conversation workload needs target.api: chat, whose messages carry a session's"
                        + " history",
        fieldPath = ".target.api",
        reason = "FieldValueInvalid")
@ValidationRule(
        value =
                "!has(self.workload) || !has(self.workload.dataset)"
                        + " || !has(self.workload.dataset.conversation) || !has(self.search)",
        message =
                "a conversation workload runs a number of sessions at once, and search chooses"
                        + " request rates",
        fieldPath = ".search",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "!has(self.workload) || !has(self.workload.models) || !has(self.target.model)",
        message =
                "set target.model or workload.models, not both: with models each request asks for"
                        + " one of them",
        fieldPath = ".workload.models",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "self.target == oldSelf.target",
        message = "spec.target is immutable; create a new BenchmarkRun instead",
        fieldPath = ".target",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "self.load == oldSelf.load",
        message = "spec.load is immutable; create a new BenchmarkRun instead",
        fieldPath = ".load",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "has(self.workload) == has(oldSelf.workload)"
                        + " && (!has(self.workload) || self.workload == oldSelf.workload)",
        message = "spec.workload is immutable; create a new BenchmarkRun instead",
        fieldPath = ".workload",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "has(self.slo) == has(oldSelf.slo) && (!has(self.slo) || self.slo == oldSelf.slo)",
        message = "spec.slo is immutable; create a new BenchmarkRun instead",
        fieldPath = ".slo",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "has(self.metrics) == has(oldSelf.metrics)"
                        + " && (!has(self.metrics) || self.metrics == oldSelf.metrics)",
        message = "spec.metrics is immutable; create a new BenchmarkRun instead",
        fieldPath = ".metrics",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "has(self.runner) == has(oldSelf.runner)"
                        + " && (!has(self.runner) || self.runner == oldSelf.runner)",
        message = "spec.runner is immutable; create a new BenchmarkRun instead",
        fieldPath = ".runner",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "has(self.output) == has(oldSelf.output)"
                        + " && (!has(self.output) || self.output == oldSelf.output)",
        message = "spec.output is immutable; create a new BenchmarkRun instead",
        fieldPath = ".output",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "has(self.ttlSecondsAfterFinished) == has(oldSelf.ttlSecondsAfterFinished)"
                        + " && (!has(self.ttlSecondsAfterFinished)"
                        + " || self.ttlSecondsAfterFinished == oldSelf.ttlSecondsAfterFinished)",
        message = "spec.ttlSecondsAfterFinished is immutable",
        fieldPath = ".ttlSecondsAfterFinished",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "has(self.timeout) == has(oldSelf.timeout)"
                        + " && (!has(self.timeout) || self.timeout == oldSelf.timeout)",
        message = "spec.timeout is immutable",
        fieldPath = ".timeout",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "has(self.baseline) == has(oldSelf.baseline)"
                        + " && (!has(self.baseline) || self.baseline == oldSelf.baseline)",
        message = "spec.baseline is immutable",
        fieldPath = ".baseline",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)",
        message = "spec.cancel cannot be undone once set to true",
        fieldPath = ".cancel",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "!has(self.timeout) || self.timeout.matches('[1-9]')",
        message = "timeout must be greater than zero",
        fieldPath = ".timeout")
@ValidationRule(
        value =
                "has(self.search) == has(oldSelf.search)"
                        + " && (!has(self.search) || self.search == oldSelf.search)",
        message = "spec.search is immutable",
        fieldPath = ".search",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "has(self.search) || has(self.load.stages) != has(self.load.requestRates)"
                        + " || (has(self.workload) && has(self.workload.dataset)"
                        + " && self.workload.dataset.type == 'trace')",
        message =
                "exactly one of stages or requestRates must be set (or spec.search, or a trace"
                        + " dataset, which replays on its own clock)",
        fieldPath = ".load",
        reason = "FieldValueInvalid")
@ValidationRule(
        value = "!has(self.search) || (!has(self.load.stages) && !has(self.load.requestRates))",
        message =
                "spec.search decides every stage's rate at run time; leave load.stages and"
                        + " load.requestRates unset",
        fieldPath = ".search",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "!has(self.search) || !has(self.load.repeats) || self.load.repeats == 1",
        message =
                "spec.search decides its probes at run time and grows a probe that is too small"
                        + " to judge; load.repeats applies to stages given in advance",
        fieldPath = ".load.repeats",
        reason = "FieldValueForbidden")
@ValidationRule(
        value = "!has(self.search) || has(self.load.numPrompts) || has(self.load.duration)",
        message = "spec.search needs load.numPrompts or load.duration (the size of every probe)",
        fieldPath = ".load",
        reason = "FieldValueRequired")
@ValidationRule(
        value = "!has(self.search) || has(self.slo)",
        message = "spec.search needs spec.slo (a probe passes when it meets it)",
        fieldPath = ".search",
        reason = "FieldValueRequired")
@ValidationRule(
        value =
                "!has(self.workload) || !has(self.workload.dataset)"
                        + " || self.workload.dataset.type != 'trace'"
                        + " || (!has(self.search) && !has(self.load.requestRates))",
        message =
                "a trace sets its own arrival times: leave load.requestRates and spec.search unset"
                        + " (scale the trace's times with workload.dataset.trace.timeScale)",
        fieldPath = ".load",
        reason = "FieldValueForbidden")
public class BenchmarkRunSpec {

    /** Whether the workload is a trace, whose recorded times set the arrivals. */
    @com.fasterxml.jackson.annotation.JsonIgnore
    public boolean replaysTrace() {
        return workload != null
                && workload.getDataset() != null
                && workload.getDataset().getType() == DatasetType.TRACE;
    }

    /** Whether the workload is sent as conversations (sessions of turns). */
    @com.fasterxml.jackson.annotation.JsonIgnore
    public boolean runsConversations() {
        return workload != null
                && workload.getDataset() != null
                && workload.getDataset().getConversation() != null;
    }

    @JsonPropertyDescription("The model server under test.")
    @Required
    private TargetSpec target;

    @JsonPropertyDescription("What each request contains: dataset, tokenizer, streaming, sampling.")
    private WorkloadSpec workload = new WorkloadSpec();

    @JsonPropertyDescription("How load is applied: stages or a request-rate sweep.")
    @Required
    private LoadSpec load;

    @JsonPropertyDescription(
            "Service-level objectives; when set, the SloMet condition gives the pass/fail verdict.")
    private SloSpec slo;

    @JsonPropertyDescription(
            "Server metrics per stage: scraped from every ready endpoint, or read from a"
                    + " Prometheus server (metrics.prometheus).")
    private MetricsSpec metrics = new MetricsSpec();

    @JsonPropertyDescription("Runner pods: image, parallelism, resources, scheduling.")
    private RunnerSpec runner = new RunnerSpec();

    @JsonPropertyDescription("The output ConfigMap.")
    private OutputSpec output = new OutputSpec();

    @JsonPropertyDescription(
            "Set to true to stop the run: runners stop sending, finished stages' profiles are kept,"
                    + " the phase becomes Cancelled. The only field that may change after"
                    + " creation; it cannot be set back to false.")
    @Default("false")
    private Boolean cancel = Boolean.FALSE;

    @JsonPropertyDescription(
            "Delete the BenchmarkRun this many seconds after it finished (like Job's"
                    + " ttlSecondsAfterFinished). Unset: keep it.")
    @Min(0)
    private Integer ttlSecondsAfterFinished;

    @JsonPropertyDescription(
            "Overall deadline from the run's start; when exceeded the run fails, keeping finished"
                    + " stages' profiles. Unset: no deadline beyond the per-step timeouts.")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String timeout;

    @JsonPropertyDescription(
            "Compare this run, when it finishes, with an earlier run or a ConfigMap of profiles:"
                    + " the result goes to status.comparison and the Regressed condition.")
    private BaselineSpec baseline;

    @JsonPropertyDescription(
            "Find the highest request rate that meets spec.slo: probes (stages of the size"
                    + " load.numPrompts/load.duration) whose rates the operator decides at run"
                    + " time; the result is status.capacity. Leave load.stages and"
                    + " load.requestRates unset.")
    private SearchSpec search;

    public TargetSpec getTarget() {
        return target;
    }

    public void setTarget(TargetSpec target) {
        this.target = target;
    }

    public WorkloadSpec getWorkload() {
        return workload;
    }

    public void setWorkload(WorkloadSpec workload) {
        this.workload = workload;
    }

    public LoadSpec getLoad() {
        return load;
    }

    public void setLoad(LoadSpec load) {
        this.load = load;
    }

    public SloSpec getSlo() {
        return slo;
    }

    public void setSlo(SloSpec slo) {
        this.slo = slo;
    }

    public MetricsSpec getMetrics() {
        return metrics;
    }

    public void setMetrics(MetricsSpec metrics) {
        this.metrics = metrics;
    }

    public RunnerSpec getRunner() {
        return runner;
    }

    public void setRunner(RunnerSpec runner) {
        this.runner = runner;
    }

    public OutputSpec getOutput() {
        return output;
    }

    public void setOutput(OutputSpec output) {
        this.output = output;
    }

    public Boolean getCancel() {
        return cancel;
    }

    public void setCancel(Boolean cancel) {
        this.cancel = cancel;
    }

    public Integer getTtlSecondsAfterFinished() {
        return ttlSecondsAfterFinished;
    }

    public void setTtlSecondsAfterFinished(Integer ttlSecondsAfterFinished) {
        this.ttlSecondsAfterFinished = ttlSecondsAfterFinished;
    }

    public String getTimeout() {
        return timeout;
    }

    public void setTimeout(String timeout) {
        this.timeout = timeout;
    }

    public BaselineSpec getBaseline() {
        return baseline;
    }

    public void setBaseline(BaselineSpec baseline) {
        this.baseline = baseline;
    }

    public SearchSpec getSearch() {
        return search;
    }

    public void setSearch(SearchSpec search) {
        this.search = search;
    }
}
