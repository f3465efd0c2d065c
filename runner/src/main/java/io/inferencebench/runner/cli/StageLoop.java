package io.inferencebench.runner.cli;

import io.inferencebench.profile.cache.CacheStateCheck;
import io.inferencebench.profile.cache.PrefixCacheReset;
import io.inferencebench.profile.lpg.PrefixCacheHits;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.Repeats;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.engine.JvmErrors;
import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.metrics.ServerMetricsSource;
import io.inferencebench.runner.session.PrefixWarmup;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The command line's stages in order: the cool-down between them, the server-metric window of each,
 * its profile written as soon as it ends, the progress view told. Stops at an interrupt; a stage
 * that throws ends the loop but keeps what the finished stages produced. So does a JVM error (out
 * of memory, ...): the stage it hit is not written (its figures stop at an arbitrary point, and the
 * heap is short), the outcome's failure is a {@link JvmErrorStop}.
 */
final class StageLoop {

    /** The JVM failed during stage {@code stage} (1-based); the stages before it were written. */
    static final class JvmErrorStop extends RuntimeException {
        private static final long serialVersionUID = 1L;

        final transient VirtualMachineError error;
        final int stage;

        JvmErrorStop(VirtualMachineError error, int stage) {
            super(JvmErrors.describe(error), null, false, false);
            this.error = error;
            this.stage = stage;
        }

        /**
         * The failure the command line reports: what failed, the stage it stopped, what was kept.
         */
        Main.JvmFailure failure(List<ResultFiles.Written> files) {
            long written = files.stream().filter(ResultFiles.Written::ok).count();
            return new Main.JvmFailure(
                    JvmErrors.describe(error)
                            + "; stage "
                            + stage
                            + " stopped; finished stages kept ("
                            + written
                            + (written == 1 ? " profile" : " profiles")
                            + " written)");
        }
    }

    /**
     * What the loop produced.
     *
     * @param results the stages that ran (the last one partial when interrupted)
     * @param serverReports the server metrics of each, {@code null} entries without a source
     * @param files the profile file of each
     * @param failure what ended the loop early, or {@code null}
     */
    record Outcome(
            List<StageResult> results,
            List<ServerMetricsReport> serverReports,
            List<ResultFiles.Written> files,
            RuntimeException failure) {}

    private final LoadEngine engine;
    private final HttpTransport transport;
    private final ServerMetricsSource serverMetrics;
    private final List<String> cacheTargets;
    private final PrefixCacheReset cacheReset;
    private final PrefixWarmup cacheWarmup;
    private final CacheStateCheck.Implied impliedHits;
    private final ResultFiles resultFiles;
    private final ProfileContext context;
    private final Progress progress;
    private final ErrorSampler errors;
    private final PrintWriter err;

    StageLoop(
            LoadEngine engine,
            HttpTransport transport,
            ServerMetricsSource serverMetrics,
            List<String> cacheTargets,
            PrefixCacheReset cacheReset,
            PrefixWarmup cacheWarmup,
            CacheStateCheck.Implied impliedHits,
            ResultFiles resultFiles,
            ProfileContext context,
            Progress progress,
            ErrorSampler errors,
            PrintWriter err) {
        this.engine = engine;
        this.transport = transport;
        this.serverMetrics = serverMetrics;
        this.cacheTargets = cacheTargets;
        this.cacheReset = cacheReset;
        this.cacheWarmup = cacheWarmup;
        this.impliedHits = impliedHits;
        this.resultFiles = resultFiles;
        this.context = context;
        this.progress = progress;
        this.errors = errors;
        this.err = err;
    }

    /**
     * Runs the stages.
     *
     * @param warmupSent warm-up requests sent before the first stage (recorded in its profile)
     * @param nonStreamedWarned whether the user was already told responses are not streamed
     * @param repeats how many times over {@code plans} runs one list of stages (1: once)
     */
    Outcome run(
            List<StagePlan> plans,
            Duration cooldown,
            long warmupSent,
            boolean nonStreamedWarned,
            int repeats)
            throws InterruptedException {
        List<StageResult> results = new ArrayList<>();
        List<ResultFiles.Written> files = new ArrayList<>();
        List<ServerMetricsReport> serverReports = new ArrayList<>();
        boolean warned = nonStreamedWarned;
        int stage = 0;
        try {
            for (int i = 0; i < plans.size() && !engine.isCancelled(); i++) {
                stage = i + 1;
                if (i > 0 && !cooldown.isZero()) {
                    sleepUnlessCancelled(cooldown);
                    if (engine.isCancelled()) {
                        break;
                    }
                }
                ProfileContext stageContext = resetPrefixCache(stage);
                String repeat = Repeats.label(i, plans.size(), repeats);
                if (repeat != null) {
                    stageContext = stageContext.withDimension(Repeats.DIMENSION, repeat);
                }
                if (serverMetrics != null) {
                    serverMetrics.stageStarting();
                }
                StageResult result = engine.runStage(plans.get(i));
                if (engine.jvmError() != null) {
                    // The server metrics' window is left open: close() ends it.
                    return new Outcome(
                            results,
                            serverReports,
                            files,
                            new JvmErrorStop(engine.jvmError(), stage));
                }
                if (result.partial && result.sent == 0) {
                    // Cancelled before its first request: nothing to report.
                    if (serverMetrics != null) {
                        serverMetrics.stageFinished();
                    }
                    break;
                }
                ServerMetricsReport serverReport =
                        serverMetrics == null ? null : serverMetrics.stageFinished();
                CacheStateCheck.Verification cacheCheck = checkCacheState(stage, serverReport);
                if (i == 0) {
                    result.warmupExcluded = warmupSent;
                }
                if (result.nonStreamedRequests > 0 && !warned) {
                    err.printf(
                            Locale.ROOT,
                            "warning: stage %d: %d of %d successful responses were not streamed"
                                    + " (the server ignored \"stream\": true?); they have no"
                                    + " TTFT, ITL or TPOT, are left out of those statistics"
                                    + " (non_streamed_requests in the profile) and do not meet"
                                    + " a ttft or tpot SLO%n",
                            result.stageIndex + 1,
                            result.nonStreamedRequests,
                            result.completed);
                    warned = true;
                }
                results.add(result);
                serverReports.add(serverReport);
                ResultFiles.Written written = write(result, stageContext, serverReport, cacheCheck);
                files.add(written);
                progress.stageDone(plans.get(i), result, errors.take());
            }
        } catch (RuntimeException e) {
            // The stages that finished are still summarised before the failure is reported.
            return new Outcome(results, serverReports, files, e);
        } catch (VirtualMachineError e) {
            // On this thread (writing, summarising, the server metrics): the same end.
            return new Outcome(results, serverReports, files, new JvmErrorStop(e, stage));
        }
        return new Outcome(results, serverReports, files, null);
    }

