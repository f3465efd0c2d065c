package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.inferencebench.profile.stats.MetricRecorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A stage sent as conversations: the sessions it ran and what each turn index measured, so the
 * effect of a growing history (and of the prefix cache reusing it) shows turn by turn. Written into
 * the profile as {@code metrics.conversation}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public final class ConversationProfile {

    /** Turns (requests) of a full session. */
    public int turnsPerSession;

    /** The think time between a reply and the next turn, seconds (the mean when drawn). */
    public double thinkTimeSeconds;

    /** {@code fixed} or {@code exponential}. */
    public String thinkTimeDistribution;

    /**
     * Sessions/s of a stage whose sessions start at a rate, or {@code null} for a closed loop of
     * users.
     */
    public Double sessionRate;

    /** Sessions whose first turn was sent. */
    public long sessionsStarted;

    /** When the first session started (epoch ns); 0 when none did. */
    public long firstSessionStartEpochNanos;

    /** When the last session started (epoch ns); 0 when none did. */
    public long lastSessionStartEpochNanos;

    /** Sessions whose every turn succeeded. */
    public long sessionsCompleted;

    /** Sessions ended by a failed turn (a user does not ask on after an error). */
    public long sessionsAbandoned;

    /**
     * Sessions the stage's end (its duration, or a cancel) stopped before their last turn: started,
     * neither completed nor abandoned.
     */
    public long sessionsCut;

    /** One entry per turn index, first to last. */
    public List<Turn> turns = new ArrayList<>();

    /**
     * Each turn's TTFT recorder (ms), in turn order: carried from a runner pod to the operator so
     * that the turns of several pods merge like the stage's own statistics. Not written into the
     * profile.
     */
    public List<MetricRecorder> turnTtftMs;

    /** Each turn's end-to-end latency recorder (ms), as {@link #turnTtftMs}. */
    public List<MetricRecorder> turnE2elMs;

    /** Each turn's prompt tokens summed over its successes, as {@link #turnTtftMs}. */
    public List<Long> turnPromptTokens;

    /**
     * One stage's conversations as several runner pods ran them, each its share of the sessions and
     * users: sessions and every turn's counts add up, the prompt-token means are over all the pods'
     * successes, and the percentiles come from the merged recorders (histogram percentiles, as the
     * stage's own).
     *
     * @return the merged conversations, or {@code null} when no part sent any
     * @throws IllegalArgumentException when only some parts sent conversations, their shapes
     *     differ, or a part came without its recorders
     */
    public static ConversationProfile merge(List<ConversationProfile> parts) {
        if (parts.stream().allMatch(Objects::isNull)) {
            return null;
        }
        ConversationProfile first = parts.get(0);
        for (ConversationProfile p : parts) {
            if (p == null
                    || first == null
                    || p.turnsPerSession != first.turnsPerSession
                    || p.thinkTimeSeconds != first.thinkTimeSeconds
                    || !Objects.equals(p.thinkTimeDistribution, first.thinkTimeDistribution)) {
                throw new IllegalArgumentException(
                        "runners of one stage sent conversations of different shapes (or only some"
                                + " sent conversations)");
            }
        }
        if (parts.size() == 1) {
            return first;
        }
        ConversationProfile m = new ConversationProfile();
        m.turnsPerSession = first.turnsPerSession;
        m.thinkTimeSeconds = first.thinkTimeSeconds;
        m.thinkTimeDistribution = first.thinkTimeDistribution;
        for (ConversationProfile p : parts) {
            if (p.sessionRate != null) {
                m.sessionRate = (m.sessionRate == null ? 0 : m.sessionRate) + p.sessionRate;
            }
            if (p.sessionsStarted > 0) {
                m.firstSessionStartEpochNanos =
                        m.firstSessionStartEpochNanos == 0
                                ? p.firstSessionStartEpochNanos
                                : Math.min(
                                        m.firstSessionStartEpochNanos,
                                        p.firstSessionStartEpochNanos);
                m.lastSessionStartEpochNanos =
                        Math.max(m.lastSessionStartEpochNanos, p.lastSessionStartEpochNanos);
            }
            if (p.turnTtftMs == null
                    || p.turnE2elMs == null
                    || p.turnPromptTokens == null
                    || p.turns.size() != first.turnsPerSession
                    || p.turnTtftMs.size() != p.turns.size()
                    || p.turnE2elMs.size() != p.turns.size()
                    || p.turnPromptTokens.size() != p.turns.size()) {
                throw new IllegalArgumentException(
                        "a runner pod reported its conversation turns without their recorders");
            }
            m.sessionsStarted += p.sessionsStarted;
            m.sessionsCompleted += p.sessionsCompleted;
            m.sessionsAbandoned += p.sessionsAbandoned;
            m.sessionsCut += p.sessionsCut;
        }
        m.turnTtftMs = new ArrayList<>();
        m.turnE2elMs = new ArrayList<>();
        m.turnPromptTokens = new ArrayList<>();
        for (int t = 0; t < first.turnsPerSession; t++) {
            long sent = 0;
            long completed = 0;
            long failed = 0;
            long promptTokens = 0;
            MetricRecorder ttft = null;
            MetricRecorder e2el = null;
            for (ConversationProfile p : parts) {
                Turn x = p.turns.get(t);
                sent += x.sent();
                completed += x.completed();
                failed += x.failed();
                promptTokens += p.turnPromptTokens.get(t);
                ttft = PartRecorders.mergeInto(ttft, p.turnTtftMs.get(t));
                e2el = PartRecorders.mergeInto(e2el, p.turnE2elMs.get(t));
            }
            m.turnTtftMs.add(ttft);
            m.turnE2elMs.add(e2el);
            m.turnPromptTokens.add(promptTokens);
            m.turns.add(
                    new Turn(
                            t + 1,
                            sent,
                            completed,
                            failed,
                            completed == 0 ? null : (double) promptTokens / completed,
                            PartRecorders.percentile(ttft, 50),
                            PartRecorders.percentile(ttft, 99),
                            PartRecorders.percentile(e2el, 50),
                            PartRecorders.percentile(e2el, 99)));
        }
        return m;
    }

    /**
     * What the requests of one turn index measured.
     *
     * @param turn the turn index, 1-based
     * @param sent requests of this turn sent (not counting those a cancel caught)
     * @param completed of them, succeeded
     * @param failed of them, failed
     * @param promptTokensMean mean prompt tokens of the successes (the history sent), as the
     *     stage's {@code input_length} counts them; {@code null} when none succeeded
     * @param ttftP50Ms median TTFT of the successes, ms; {@code null} when none measured it
     * @param ttftP99Ms p99 TTFT, ms; {@code null} as above
     * @param e2elP50Ms median end-to-end latency of the successes, ms; {@code null} when none
     * @param e2elP99Ms p99 end-to-end latency, ms; {@code null} as above
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Turn(
            int turn,
            long sent,
            long completed,
            long failed,
            Double promptTokensMean,
            Double ttftP50Ms,
            Double ttftP99Ms,
            Double e2elP50Ms,
            Double e2elP99Ms) {}
}
