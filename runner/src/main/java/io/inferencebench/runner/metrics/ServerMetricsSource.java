package io.inferencebench.runner.metrics;

import io.inferencebench.profile.server.ServerMetricsReport;

/**
 * Where a standalone run gets the server's metrics for each stage window: its own scrapes of the
 * server's {@code /metrics}, or a Prometheus server that already scrapes it.
 */
public interface ServerMetricsSource extends AutoCloseable {

    /** Marks the start of a stage window; called on the main thread before the stage's load. */
    void stageStarting();

    /**
     * Marks the end of the stage window and summarises it; never throws for an unreachable server.
     *
     * @return the window's statistics, with coverage saying how much of the window was observed
     */
    ServerMetricsReport stageFinished();

    /**
     * The run is being interrupted: what the source is waiting for is aborted, so that {@link
     * #stageFinished()} returns at once (its report then says the window was not read). Callable
     * from any thread; a source whose every wait is short may do nothing.
     */
    default void cancel() {}

    /** Describes the source for the run's header line. */
    String describe();

    @Override
    void close();
}
