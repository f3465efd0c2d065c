package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.List;

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
