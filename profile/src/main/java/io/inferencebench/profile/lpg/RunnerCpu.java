package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * How much CPU a runner had during one stage, measured by the runner itself: the process's CPU time
 * against the stage's wall time and the CPUs the JVM may use (which already reflects {@code
 * taskset}, a cgroup CPU quota or {@code -XX:ActiveProcessorCount}), the time its threads waited on
 * a run queue (Linux {@code /proc/self/task/}{@code *}{@code /schedstat}), and the time its
 * cgroup's quota throttled it ({@code cpu.stat}).
 *
 * <p>A runner that ran out of CPU sends late and measures its own queueing as server latency: its
 * stage is not a valid measurement of the requested load, whatever the other figures say.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public final class RunnerCpu {

    /** CPU seconds the runner process used in the stage. */
    public double cpuSeconds;

    /** Wall seconds of the stage. */
    public double wallSeconds;

    /** CPUs the runner's JVM may use ({@link Runtime#availableProcessors()}). */
    public double availableCpus;

    /** Seconds its threads spent runnable but waiting for a CPU; {@code null} when unknown. */
    public Double runQueueWaitSeconds;

    /** Seconds its cgroup's CPU quota throttled it; {@code null} when there is no quota. */
    public Double throttledSeconds;

    /** Which runner (pod index) this is; {@code null} for the command line. */
    public Integer runner;

    /** Share of the available CPU time the runner used, in {@code [0, 1]} (more by rounding). */
    @JsonIgnore
    public double utilization() {
        return wallSeconds > 0 && availableCpus > 0
                ? cpuSeconds / (wallSeconds * availableCpus)
                : 0;
    }

    /** Run-queue wait per wall second (threads waiting for a CPU, on average); 0 when unknown. */
    @JsonIgnore
    public double runQueueWaitRatio() {
        return runQueueWaitSeconds == null || wallSeconds <= 0
                ? 0
                : runQueueWaitSeconds / wallSeconds;
    }

    /** Share of the stage the cgroup quota throttled the runner; 0 when unknown. */
    @JsonIgnore
    public double throttledRatio() {
        return throttledSeconds == null || wallSeconds <= 0 ? 0 : throttledSeconds / wallSeconds;
    }

    /**
     * The most starved of several runners' figures: one runner without CPU invalidates its share of
     * the load, so the merge keeps the worst, not an average that would hide it.
     *
     * @param parts each runner's figures; {@code null} entries are skipped
     * @return the worst, or {@code null} when none was measured
     */
    public static RunnerCpu worst(List<RunnerCpu> parts) {
        RunnerCpu worst = null;
        for (RunnerCpu p : parts) {
            if (p != null && (worst == null || p.severity() > worst.severity())) {
                worst = p;
            }
        }
        return worst;
    }

    private double severity() {
        return Math.max(
                utilization() / LoadVerdict.MAX_RUNNER_CPU_UTILIZATION,
                Math.max(
                        runQueueWaitRatio() / LoadVerdict.MAX_RUN_QUEUE_WAIT_RATIO,
                        throttledRatio() / LoadVerdict.MAX_THROTTLED_RATIO));
    }
}
