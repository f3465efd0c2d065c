package io.inferencebench.runner.engine;

import io.inferencebench.profile.lpg.StageResult;
import java.util.TreeSet;

/**
 * Turns finished requests into one stage's {@link StageResult}. Requests finish on several event
 * loops; recording takes a short lock (a few hundred ns per request), which keeps every recorder
 * exact up to its sample cap instead of merging per-thread recorders into histograms.
 */
public final class StageRecorder {

    private static final double NANOS_PER_MS = 1e6;

    private final StageResult result;
    private final Slo slo;
    private final boolean recordScheduleLag;
    private final boolean recordSlotWait;
    private final long epochAnchor;
    private final long nanoAnchor;
    private final TreeSet<String> outputSources = new TreeSet<>();
    private final TreeSet<String> inputSources = new TreeSet<>();
    private final StageObserver observer;
    private final LagTrace trace = LagTrace.forStage();
    private RampWindows rampWindows;
    private ConversationTurns conversationTurns;
    private ModelStats modelStats;
    private boolean finishedStage;

    private long firstSend = Long.MAX_VALUE;
    private long lastSend = Long.MIN_VALUE;
    private long lastEnd = Long.MIN_VALUE;
    private volatile long finishedCount;
    private volatile long completedCount;
    private volatile long failedCount;

    StageRecorder(
            StageResult result,
            Slo slo,
            boolean recordScheduleLag,
            boolean recordSlotWait,
            long epochAnchor,
            long nanoAnchor,
            StageObserver observer) {
        this.result = result;
        this.slo = slo;
        this.recordScheduleLag = recordScheduleLag;
        this.recordSlotWait = recordSlotWait;
        this.epochAnchor = epochAnchor;
        this.nanoAnchor = nanoAnchor;
        this.observer = observer;
        if (slo.configured()) {
            result.sloTtftMs = slo.ttftMs();
            result.sloTpotMs = slo.tpotMs();
            result.sloE2elMs = slo.e2elMs();
        }
    }

    /** A ramped stage's windows (or {@code null}), set before its first request is sent. */
    synchronized void rampWindows(RampWindows windows) {
        this.rampWindows = windows;
    }

    /** A conversation stage's per-turn records (or {@code null}), set before its first request. */
    synchronized void conversationTurns(ConversationTurns turns) {
        this.conversationTurns = turns;
    }

    /** A model mix's per-model records (or {@code null}), set before the first request. */
    synchronized void modelStats(ModelStats stats) {
        this.modelStats = stats;
    }

    /** A session's first turn is being sent (nanoTime {@code nanos}). */
    synchronized void sessionStarted(long nanos) {
        if (conversationTurns != null && !finishedStage) {
            conversationTurns.sessionStarted(nanos);
        }
    }

    /** A session ended: every turn succeeded ({@code completed}), or one failed. */
    synchronized void sessionEnded(boolean completed) {
        if (conversationTurns == null || finishedStage) {
            // After the stage's result was built (a session a cancel stopped in its think time):
            // it counts as cut, which the result already says.
            return;
        }
        if (completed) {
            conversationTurns.sessionCompleted();
        } else {
            conversationTurns.sessionAbandoned();
        }
    }

    public long finished() {
        return finishedCount;
    }

    public long completed() {
        return completedCount;
    }

    public long failed() {
        return failedCount;
    }

    synchronized void record(RequestExecution e) {
        if (trace != null && e.wasSent()) {
            trace.add(e);
        }
        if (e.cancelled) {
            // Aborted by a cancel: its send (if any) belongs to the stage's window and lag, its
            // outcome to nothing.
            if (e.wasSent()) {
                firstSend = Math.min(firstSend, e.sendNanos);
                lastSend = Math.max(lastSend, e.sendNanos);
                if (recordScheduleLag) {
                    result.scheduleLagMs.record(
                            Math.max(0, e.sendNanos - e.dueNanos) / NANOS_PER_MS);
                }
            }
            result.cancelledRequests++;
            finishedCount++;
            return;
        }
        firstSend = Math.min(firstSend, e.sendNanos);
        lastSend = Math.max(lastSend, e.sendNanos);
        lastEnd = Math.max(lastEnd, e.endNanos);
        if (recordScheduleLag) {
            result.scheduleLagMs.record(Math.max(0, e.sendNanos - e.dueNanos) / NANOS_PER_MS);
        }
        if (recordSlotWait || e.poolWaitNanos > 0) {
            result.slotWaitMs.record(e.slotWaitNanos() / NANOS_PER_MS);
        }
        if (rampWindows != null) {
            rampWindows.record(e);
        }
        if (conversationTurns != null) {
            conversationTurns.record(e);
        }
        if (modelStats != null) {
            modelStats.record(e);
        }
        if (!e.succeeded()) {
            result.countFailure(e.failure().wireName());
            failedCount++;
        } else {
            recordSuccess(e);
            completedCount++;
        }
        finishedCount++;
        observer.onFinished(e);
    }

