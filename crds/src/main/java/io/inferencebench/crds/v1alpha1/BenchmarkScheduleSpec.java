package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** When to run which benchmark, how many finished runs to keep, and what to compare them with. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.baseline) || !has(self.template.baseline)",
        message = "set the baseline in spec.baseline or in spec.template.baseline, not both",
        fieldPath = ".template.baseline",
        reason = "FieldValueForbidden")
@ValidationRule(
        value =
                "!has(self.baseline) || !has(self.baseline.noiseFloorRuns)"
                        + " || self.baseline.noiseFloorRuns <= (has(self.historyLimit) ?"
                        + " self.historyLimit : "
                        + BenchmarkScheduleSpec.DEFAULT_HISTORY_LIMIT
                        + ")",
        message =
                "baseline.noiseFloorRuns is more than historyLimit: the schedule never keeps that"
                        + " many runs",
        fieldPath = ".baseline.noiseFloorRuns",
        reason = "FieldValueInvalid")
public class BenchmarkScheduleSpec {

    /** Finished runs kept when {@code historyLimit} is not set. */
    public static final int DEFAULT_HISTORY_LIMIT = 10;

    @JsonPropertyDescription(
            "Cron schedule in the five-field format of Kubernetes CronJobs (minute hour"
                    + " day-of-month month day-of-week, e.g. '0 3 * * *'; minute 0-59, hour 0-23,"
                    + " day 1-31, month 1-12 or JAN-DEC, day of the week 0-7 or SUN-SAT; *, lists,"
                    + " ranges a-b, steps */n and a-b/n), or @hourly, @daily, @midnight, @weekly,"
                    + " @monthly, @yearly, @annually. Checked at admission.")
    @Required
    @Size(min = 1, max = 100)
    @ValidationRule(
            value = CronSyntax.CEL_NO_TZ,
            message = CronSyntax.NO_TZ_MESSAGE,
            reason = "FieldValueInvalid")
    @ValidationRule(
            value = CronSyntax.CEL_SHAPE,
            message = CronSyntax.SHAPE_MESSAGE,
            reason = "FieldValueInvalid")
    @ValidationRule(
            value = CronSyntax.CEL_MINUTE,
            message = CronSyntax.MINUTE_MESSAGE,
            reason = "FieldValueInvalid")
    @ValidationRule(
            value = CronSyntax.CEL_HOUR,
            message = CronSyntax.HOUR_MESSAGE,
            reason = "FieldValueInvalid")
    @ValidationRule(
            value = CronSyntax.CEL_DAY,
            message = CronSyntax.DAY_MESSAGE,
            reason = "FieldValueInvalid")
    @ValidationRule(
            value = CronSyntax.CEL_MONTH,
            message = CronSyntax.MONTH_MESSAGE,
            reason = "FieldValueInvalid")
    @ValidationRule(
            value = CronSyntax.CEL_WEEKDAY,
            message = CronSyntax.WEEKDAY_MESSAGE,
            reason = "FieldValueInvalid")
    @ValidationRule(
            value = CronSyntax.CEL_RANGES,
            message = CronSyntax.RANGES_MESSAGE,
            reason = "FieldValueInvalid")
    private String schedule;

    @JsonPropertyDescription(
            "IANA time zone the schedule is read in: UTC, or Area/Location such as"
                    + " Europe/Berlin. Default: UTC. The shape is checked at admission; a zone"
                    + " the operator does not know sets the ScheduleValid condition to False"
                    + " (reason UnknownTimeZone) with a Warning Event, and no run is created.")
    @Size(min = 1, max = 64)
    @ValidationRule(
            value = CronSyntax.CEL_TIME_ZONE,
            message = CronSyntax.TIME_ZONE_MESSAGE,
            reason = "FieldValueInvalid")
    private String timeZone;

    @JsonPropertyDescription(
            "The spec of every BenchmarkRun created; runs are named"
                    + " <schedule>-<yyyyMMddHHmm> (the scheduled time in UTC) and owned by the"
                    + " schedule.")
    @Required
    private BenchmarkRunSpec template;

    @JsonPropertyDescription(
            "How many runs of this schedule to keep; beyond it the oldest finished runs are"
                    + " deleted (running ones never).")
    @Default("10")
    @Min(1)
    @Max(1000)
    private Integer historyLimit = DEFAULT_HISTORY_LIMIT;

    @JsonPropertyDescription(
            "Forbid: a run due while the previous one is still running is skipped (two"
                    + " benchmarks of one server would measure each other). Replace: the running"
                    + " one is deleted and the due one starts.")
    @Default("Forbid")
    private ConcurrencyPolicy concurrencyPolicy = ConcurrencyPolicy.FORBID;

    @JsonPropertyDescription(
            "true: create no new runs (running ones continue). Runs missed while suspended are"
                    + " not made up.")
    @Default("false")
    private Boolean suspend = Boolean.FALSE;

    @JsonPropertyDescription(
            "The baseline each run is compared with (written into the run's spec.baseline):"
                    + " {policy: previousSucceeded} or {runName: NAME}. Unset: runs are not"
                    + " compared unless spec.template.baseline says so.")
    private ScheduleBaseline baseline;

    public BenchmarkScheduleSpec() {}

    public String getSchedule() {
        return schedule;
    }

    public void setSchedule(String schedule) {
        this.schedule = schedule;
    }

    public String getTimeZone() {
        return timeZone;
    }

    public void setTimeZone(String timeZone) {
        this.timeZone = timeZone;
    }

    public BenchmarkRunSpec getTemplate() {
        return template;
    }

    public void setTemplate(BenchmarkRunSpec template) {
        this.template = template;
    }

    public Integer getHistoryLimit() {
        return historyLimit;
    }

    public void setHistoryLimit(Integer historyLimit) {
        this.historyLimit = historyLimit;
    }

    /** The history limit, defaulted. */
    public int historyLimitValue() {
        return historyLimit == null ? DEFAULT_HISTORY_LIMIT : historyLimit;
    }

    public ConcurrencyPolicy getConcurrencyPolicy() {
        return concurrencyPolicy;
    }

    public void setConcurrencyPolicy(ConcurrencyPolicy concurrencyPolicy) {
        this.concurrencyPolicy = concurrencyPolicy;
    }

    public Boolean getSuspend() {
        return suspend;
    }

    public void setSuspend(Boolean suspend) {
        this.suspend = suspend;
    }

    public ScheduleBaseline getBaseline() {
        return baseline;
    }

    public void setBaseline(ScheduleBaseline baseline) {
        this.baseline = baseline;
    }
}
