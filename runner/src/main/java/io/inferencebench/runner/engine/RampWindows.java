package io.inferencebench.runner.engine;

import io.inferencebench.profile.lpg.RampProfile;
import io.inferencebench.profile.stats.MetricRecorder;
import java.util.function.Supplier;

/**
 * Splits a ramped stage into {@value #WINDOWS} equal time windows and records, per window, the
 * requests sent in it and the TTFT and end-to-end latency of those that succeeded, from the same
 * requests the stage's own statistics record. Percentiles are the stage recorders' (exact up to the
 * sample cap; a window past it has none rather than an estimate). Called under the {@link
 * StageRecorder}'s lock.
 */
final class RampWindows {

    /** Windows per ramped stage: enough to see a knee, few enough to hold requests each. */
    static final int WINDOWS = 10;

    private final RampUp ramp;
    private final boolean overDuration;
    private long startNanos;
    private final long spanNanos;
    private final long[] due = new long[WINDOWS];
    private final long[] sent = new long[WINDOWS];
    private final long[] completed = new long[WINDOWS];
    private final long[] failed = new long[WINDOWS];
    private final MetricRecorder[] ttftMs = new MetricRecorder[WINDOWS];
    private final MetricRecorder[] e2elMs = new MetricRecorder[WINDOWS];

    /**
     * The windows of a ramped stage, {@code null} for any other.
     *
     * @param schedules fresh draws of the stage's schedule
     * @param sampleCap exact-sample cap of the window recorders
     */
    static RampWindows of(StagePlan plan, Supplier<ArrivalSchedule> schedules, int sampleCap) {
        return plan.ramped()
                ? new RampWindows(
                        plan,
                        schedules,
                        plan.numPrompts() > 0 ? plan.numPrompts() : Long.MAX_VALUE,
                        sampleCap)
                : null;
    }

    /**
     * Windows over a stage's schedule.
     *
     * @param plan the ramped stage
     * @param schedules fresh draws of the stage's schedule (the offsets its loops walk)
     * @param limit the stage's number of prompts, {@link Long#MAX_VALUE} for none
     * @param sampleCap exact-sample cap of the window recorders
     */
    RampWindows(StagePlan plan, Supplier<ArrivalSchedule> schedules, long limit, int sampleCap) {
        this.ramp = plan.rampUp();
        this.overDuration = plan.duration() != null;
        long window = overDuration ? plan.duration().toNanos() : Long.MAX_VALUE;
        // Over the requests, the windows cover the drawn schedule: first to last due instant.
        this.spanNanos =
                overDuration
                        ? window
                        : schedules.get().due(limit, Long.MAX_VALUE).lastOffsetNanos() + 1;
        ArrivalSchedule schedule = schedules.get();
        for (long count = 0; count < limit; count++) {
            long offset = schedule.nextOffsetNanos();
            if (offset >= window) {
                break;
            }
            due[index(offset)]++;
        }
        for (int w = 0; w < WINDOWS; w++) {
            ttftMs[w] = new MetricRecorder(sampleCap);
            e2elMs[w] = new MetricRecorder(sampleCap);
        }
    }

    /** Anchors the windows at the stage's start (nanoTime), before its first send. */
    void startAt(long nanos) {
        this.startNanos = nanos;
    }

    /** The window of an instant {@code offset} ns after the start; late sends fall in the last. */
    private int index(long offset) {
        if (offset <= 0) {
            return 0;
        }
        return (int) Math.min(WINDOWS - 1, (long) ((double) offset / spanNanos * WINDOWS));
    }

    /** Records a finished request (not one a cancel caught). */
    void record(RequestExecution e) {
        int w = index(e.sendNanos - startNanos);
        sent[w]++;
        if (!e.succeeded()) {
            failed[w]++;
            return;
        }
        completed[w]++;
        // The same figures the stage's recorders take: only a streamed response has a TTFT.
        e2elMs[w].record(e.latencyNanos() / 1e6);
        if (e.streamed()) {
            ttftMs[w].record(e.ttftNanos() / 1e6);
        }
    }

    /** The ramp and its windows as the profile carries them. */
    RampProfile profile() {
        RampProfile p = new RampProfile();
        p.strategy = ramp.strategy().wireName();
        p.startRate = ramp.startRate();
        p.endRate = ramp.endRate();
        p.over = overDuration ? "duration" : "requests";
        double span = spanNanos / 1e9;
        p.windowTtftMs = java.util.List.of(ttftMs);
        p.windowE2elMs = java.util.List.of(e2elMs);
        for (int w = 0; w < WINDOWS; w++) {
            double from = span * w / WINDOWS;
            double to = span * (w + 1) / WINDOWS;
            double width = to - from;
            Double rampRate =
                    overDuration
                            ? (ramp.integral(to, span) - ramp.integral(from, span)) / width
                            : null;
            p.windows.add(
                    new RampProfile.Window(
                            from,
                            to,
                            rampRate,
                            due[w],
                            due[w] / width,
                            sent[w],
                            sent[w] / width,
                            completed[w],
                            failed[w],
                            percentile(ttftMs[w], 50),
                            percentile(ttftMs[w], 99),
                            percentile(e2elMs[w], 50),
                            percentile(e2elMs[w], 99)));
        }
        return p;
    }

    /**
     * The exact percentile of a part of a stage (a window, a turn), or {@code null} when it has no
     * values or more than its sample cap: never an estimate.
     */
    static Double percentile(MetricRecorder r, double p) {
        return r.count() == 0 || !r.exact() ? null : r.percentile(p);
    }
}
