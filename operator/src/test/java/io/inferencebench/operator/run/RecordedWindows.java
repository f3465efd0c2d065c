package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.operator.metrics.StageWindows;
import io.inferencebench.profile.server.ServerMetricsReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Stage windows that record what the steps announce and report what the test sets. */
final class RecordedWindows implements StageWindows {

    int tracked;
    final List<Long> windowStarts = new ArrayList<>();
    Duration dueIn = Duration.ZERO;
    ServerMetricsReport report;
    final List<long[]> reported = new ArrayList<>();
    final List<Boolean> forgotten = new ArrayList<>();

    @Override
    public void track(BenchmarkRun run) {
        tracked++;
    }

    @Override
    public void windowStarts(BenchmarkRun run, long startMillis) {
        windowStarts.add(startMillis);
    }

    @Override
    public Duration reportDueIn(BenchmarkRun run, int stage, long nowMillis) {
        return dueIn;
    }

    @Override
    public ServerMetricsReport report(
            BenchmarkRun run,
            int stage,
            long startMillis,
            long endMillis,
            Long firstRequestMillis) {
        reported.add(
                new long[] {
                    stage,
                    startMillis,
                    endMillis,
                    firstRequestMillis == null ? -1 : firstRequestMillis
                });
        return report;
    }

    @Override
    public void forget(BenchmarkRun run, boolean finishedJustNow) {
        forgotten.add(finishedJustNow);
    }
}
