package io.inferencebench.runner.cli;

import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.RequestExecution;
import io.inferencebench.runner.engine.StageObserver;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.engine.StageRecorder;
import java.util.Arrays;
import java.util.Objects;

/** Fans stage events out to several observers (null entries are skipped). */
final class StageObservers implements StageObserver {
    private final StageObserver[] observers;

    private StageObservers(StageObserver[] observers) {
        this.observers = observers;
    }

    static StageObserver of(StageObserver... observers) {
        return new StageObservers(
                Arrays.stream(observers).filter(Objects::nonNull).toArray(StageObserver[]::new));
    }

    @Override
    public void onStageStart(StagePlan plan, StageRecorder recorder, LoadEngine.Live live) {
        for (StageObserver o : observers) {
            o.onStageStart(plan, recorder, live);
        }
    }

    @Override
    public void onFinished(RequestExecution execution) {
        for (StageObserver o : observers) {
            o.onFinished(execution);
        }
    }

    @Override
    public void onStageEnd(StagePlan plan) {
        for (StageObserver o : observers) {
            o.onStageEnd(plan);
        }
    }
}
