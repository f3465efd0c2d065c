package io.inferencebench.operator.run;

import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.LiveStatus;
import io.inferencebench.crds.v1alpha1.RunProgress;
import io.inferencebench.crds.v1alpha1.RunSummary;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.crds.workorder.ProgressReport;
import io.inferencebench.operator.Parts;
import io.inferencebench.operator.StatusAggregator;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * What {@code kubectl get benchmarkruns} shows besides the phase (the printer columns Stage, Done,
 * RPS, TTFT P50, Latency P99, SLO) and status.live while a stage runs.
 */
public final class LiveView {

    private LiveView() {}

    /**
     * The summary of a status (the printer columns RPS, TTFT P50, Latency P99, SLO), made when
     * missing.
     */
    static RunSummary summary(BenchmarkRunStatus status) {
        if (status.getSummary() == null) {
            status.setSummary(new RunSummary());
        }
        return status.getSummary();
    }

    /** Formats milliseconds for kubectl: {@code 112ms}, {@code 1.84s}. */
    static String millis(Double ms) {
        if (ms == null) {
            return null;
        }
        return ms < 1000
                ? String.format(Locale.ROOT, "%.0fms", ms)
                : String.format(Locale.ROOT, "%.2fs", ms / 1000);
    }

    /**
     * The live view of a running stage from the runners' progress reports: status.live, the Done
     * column (progress) and the running RPS and TTFT P50 columns.
     */
    static void live(
            StatusAggregator status, Parts parts, int stage, List<StageSpec> stages, Instant now) {
        long completed = 0;
        long failed = 0;
        long inFlight = 0;
        double rate = 0;
        double ttftSum = 0;
        int ttftCount = 0;
        int reporting = 0;
        for (Parts.Part part : parts.all()) {
            ProgressReport p = part.progress();
            if (p == null || p.stage() != stage) {
                continue;
            }
            reporting++;
            completed += p.completed();
            failed += p.failed();
            inFlight += p.inFlight();
            rate += p.achievedRate();
            if (p.ttftP50Ms() != null) {
                ttftSum += p.ttftP50Ms();
                ttftCount++;
            }
        }
        long doneBefore = 0;
        long failedBefore = 0;
        if (status.view().getResults() != null) {
            for (StageSummary r : status.view().getResults()) {
                doneBefore += r.getCompleted() == null ? 0 : r.getCompleted();
                failedBefore += r.getFailed() == null ? 0 : r.getFailed();
            }
        }
        LiveStatus live = new LiveStatus();
        live.setUpdatedAt(StatusAggregator.format(now));
        live.setStage(stage);
        live.setRunnersReporting(reporting);
        live.setCompleted(completed);
        live.setFailed(failed);
        live.setInFlight(inFlight);
        live.setRequestRate(stages.get(stage - 1).getRequestRate());
        live.setAchievedRate(rate);
        live.setTtftP50Ms(ttftCount == 0 ? null : ttftSum / ttftCount);
        long allCompleted = doneBefore + completed;
        long allFailed = failedBefore + failed;
        status.apply(
                s -> {
                    s.setLive(live);
                    s.setProgress(progress(stage, stages, allCompleted, allFailed));
                    if (live.getTtftP50Ms() != null) {
                        summary(s).setTtftP50(millis(live.getTtftP50Ms()));
                    }
                    summary(s).setRps(String.format(Locale.ROOT, "%.2f", live.getAchievedRate()));
                });
    }

    /**
     * The progress once a stage's results are in status: the finished stages' completed and failed
     * requests.
     */
    static RunProgress finished(int stage, List<StageSpec> stages, List<StageSummary> results) {
        long completed = 0;
        long failed = 0;
        for (StageSummary r : results) {
            completed += r.getCompleted() == null ? 0 : r.getCompleted();
            failed += r.getFailed() == null ? 0 : r.getFailed();
        }
        return progress(stage, stages, completed, failed);
    }

    /** The Stage (k/n) and Done (completed/total, total unknown for timed stages) columns. */
    static RunProgress progress(int stage, List<StageSpec> stages, long completed, long failed) {
        RunProgress progress = new RunProgress();
        progress.setCurrentStage(stage);
        progress.setStages(stages.size());
        progress.setCompleted(completed);
        progress.setFailed(failed);
        Long total = 0L;
        for (StageSpec s : stages) {
            if (s.getNumPrompts() == null) {
                total = null;
                break;
            }
            total += s.getNumPrompts();
        }
        progress.setTotal(total);
        progress.setDone(completed + "/" + (total == null ? "?" : total.toString()));
        return progress;
    }
}
