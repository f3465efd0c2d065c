package io.inferencebench.profile.lpg;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Whether a stage really delivered the load it asked for, so its figures measure the server at that
 * load: the operator's {@code LoadDelivered} condition, the runner's summary and every capacity
 * search probe ({@code runner search} and {@code spec.search}) come from here. It is judged on what
 * the client controls: the schedule it drew, when it sent each request, and its own CPU. The rate a
 * random (Poisson, gamma) schedule happened to draw is reported, never blamed on the client.
 *
 * <p>Rules, each with its reason; the first that fails names the verdict, the message lists every
 * one that failed:
 *
 * <ol>
 *   <li>{@value #TOO_MANY_FAILURES}: more than the allowed share of the finished requests failed
 *       (the server's verdict, not the client's: a search counts such a probe as failing);
 *   <li>{@value #RUNNER_SATURATED}: the runner had no CPU left - it used at least {@value
 *       #MAX_RUNNER_CPU_UTILIZATION} of the CPU time it may use, its threads waited for a CPU at
 *       least {@value #MAX_RUN_QUEUE_WAIT_RATIO} of the stage on average, or its cgroup quota
 *       throttled it at least {@value #MAX_THROTTLED_RATIO} of the stage. A starved runner sends
 *       late and counts its own queueing as server latency, even when the rate still looks right;
 *   <li>{@value #RATE_NOT_ACHIEVED}: a rate stage sent fewer requests than its drawn schedule had
 *       due in the stage, or sent them over a span long enough that its achieved rate fell more
 *       than {@value #MAX_RATE_SHORTFALL} short of the drawn schedule's rate (first to last due
 *       instant), by more than {@value #TIMING_RESOLUTION_MS} ms in all;
 *   <li>{@value #SCHEDULE_LAGGED}: a rate stage's p99 schedule lag (due to sent) exceeded {@value
 *       #MAX_SCHEDULE_LAG_P99_MS} ms;
 *   <li>{@value #CONCURRENCY_LIMITED} in place of the two before when the requests waited for a
 *       max-concurrency slot: the cap the user set held the schedule back, because the server did
 *       not finish requests fast enough to free slots - the load was not delivered, and the cause
 *       is the server at that concurrency, not the client;
 *   <li>{@value #SCHEDULE_TOO_SHORT} (indeterminate, not a failure): the achieved rate fell short
 *       of the drawn rate, but by less than {@value #TIMING_RESOLUTION_MS} ms over the whole
 *       schedule - a schedule that short cannot tell a client that fell behind from the timer's
 *       jitter. A longer stage (more requests or a duration) decides it.
 * </ol>
 *
 * <p>Closed-loop (concurrency) and unbounded-rate stages have no schedule: only failures and the
 * runner's CPU apply.
 *
 * @param delivery delivered, not delivered, or indeterminate
 * @param reason {@value #DELIVERED} or the first failed rule's reason
 * @param message what was measured, naming every failed rule's figures and limits
 * @param reasons every failed rule's reason, in the order above (empty when delivered)
 */
public record LoadVerdict(Delivery delivery, String reason, String message, List<String> reasons) {

    /** The three outcomes. */
    public enum Delivery {
        /** Every rule held. */
        DELIVERED,
        /** Some rule failed: the stage's figures do not measure the requested load. */
        NOT_DELIVERED,
        /** No rule failed, but the schedule was too short to judge whether the client kept it. */
        INDETERMINATE
    }

    public static final String DELIVERED = "Delivered";
    public static final String TOO_MANY_FAILURES = "TooManyFailures";
    public static final String RUNNER_SATURATED = "RunnerSaturated";
    public static final String RATE_NOT_ACHIEVED = "RateNotAchieved";
    public static final String SCHEDULE_LAGGED = "ScheduleLagged";
    public static final String CONCURRENCY_LIMITED = "ConcurrencyLimited";
    public static final String SCHEDULE_TOO_SHORT = "ScheduleTooShort";

    /** Largest shortfall of achieved vs drawn schedule rate for which load counts as delivered. */
    public static final double MAX_RATE_SHORTFALL = 0.05;

    /** Largest p99 schedule lag, ms, for which a rate stage still counts as delivered. */
    public static final double MAX_SCHEDULE_LAG_P99_MS = 100;

    /**
     * How far, in ms over the whole stage, the sends may spread beyond the schedule without being
     * told from timer jitter (the runner's p99 schedule lag target is 2 ms): a shortfall smaller
     * than this in absolute terms is indeterminate rather than a failure.
     */
    public static final double TIMING_RESOLUTION_MS = 2;

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

    public LoadVerdict {
        reasons = List.copyOf(reasons);
    }

    /**
     * Whether every rule held.
     *
     * @return {@code true} when delivered
     */
    public boolean delivered() {
        return delivery == Delivery.DELIVERED;
    }

    /**
     * Whether the schedule was too short to judge (and nothing else failed).
     *
     * @return {@code true} when indeterminate
     */
    public boolean indeterminate() {
        return delivery == Delivery.INDETERMINATE;
    }

    /**
     * Whether the client kept its schedule, leaving aside what the server answered ({@value
     * #TOO_MANY_FAILURES}) and what the server's slowness under the user's concurrency cap caused
     * ({@value #CONCURRENCY_LIMITED}): what a capacity search asks before it judges a probe by its
     * SLO attainment.
     *
     * @return delivered, not delivered (the client was the limit), or indeterminate
     */
    public Delivery clientDelivery() {
        for (String r : reasons) {
            if (r.equals(RUNNER_SATURATED)
                    || r.equals(RATE_NOT_ACHIEVED)
                    || r.equals(SCHEDULE_LAGGED)) {
                return Delivery.NOT_DELIVERED;
            }
        }
        return reasons.contains(SCHEDULE_TOO_SHORT) ? Delivery.INDETERMINATE : Delivery.DELIVERED;
    }

    /**
     * One stage's figures.
     *
     * @param requestedRate requested (nominal) rate in req/s; {@code null} or infinite for a
     *     closed-loop or unbounded stage
     * @param due requests due in the drawn schedule inside the stage; {@code null} when not
     *     recorded
     * @param scheduleSpanSeconds first to last due instant of the drawn schedule; {@code null} when
     *     not recorded
     * @param sent requests sent (sessions started, for sessions that start at a rate)
     * @param dispatchSpanSeconds first to last send; {@code null} with fewer than two sends
     * @param scheduleLagP99Ms p99 schedule lag, ms; {@code null} when not measured
     * @param slotWaitP99Ms p99 wait for a max-concurrency slot, ms; {@code null} without a cap
     * @param failureRatio failed / finished requests; {@code null} when none finished
     * @param failureClasses failed requests by class, as text (e.g. {@code http_429 18}), or {@code
     *     null}
     * @param runnerCpu the runner's CPU figures (the most starved runner's), or {@code null}
     * @param partial whether the stage was cancelled before its end
     */
    public record Figures(
            Double requestedRate,
            Long due,
            Double scheduleSpanSeconds,
            long sent,
            Double dispatchSpanSeconds,
            Double scheduleLagP99Ms,
            Double slotWaitP99Ms,
            Double failureRatio,
            String failureClasses,
            RunnerCpu runnerCpu,
            boolean partial) {

        /**
         * The figures of a stage result (the runner's own, or a merge of runners').
         *
         * @param stage the stage
         * @return its figures
         */
        public static Figures of(StageResult stage) {
            long finished = stage.completed + stage.failed;
            boolean schedule = stage.due > 0 && stage.firstDueEpochNanos > 0;
            ConversationProfile sessions = stage.conversation;
            Double requested =
                    stage.concurrency != null && Double.isInfinite(stage.requestedRate)
                            ? null
                            : stage.requestedRate;
            long sent = stage.sent;
            Double dispatchSpan =
                    stage.sent >= 2 && stage.firstDispatchEpochNanos > 0
                            ? (stage.lastDispatchEpochNanos - stage.firstDispatchEpochNanos) / 1e9
                            : null;
            if (sessions != null && sessions.sessionRate != null) {
                // Sessions start at the rate: the schedule drawn and delivered is theirs (each
                // session's later turns follow its replies, not the schedule).
                requested = sessions.sessionRate;
                sent = sessions.sessionsStarted;
                dispatchSpan =
                        sent >= 2
                                ? (sessions.lastSessionStartEpochNanos
                                                - sessions.firstSessionStartEpochNanos)
                                        / 1e9
                                : null;
            }
            return new Figures(
                    requested,
                    schedule ? stage.due : null,
                    schedule ? (stage.lastDueEpochNanos - stage.firstDueEpochNanos) / 1e9 : null,
                    sent,
                    dispatchSpan,
                    p99(stage.scheduleLagMs),
                    p99(stage.slotWaitMs),
                    finished == 0 ? null : stage.failureRatio(),
                    stage.failed > 0 ? stage.failureClassesText() : null,
                    stage.runnerCpu,
                    stage.partial);
        }

        private static Double p99(io.inferencebench.profile.stats.MetricRecorder r) {
            return r == null || r.count() == 0 ? null : r.percentile(99);
        }

        /**
         * The drawn schedule's rate: {@code (due - 1)} intervals over its span.
         *
         * @return req/s, {@code null} without a schedule of two or more requests
         */
        public Double scheduledRate() {
            return due == null || due < 2 || scheduleSpanSeconds == null || scheduleSpanSeconds <= 0
                    ? null
                    : (due - 1) / scheduleSpanSeconds;
        }

        /**
         * The achieved dispatch rate: {@code (sent - 1)} intervals over the dispatch span.
         *
         * @return req/s, {@code null} with fewer than two sends
         */
        public Double achievedRate() {
            return sent < 2 || dispatchSpanSeconds == null || dispatchSpanSeconds <= 0
                    ? null
                    : (sent - 1) / dispatchSpanSeconds;
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
        if (scheduled) {
            judgeSchedule(figures, requested, reasons, messages);
        }
        if (reasons.isEmpty()) {
            return new LoadVerdict(
                    Delivery.DELIVERED, DELIVERED, "delivered the requested load", List.of());
        }
        boolean onlyTooShort = reasons.size() == 1 && reasons.get(0).equals(SCHEDULE_TOO_SHORT);
        return new LoadVerdict(
                onlyTooShort ? Delivery.INDETERMINATE : Delivery.NOT_DELIVERED,
                reasons.get(0),
                String.join("; ", messages),
                reasons);
    }

    /** The schedule rules: requests due vs sent, achieved vs drawn rate, lag, slot waits. */
    private static void judgeSchedule(
            Figures f, double requested, List<String> reasons, List<String> messages) {
        List<String> late = new ArrayList<>();
        boolean tooShort = false;
        String tooShortMessage = null;
        Double drawn = f.scheduledRate();
        Double achieved = f.achievedRate();
        if (f.due() != null && f.sent() < f.due() && !f.partial()) {
            late.add(
                    format(
                            "sent %d of the %d requests due in its schedule by the stage's end",
                            f.sent(), f.due()));
        } else if (drawn != null && achieved != null) {
            double excessMs = 1000 * (f.dispatchSpanSeconds() - f.scheduleSpanSeconds());
            if (achieved < drawn * (1 - MAX_RATE_SHORTFALL)) {
                String figures =
                        format(
                                "achieved %s req/s (%d requests in %s) while the schedule it drew"
                                        + " asked for %s req/s (%d requests in %s; requested %s)",
                                rate(achieved),
                                f.sent(),
                                seconds(f.dispatchSpanSeconds()),
                                rate(drawn),
                                f.due(),
                                seconds(f.scheduleSpanSeconds()),
                                rate(requested));
                if (excessMs > TIMING_RESOLUTION_MS) {
                    late.add(
                            figures
                                    + format(
                                            ", more than %.0f %% short", 100 * MAX_RATE_SHORTFALL));
                } else {
                    tooShort = true;
                    tooShortMessage =
                            figures
                                    + format(
                                            ": %.2f ms over the whole schedule, within the"
                                                    + " timing resolution of %.0f ms - too short to"
                                                    + " judge; a longer stage decides it",
                                            excessMs, TIMING_RESOLUTION_MS);
                }
            }
        }
        boolean lagged =
                f.scheduleLagP99Ms() != null && f.scheduleLagP99Ms() > MAX_SCHEDULE_LAG_P99_MS;
        if (lagged) {
            late.add(
                    format(
                            "p99 schedule lag %.1f ms, above %.0f ms",
                            f.scheduleLagP99Ms(), MAX_SCHEDULE_LAG_P99_MS));
        }
        if (!late.isEmpty()) {
            if (slotBound(f)) {
                reasons.add(CONCURRENCY_LIMITED);
                messages.add(
                        String.join(", ", late)
                                + format(
                                        ": requests waited for a max-concurrency slot (p99 %.1f"
                                                + " ms) - the server did not finish requests fast"
                                                + " enough for this rate at that concurrency",
                                        f.slotWaitP99Ms()));
            } else {
                boolean rate = !(late.size() == 1 && lagged);
                reasons.add(rate ? RATE_NOT_ACHIEVED : SCHEDULE_LAGGED);
                if (rate && lagged) {
                    reasons.add(SCHEDULE_LAGGED);
                }
                messages.add(String.join("; ", late));
            }
        } else if (tooShort) {
            reasons.add(SCHEDULE_TOO_SHORT);
            messages.add(tooShortMessage);
        }
    }

    /**
     * Whether the slot waits explain the lag: at least half the p99 lag was spent waiting for a
     * max-concurrency slot (the lag includes the slot wait).
     */
    private static boolean slotBound(Figures f) {
        return f.slotWaitP99Ms() != null
                && f.scheduleLagP99Ms() != null
                && f.slotWaitP99Ms() > TIMING_RESOLUTION_MS
                && f.slotWaitP99Ms() >= 0.5 * f.scheduleLagP99Ms();
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
                            "used %.0f %% of it (%.2f CPU-s in %.2f s)",
                            100 * cpu.utilization(), cpu.cpuSeconds, cpu.wallSeconds));
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
        // The budget is named whichever rule fired: the quota, not the rounded-up CPU count the
        // JVM sees, is what the runner may use.
        return why.isEmpty()
                ? null
                : who
                        + " ran out of its "
                        + cpus(cpu.availableCpus)
                        + " CPU: "
                        + String.join(", ", why);
    }

    private static String rate(double r) {
        return r >= 100 ? format("%.1f", r) : format("%.3g", r);
    }

    private static String seconds(double s) {
        return s >= 1 ? format("%.2f s", s) : format("%.2f ms", 1000 * s);
    }

    private static String cpus(double n) {
        return n == Math.rint(n) ? Long.toString((long) n) : format("%.2f", n);
    }

    private static String format(String pattern, Object... args) {
        return String.format(Locale.ROOT, pattern, args);
    }
}
