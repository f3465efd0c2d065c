package io.inferencebench.operator.metrics;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.time.Duration;

/**
 * The server-metric windows of a run's stages, as the lifecycle drives them: scraping starts with
 * the first barrier, each barrier opens a window, each finished stage gets its report, a finished
 * run is forgotten. {@link ServerMetricsScraper} is the real one.
 */
public interface StageWindows {

    /** Starts collecting for a run (no-op when already collecting, disabled, or Prometheus). */
    void track(BenchmarkRun run);

    /**
     * Announces a stage's start barrier.
     *
     * @param startMillis the barrier, epoch ms
     */
    void windowStarts(BenchmarkRun run, long startMillis);

    /**
     * How long until a finished stage's report can be read; zero when due.
     *
     * @param stage the finished stage, 1-based
     * @param nowMillis now, epoch ms
     */
    Duration reportDueIn(BenchmarkRun run, int stage, long nowMillis);

    /**
     * The server-metric report of one stage window.
     *
     * @param stage the stage, 1-based
     * @param startMillis window start (the stage's barrier), epoch ms
     * @param endMillis window end, epoch ms
     * @param firstRequestMillis the stage's first request, epoch ms, or {@code null} when unknown
     * @return the report, or {@code null} when server metrics are disabled or not collected
     */
    ServerMetricsReport report(
            BenchmarkRun run, int stage, long startMillis, long endMillis, Long firstRequestMillis);

    /**
     * Stops collecting for a run and forgets its samples.
     *
     * @param finishedJustNow whether the run became terminal in this reconcile
     */
    void forget(BenchmarkRun run, boolean finishedJustNow);
}
