package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.inferencebench.profile.stats.MetricRecorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The ramp of a ramped stage and what each equal time window of it measured, so that the rate at
 * which latency turns up (the knee) is visible inside one stage. Written into the profile as {@code
 * config.ramp_up} and {@code metrics.ramp_up_windows}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public final class RampProfile {

    /** {@code linear} or {@code exponential}. */
    public String strategy;

    /** Rate at the ramp's start, req/s. */
    public double startRate;

    /** Rate at the ramp's end, req/s. */
    public double endRate;

    /**
     * What the rate ramps over: {@code duration} (the stage's length) or {@code requests} (its
     * number of prompts, when it has no length).
     */
    public String over;

    /** The stage's equal time windows, first to last. */
    public List<Window> windows = new ArrayList<>();

    /**
     * Why the windows are missing though the stage ramped, or {@code null}: runner pods that ramped
     * over their requests each drew their own schedule, so their windows cover different times and
     * cannot be added up.
     */
    public String windowsOmitted;

    /**
     * Each window's TTFT recorder (ms), in window order: carried from a runner pod to the operator
     * so that the windows of several pods merge like the stage's own statistics. Not written into
     * the profile.
     */
    public List<MetricRecorder> windowTtftMs;

    /** Each window's end-to-end latency recorder (ms), as {@link #windowTtftMs}. */
    public List<MetricRecorder> windowE2elMs;

    /**
     * The ramp of one stage as several runner pods ran it, each with its share of the rates: the
     * rates and every window's counts and rates add up; window percentiles come from the merged
     * recorders (histogram percentiles, as the stage's own). Windows merge only when every part cut
     * the same windows (a ramp over the stage's duration); otherwise they are omitted and {@link
     * #windowsOmitted} says why.
     *
     * @return the merged ramp, or {@code null} when no part ramped
     * @throws IllegalArgumentException when only some parts ramped or their strategies differ
     */
    public static RampProfile merge(List<RampProfile> parts) {
        if (parts.stream().allMatch(Objects::isNull)) {
            return null;
        }
        RampProfile first = parts.get(0);
        for (RampProfile p : parts) {
            if (p == null
                    || first == null
                    || !Objects.equals(p.strategy, first.strategy)
                    || !Objects.equals(p.over, first.over)) {
                throw new IllegalArgumentException(
                        "runners of one stage ramped differently (or only some ramped)");
            }
        }
        RampProfile m = new RampProfile();
        m.strategy = first.strategy;
        m.over = first.over;
        for (RampProfile p : parts) {
            m.startRate += p.startRate;
            m.endRate += p.endRate;
        }
        if (parts.size() == 1) {
            m.windows = new ArrayList<>(first.windows);
            m.windowsOmitted = first.windowsOmitted;
            m.windowTtftMs = first.windowTtftMs;
            m.windowE2elMs = first.windowE2elMs;
            return m;
        }
        String why = unmergeable(parts);
        if (why != null) {
            m.windowsOmitted = why;
            return m;
        }
        m.windowTtftMs = new ArrayList<>();
        m.windowE2elMs = new ArrayList<>();
        for (int w = 0; w < first.windows.size(); w++) {
            Window at = first.windows.get(w);
            double width = at.endSeconds() - at.startSeconds();
            Double rampRate = at.rampRate() == null ? null : 0.0;
            long due = 0;
            long sent = 0;
            long completed = 0;
            long failed = 0;
            MetricRecorder ttft = null;
            MetricRecorder e2el = null;
            for (RampProfile p : parts) {
                Window x = p.windows.get(w);
                if (rampRate != null) {
                    rampRate += x.rampRate();
                }
                due += x.due();
                sent += x.sent();
                completed += x.completed();
                failed += x.failed();
                ttft = PartRecorders.mergeInto(ttft, p.windowTtftMs.get(w));
                e2el = PartRecorders.mergeInto(e2el, p.windowE2elMs.get(w));
            }
            m.windowTtftMs.add(ttft);
            m.windowE2elMs.add(e2el);
            m.windows.add(
                    new Window(
                            at.startSeconds(),
                            at.endSeconds(),
                            rampRate,
                            due,
                            due / width,
                            sent,
                            sent / width,
                            completed,
                            failed,
                            PartRecorders.percentile(ttft, 50),
                            PartRecorders.percentile(ttft, 99),
                            PartRecorders.percentile(e2el, 50),
                            PartRecorders.percentile(e2el, 99)));
        }
        return m;
    }

    /** Why the parts' windows cannot be added up, or {@code null} when they can. */
    private static String unmergeable(List<RampProfile> parts) {
        RampProfile first = parts.get(0);
        for (RampProfile p : parts) {
            if (p.windowsOmitted != null) {
                return p.windowsOmitted;
            }
            if (p.windowTtftMs == null
                    || p.windowE2elMs == null
                    || p.windows.size() != first.windows.size()
                    || p.windowTtftMs.size() != p.windows.size()
                    || p.windowE2elMs.size() != p.windows.size()) {
                return "a runner pod reported its windows without their latency recorders";
            }
            for (int w = 0; w < first.windows.size(); w++) {
                Window a = first.windows.get(w);
                Window b = p.windows.get(w);
                if (a.startSeconds() != b.startSeconds() || a.endSeconds() != b.endSeconds()) {
                    return "each runner pod ramped over its own requests, so their windows cover"
                            + " different times; give the stage a duration to get windows";
                }
            }
        }
        return null;
    }

    /**
     * One time window of the stage: requests are counted in the window their send fell into (a
     * request sent after the last window's end, late, counts in the last).
     *
     * @param startSeconds window start, seconds from the stage's start
     * @param endSeconds window end, seconds from the stage's start
     * @param rampRate the ramp's mean rate over the window, req/s (the integral of its rate over
     *     the window, divided by the window's length); {@code null} for a ramp over the requests,
     *     whose rate follows the request count rather than time
     * @param due requests of the drawn schedule due in the window
     * @param scheduledRate {@code due} over the window's length, req/s: the rate the drawn schedule
     *     asked for (random arrivals draw more or fewer than the ramp's rate)
     * @param sent requests sent in the window
     * @param achievedRate {@code sent} over the window's length, req/s
     * @param completed requests sent in the window that succeeded
     * @param failed requests sent in the window that failed
     * @param ttftP50Ms median TTFT of the window's successes, ms; {@code null} when none measured
     *     it
     * @param ttftP99Ms p99 TTFT, ms; {@code null} as above
     * @param e2elP50Ms median end-to-end latency of the window's successes, ms; {@code null} when
     *     none
     * @param e2elP99Ms p99 end-to-end latency, ms; {@code null} as above
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Window(
            double startSeconds,
            double endSeconds,
            Double rampRate,
            long due,
            double scheduledRate,
            long sent,
            double achievedRate,
            long completed,
            long failed,
            Double ttftP50Ms,
            Double ttftP99Ms,
            Double e2elP50Ms,
            Double e2elP99Ms) {}
}