    private void recordSuccess(RequestExecution e) {
        result.completed++;
        int in = e.inputTokens();
        int out = e.outputTokens();
        inputSources.add(e.inputTokenSource());
        outputSources.add(e.outputTokenSource());
        double latencyMs = e.latencyNanos() / NANOS_PER_MS;
        result.latencyMs.record(latencyMs);
        // NaN = not measured: a response that was not streamed has no first-token instant, so it
        // has no TTFT, ITL or TPOT (rather than TTFT = latency and TPOT = 0), and an SLO on them is
        // not met (NaN <= threshold is false).
        double ttftMs = Double.NaN;
        double tpotMs = Double.NaN;
        if (e.streamed()) {
            ttftMs = e.ttftNanos() / NANOS_PER_MS;
            result.ttftMs.record(ttftMs);
            for (int i = 1; i < e.contentEvents(); i++) {
                result.itlMs.record((e.contentInstant(i) - e.contentInstant(i - 1)) / NANOS_PER_MS);
            }
            tpotMs = tpotMs(e, latencyMs, ttftMs);
            if (out > 1) {
                result.tpotMs.record(tpotMs);
            }
        } else {
            result.nonStreamedRequests++;
        }
        if (in + out > 0) {
            result.perTokenLatencySec.record(latencyMs / 1000.0 / (in + out));
        }
        if (out > 0) {
            result.perOutputTokenLatencyMs.record(latencyMs / out);
        }
        result.inputLen.record(in);
        result.outputLen.record(out);
        result.totalInputTokens += in;
        result.totalOutputTokens += out;
        if (slo.configured() && slo.met(ttftMs, tpotMs, latencyMs)) {
            result.goodputRequests++;
        }
    }

    /**
     * A streamed success's time per output token after the first, ms: one output token has none
     * and, like vLLM's goodput, does not miss a TPOT SLO (0); {@code NaN} for a response that was
     * not streamed (not measured).
     */
    static double tpotMs(RequestExecution e, double latencyMs, double ttftMs) {
        if (!e.streamed()) {
            return Double.NaN;
        }
        int out = e.outputTokens();
        return out > 1 ? (latencyMs - ttftMs) / (out - 1) : 0;
    }

    /** Completes the result once every dispatched request has been recorded. */
    synchronized StageResult finish(long sent, long inFlightPeak, boolean partial) {
        result.partial = partial;
        if (trace != null && result.stageIndex >= 0) {
            trace.write(result.stageIndex);
        }
        result.sent = sent;
        result.inFlightPeak = inFlightPeak;
        if (firstSend != Long.MAX_VALUE) {
            result.firstDispatchEpochNanos = toEpoch(firstSend);
            result.lastDispatchEpochNanos = toEpoch(lastSend);
            result.lastCompletionEpochNanos = toEpoch(Math.max(lastEnd, lastSend));
        }
        result.outputTokenSource = outputSources.isEmpty() ? null : String.join("+", outputSources);
        result.inputTokenSource = inputSources.isEmpty() ? null : String.join("+", inputSources);
        if (rampWindows != null) {
            result.rampUp = rampWindows.profile();
        }
        if (conversationTurns != null) {
            result.conversation = conversationTurns.profile();
        }
        if (modelStats != null) {
            result.byModel = modelStats.profile();
        }
        finishedStage = true;
        return result;
    }

    /**
     * The schedule the stage drew: {@code due} requests, the first due at {@code firstDueNanos} and
     * the last at {@code lastDueNanos} (nanoTime).
     */
    synchronized void recordDue(long due, long firstDueNanos, long lastDueNanos) {
        result.due = due;
        if (due > 0) {
            result.firstDueEpochNanos = toEpoch(firstDueNanos);
            result.lastDueEpochNanos = toEpoch(lastDueNanos);
        }
    }

    private long toEpoch(long nanos) {
        return epochAnchor + (nanos - nanoAnchor);
    }
}