    /**
     * Empties the servers' prefix caches when asked to, then warms them when asked to; the stage's
     * profile context then says whether the stage started cold, warm or from an undeclared state.
     */
    private ProfileContext resetPrefixCache(int stage) throws InterruptedException {
        if (cacheReset == null && cacheWarmup == null) {
            return context;
        }
        List<String> failures = new ArrayList<>();
        if (cacheReset != null) {
            PrefixCacheReset.Round round = cacheReset.resetAll();
            if (!round.failures().isEmpty()) {
                failures.add("not reset (" + round.describeFailures() + ")");
            }
        }
        if (cacheWarmup != null) {
            PrefixWarmup.Round warming = cacheWarmup.warmAll(cacheTargets);
            if (!warming.failures().isEmpty()) {
                failures.add("not warmed (" + warming.describeFailures() + ")");
            }
        }
        lastStateDeclared = failures.isEmpty();
        if (!failures.isEmpty()) {
            err.printf(
                    "warning: stage %d: prefix cache %s; the stage's cache state is undeclared%n",
                    stage, TerminalText.oneLine(String.join(", ", failures)));
            err.flush();
        }
        String declared = cacheWarmup != null ? "warm" : "cold";
        return context.withDimension("prefix_cache", lastStateDeclared ? declared : "undeclared");
    }

    /** Whether the last reset (and warming) reached every server (set before each stage). */
    private boolean lastStateDeclared;

    /**
     * After a stage that every server said it started cold or warm: its scraped replicas' own
     * counters held to the rate the workload implies ({@link CacheStateCheck}), with a warning when
     * they contradict it, e.g. a replica missing from {@code --reset-prefix-cache} that still held
     * the previous stage's prompts.
     *
     * @return the check, for the profile; {@code null} without a declared state or counters
     */
    private CacheStateCheck.Verification checkCacheState(
            int stage, ServerMetricsReport serverReport) {
        if ((cacheReset == null && cacheWarmup == null)
                || serverReport == null
                || !lastStateDeclared) {
            return null;
        }
        CacheStateCheck.Verification check =
                CacheStateCheck.verify(null, PrefixCacheHits.of(serverReport), impliedHits);
        if (Boolean.FALSE.equals(check.verified())) {
            err.printf(
                    "warning: stage %d: the prefix cache was %s: %s%n",
                    stage,
                    cacheWarmup == null
                            ? "reset but was not cold"
                            : cacheReset == null
                                    ? "warmed but was not warm"
                                    : "reset and warmed but was not warm",
                    TerminalText.oneLine(check.message()));
            err.flush();
        }
        return check;
    }

    private ResultFiles.Written write(
            StageResult result,
            ProfileContext stageContext,
            ServerMetricsReport serverReport,
            CacheStateCheck.Verification cacheCheck) {
        ResultFiles.Written written =
                resultFiles.write(
                        result,
                        stageContext,
                        serverReport,
                        cacheCheck,
                        reason -> {
                            err.printf(
                                    "warning: stage %d: profile write failed (%s);"
                                            + " closing idle connections and retrying"
                                            + " once%n",
                                    result.stageIndex + 1, TerminalText.oneLine(reason));
                            transport.closeIdleConnections();
                        });
        if (!written.ok()) {
            err.printf(
                    "error: stage %d: profile not written to %s: %s (retried once; the"
                            + " stage's figures are kept for the summary, the sweep goes"
                            + " on)%n",
                    result.stageIndex + 1,
                    TerminalText.oneLine(String.valueOf(written.path())),
                    TerminalText.oneLine(written.failure()));
            err.flush();
        }
        if (written.reportFailure() != null) {
            err.printf(
                    "error: stage %d: benchmark report not written to %s: %s (retried once)%n",
                    result.stageIndex + 1,
                    TerminalText.oneLine(String.valueOf(written.report())),
                    TerminalText.oneLine(written.reportFailure()));
            err.flush();
        }
        return written;
    }

    private void sleepUnlessCancelled(Duration pause) throws InterruptedException {
        long end = System.nanoTime() + pause.toNanos();
        long left;
        while (!engine.isCancelled() && (left = end - System.nanoTime()) > 0) {
            Thread.sleep(Math.min(50, Math.max(1, left / 1_000_000)));
        }
    }
}
