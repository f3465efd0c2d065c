package io.inferencebench.runner.engine;

/** Live view of a running stage (progress display, Prometheus). Called on event loops. */
public interface StageObserver {
    StageObserver NONE = new StageObserver() {};

    default void onStageStart(StagePlan plan, StageRecorder recorder, LoadEngine.Live live) {}

    default void onFinished(RequestExecution execution) {}

    default void onStageEnd(StagePlan plan) {}
}
