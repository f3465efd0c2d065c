package io.inferencebench.runner.engine;

import io.inferencebench.profile.lpg.ConversationProfile;
import io.inferencebench.profile.stats.MetricRecorder;

/**
 * Records a stage sent as conversations: the sessions it started and how they ended, and per turn
 * index the requests sent and the TTFT, end-to-end latency and prompt length of those that
 * succeeded, from the same requests the stage's own statistics record. Percentiles are the
 * recorders' (exact up to the sample cap; a turn past it has none rather than an estimate). Called
 * under the {@link StageRecorder}'s lock.
 */
final class ConversationTurns {

    private final Conversations shape;
    private final long[] sent;
    private final long[] completed;
    private final long[] failed;
    private final long[] promptTokens;
    private final MetricRecorder[] ttftMs;
    private final MetricRecorder[] e2elMs;
    private final Double sessionRate;
    private final long epochAnchor;
    private final long nanoAnchor;
    private long firstStart = Long.MAX_VALUE;
    private long lastStart = Long.MIN_VALUE;
    private long sessionsStarted;
    private long sessionsCompleted;
    private long sessionsAbandoned;

    /**
     * @param sessionRate sessions/s of a stage whose sessions start at a rate, or {@code null} for
     *     a closed loop of users
     * @param epochAnchor the epoch nanoseconds of {@code nanoAnchor}, to date session starts
     */
    ConversationTurns(
            Conversations shape,
            Double sessionRate,
            int sampleCap,
            long epochAnchor,
            long nanoAnchor) {
        this.shape = shape;
        this.sessionRate = sessionRate;
        this.epochAnchor = epochAnchor;
        this.nanoAnchor = nanoAnchor;
        int turns = shape.turns();
        this.sent = new long[turns];
        this.completed = new long[turns];
        this.failed = new long[turns];
        this.promptTokens = new long[turns];
        this.ttftMs = new MetricRecorder[turns];
        this.e2elMs = new MetricRecorder[turns];
        for (int t = 0; t < turns; t++) {
            ttftMs[t] = new MetricRecorder(sampleCap);
            e2elMs[t] = new MetricRecorder(sampleCap);
        }
    }

    void sessionStarted(long nanos) {
        sessionsStarted++;
        firstStart = Math.min(firstStart, nanos);
        lastStart = Math.max(lastStart, nanos);
    }

    void sessionCompleted() {
        sessionsCompleted++;
    }

    void sessionAbandoned() {
        sessionsAbandoned++;
    }

    /** Records a finished request of a session (not one a cancel caught). */
    void record(RequestExecution e) {
        int t = e.turn;
        if (t < 0 || t >= sent.length) {
            return;
        }
        sent[t]++;
        if (!e.succeeded()) {
            failed[t]++;
            return;
        }
        completed[t]++;
        promptTokens[t] += e.inputTokens();
        e2elMs[t].record(e.latencyNanos() / 1e6);
        if (e.streamed()) {
            ttftMs[t].record(e.ttftNanos() / 1e6);
        }
    }

    /** The sessions and turns as the profile carries them. */
    ConversationProfile profile() {
        ConversationProfile p = new ConversationProfile();
        p.turnsPerSession = shape.turns();
        p.thinkTimeSeconds = shape.thinkTime().toNanos() / 1e9;
        p.thinkTimeDistribution = shape.exponential() ? "exponential" : "fixed";
        p.sessionsStarted = sessionsStarted;
        p.sessionsCompleted = sessionsCompleted;
        p.sessionsAbandoned = sessionsAbandoned;
        p.sessionsCut = sessionsStarted - sessionsCompleted - sessionsAbandoned;
        p.sessionRate = sessionRate;
        if (sessionsStarted > 0) {
            p.firstSessionStartEpochNanos = epochAnchor + (firstStart - nanoAnchor);
            p.lastSessionStartEpochNanos = epochAnchor + (lastStart - nanoAnchor);
        }
        p.turnTtftMs = java.util.List.of(ttftMs);
        p.turnE2elMs = java.util.List.of(e2elMs);
        p.turnPromptTokens = java.util.Arrays.stream(promptTokens).boxed().toList();
        for (int t = 0; t < sent.length; t++) {
            p.turns.add(
                    new ConversationProfile.Turn(
                            t + 1,
                            sent[t],
                            completed[t],
                            failed[t],
                            completed[t] == 0 ? null : (double) promptTokens[t] / completed[t],
                            RampWindows.percentile(ttftMs[t], 50),
                            RampWindows.percentile(ttftMs[t], 99),
                            RampWindows.percentile(e2elMs[t], 50),
                            RampWindows.percentile(e2elMs[t], 99)));
        }
        return p;
    }
}
