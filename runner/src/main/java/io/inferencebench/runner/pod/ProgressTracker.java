package io.inferencebench.runner.pod;

import io.inferencebench.crds.workorder.ProgressReport;
import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.RequestExecution;
import io.inferencebench.runner.engine.StageObserver;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.engine.StageRecorder;
import java.time.Clock;
import java.util.Arrays;

/**
 * Collects what {@link ProgressReport} needs while a stage runs. The engine calls it on event
 * loops; the reporter thread reads it. The live TTFT median is taken over a window of the most
 * recent successful requests, enough for a progress column, not a measurement (the stage result
 * carries the exact figures).
 */
final class ProgressTracker implements StageObserver {

    static final int TTFT_WINDOW = 1024;

    private final Clock clock;
    private final double[] ttftMs = new double[TTFT_WINDOW];
    private long ttftCount;
    private volatile LoadEngine.Live live;
    private volatile int stage;

    ProgressTracker(Clock clock) {
        this.clock = clock;
    }

    /** The 1-based stage the next {@code onStageStart} belongs to. */
    void beginStage(int stageNumber) {
        synchronized (ttftMs) {
            ttftCount = 0;
        }
        live = null;
        stage = stageNumber;
    }

    @Override
    public void onStageStart(StagePlan plan, StageRecorder recorder, LoadEngine.Live l) {
        live = l;
    }

    @Override
    public void onFinished(RequestExecution execution) {
        if (execution.succeeded() && execution.ttftNanos() > 0) {
            synchronized (ttftMs) {
                ttftMs[(int) (ttftCount++ % TTFT_WINDOW)] = execution.ttftNanos() / 1e6;
            }
        }
    }

    /** The current progress; zeros before the stage's first request. */
    ProgressReport snapshot() {
        LoadEngine.Live l = live;
        String now = clock.instant().toString();
        if (l == null) {
            return new ProgressReport(stage, 0, 0, 0, 0, null, now);
        }
        double elapsed = (System.nanoTime() - l.startNanos) / 1e9;
        double rate = elapsed <= 0 ? 0 : l.issued() / elapsed;
        return new ProgressReport(
                stage,
                l.recorder.completed(),
                l.recorder.failed(),
                l.inFlight(),
                rate,
                ttftMedian(),
                now);
    }

    Double ttftMedian() {
        double[] window;
        synchronized (ttftMs) {
            int n = (int) Math.min(ttftCount, TTFT_WINDOW);
            if (n == 0) {
                return null;
            }
            window = Arrays.copyOf(ttftMs, n);
        }
        return median(window);
    }

    static double median(double[] values) {
        Arrays.sort(values);
        int n = values.length;
        return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    }
}
