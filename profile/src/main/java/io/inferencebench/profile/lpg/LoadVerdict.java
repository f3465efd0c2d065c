package io.inferencebench.profile.lpg;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Whether a stage really delivered the load it asked for, so its figures measure the server at that
 * load: the operator's {@code LoadDelivered} condition and the runner's summary both come from
 * here.
 *
 * <p>Rules, each with its reason; the first that fails names the verdict, the message lists every
 * one that failed:
 *
 * <ol>
 *   <li>{@value #TOO_MANY_FAILURES}: more than the allowed share of the finished requests failed;
 *   <li>{@value #RUNNER_SATURATED}: the runner had no CPU left - it used at least {@value
 *       #MAX_RUNNER_CPU_UTILIZATION} of the CPU time it may use, its threads waited for a CPU at
 *       least {@value #MAX_RUN_QUEUE_WAIT_RATIO} of the stage on average, or its cgroup quota
 *       throttled it at least {@value #MAX_THROTTLED_RATIO} of the stage. A starved runner sends
 *       late and counts its own queueing as server latency, even when the rate still looks right;
 *   <li>{@value #RATE_NOT_ACHIEVED}: a rate stage's achieved rate fell more than {@value
 *       #MAX_RATE_SHORTFALL} short of the requested one;
 *   <li>{@value #SCHEDULE_LAGGED}: a rate stage's p99 schedule lag (due to sent) exceeded {@value
 *       #MAX_SCHEDULE_LAG_P99_MS} ms.
 * </ol>
 *
 * <p>Closed-loop (concurrency) and unbounded-rate stages have no schedule: only failures and the
 * runner's CPU apply.
 *
 * @param delivered whether every rule held
 * @param reason {@value #DELIVERED} or the first failed rule's reason
 * @param message what was measured, naming every failed rule's figures and limits
 */
public record LoadVerdict(boolean delivered, String reason, String message) {

    public static final String DELIVERED = "Delivered";
    public static final String TOO_MANY_FAILURES = "TooManyFailures";
    public static final String RUNNER_SATURATED = "RunnerSaturated";
    public static final String RATE_NOT_ACHIEVED = "RateNotAchieved";
    public static final String SCHEDULE_LAGGED = "ScheduleLagged";

    /** Largest shortfall of achieved vs requested rate for which load counts as delivered. */
    public static final double MAX_RATE_SHORTFALL = 0.05;

    /** Largest p99 schedule lag, ms, for which a rate stage still counts as delivered. */
    public static final double MAX_SCHEDULE_LAG_P99_MS = 100;

    /**
     * Share of its available CPU time at which the runner counts as saturated: beyond it, event
     * loops and the dispatcher queue behind each other.
     */
    public static final double MAX_RUNNER_CPU_UTILIZATION = 0.9;

    /**
     * Run-queue wait per wall second at which the runner counts as starved by others on its CPUs
     * (half a thread waiting all the time; an idle machine shows a few per cent).
     */
    public static final double MAX_RUN_QUEUE_WAIT_RATIO = 0.5;

    /** Share of the stage a cgroup CPU quota may throttle the runner. */
    public static final double MAX_THROTTLED_RATIO = 0.1;

    /**
     * One stage's figures.
     *
     * @param requestedRate requested rate in req/s; {@code null} or infinite for a closed-loop or
     *     unbounded stage
     * @param achievedRate achieved rate in req/s; {@code null} when the stage sent too few requests
     *     for a meaningful rate
     * @param scheduleLagP99Ms p99 schedule lag, ms; {@code null} when not measured
     * @param failureRatio failed / finished requests; {@code null} when none finished
     * @param failureClasses failed requests by class, as text (e.g. {@code http_429 18}), or {@code
     *     null}
     * @param runnerCpu the runner's CPU figures (the most starved runner's), or {@code null}
     */
    public record Figures(
            Double requestedRate,
            Double achievedRate,
            Double scheduleLagP99Ms,
            Double failureRatio,
            String failureClasses,
            RunnerCpu runnerCpu) {

        /**
         * The figures of a stage result (the runner's own, or a merge of runners').
         *
         * @param stage the stage
         * @return its figures
         */
        public static Figures of(StageResult stage) {
            long finished = stage.completed + stage.failed;
            return new Figures(
                    stage.concurrency != null && Double.isInfinite(stage.requestedRate)
                            ? null
                            : stage.requestedRate,
                    LpgProfileWriter.ratesMeaningful(stage)
                            ? LpgProfileWriter.achievedRate(stage)
                            : null,
                    stage.scheduleLagMs == null || stage.scheduleLagMs.count() == 0
                            ? null
                            : stage.scheduleLagMs.percentile(99),
                    finished == 0 ? null : stage.failureRatio(),
                    stage.failed > 0 ? stage.failureClassesText() : null,
                    stage.runnerCpu);
        }
    }

    /**
     * Judges one stage.
     *
     * @param figures what the stage measured
     * @param maxFailureRatio the allowed share of failed requests
     * @param maxFailureRatioName where that limit is set, for the message (e.g. {@code
     *     spec.load.maxFailureRatio} or {@code --max-failure-ratio})
     * @return the verdict
     */
    public static LoadVerdict judge(
            Figures figures, double maxFailureRatio, String maxFailureRatioName) {
        List<String> reasons = new ArrayList<>();
        List<String> messages = new ArrayList<>();
        if (figures.failureRatio() != null && figures.failureRatio() > maxFailureRatio) {
            reasons.add(TOO_MANY_FAILURES);
            messages.add(
                    format(
                            "%.1f %% of requests failed%s, above %s %.2f",
                            100 * figures.failureRatio(),
                            figures.failureClasses() == null
                                    ? ""
                                    : " (" + figures.failureClasses() + ")",
                            maxFailureRatioName,
                            maxFailureRatio));
        }
        String cpu = saturation(figures.runnerCpu());
        if (cpu != null) {
            reasons.add(RUNNER_SATURATED);
            messages.add(cpu);
        }
        Double requested = figures.requestedRate();
        boolean scheduled = requested != null && Double.isFinite(requested) && requested > 0;
        if (scheduled
                && figures.achievedRate() != null
                && figures.achievedRate() < requested * (1 - MAX_RATE_SHORTFALL)) {
            reasons.add(RATE_NOT_ACHIEVED);
            messages.add(
                    format(
                            "achieved %.2f req/s of the requested %.2f (more than %.0f %% short)",
                            figures.achievedRate(), requested, 100 * MAX_RATE_SHORTFALL));
        }
        if (scheduled
                && figures.scheduleLagP99Ms() != null
                && figures.scheduleLagP99Ms() > MAX_SCHEDULE_LAG_P99_MS) {
            reasons.add(SCHEDULE_LAGGED);
            messages.add(
                    format(
                            "p99 schedule lag %.1f ms, above %.0f ms",
                            figures.scheduleLagP99Ms(), MAX_SCHEDULE_LAG_P99_MS));
        }
        if (reasons.isEmpty()) {
            return new LoadVerdict(true, DELIVERED, "delivered the requested load");
        }
        return new LoadVerdict(false, reasons.get(0), String.join("; ", messages));
    }

    /** Why the runner counts as out of CPU, or {@code null} when it had enough. */
    static String saturation(RunnerCpu cpu) {
        if (cpu == null || cpu.wallSeconds <= 0) {
            return null;
        }
        String who = cpu.runner == null ? "the runner" : "runner " + cpu.runner;
        List<String> why = new ArrayList<>();
        if (cpu.utilization() >= MAX_RUNNER_CPU_UTILIZATION) {
            why.add(
                    format(
                            "used %.0f %% of its %s CPU (%.2f CPU-s in %.2f s)",
                            100 * cpu.utilization(),
                            cpus(cpu.availableCpus),
                            cpu.cpuSeconds,
                            cpu.wallSeconds));
        }
        if (cpu.runQueueWaitRatio() >= MAX_RUN_QUEUE_WAIT_RATIO) {
            why.add(
                    format(
                            "its threads waited %.2f s for a CPU in %.2f s (other processes on"
                                    + " its CPUs)",
                            cpu.runQueueWaitSeconds, cpu.wallSeconds));
        }
        if (cpu.throttledRatio() >= MAX_THROTTLED_RATIO) {
            why.add(
                    format(
                            "its cgroup CPU quota throttled it %.2f s in %.2f s",
                            cpu.throttledSeconds, cpu.wallSeconds));
        }
        return why.isEmpty() ? null : who + " ran out of CPU: " + String.join(", ", why);
    }

    private static String cpus(double n) {
        return n == Math.rint(n) ? Long.toString((long) n) : format("%.2f", n);
    }

    private static String format(String pattern, Object... args) {
        return String.format(Locale.ROOT, pattern, args);
    }
}
