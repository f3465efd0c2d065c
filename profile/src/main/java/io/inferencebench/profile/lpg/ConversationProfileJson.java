package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A stage sent as conversations in its LPG profile: {@code metrics.conversation}, beside our other
 * additive keys. A stage of independent prompts has none, so its profile keeps its key set.
 */
final class ConversationProfileJson {

    private ConversationProfileJson() {}

    /**
     * Writes {@code conversation} into the profile's {@code metrics}.
     *
     * @param sessionsDue session starts due in the stage's drawn schedule (0 for a closed loop)
     * @param scheduledSessionRate that schedule's rate, or {@code null}
     */
    static void write(
            ConversationProfile conversation,
            long sessionsDue,
            Double scheduledSessionRate,
            ObjectNode metrics) {
        ObjectNode node = metrics.putObject("conversation");
        node.put("turns_per_session", conversation.turnsPerSession);
        node.put("think_time_s", conversation.thinkTimeSeconds);
        node.put("think_time_distribution", conversation.thinkTimeDistribution);
        if (conversation.sessionRate != null) {
            node.put("session_rate", conversation.sessionRate);
        }
        if (sessionsDue > 0) {
            // The schedule of session starts the stage drew, and what delivery is judged against.
            node.put("sessions_due", sessionsDue);
            if (scheduledSessionRate != null) {
                node.put("scheduled_session_rate", scheduledSessionRate);
            }
        }
        node.put("sessions_started", conversation.sessionsStarted);
        node.put("sessions_completed", conversation.sessionsCompleted);
        node.put("sessions_abandoned", conversation.sessionsAbandoned);
        node.put("sessions_cut", conversation.sessionsCut);
        ArrayNode turns = node.putArray("turns");
        for (ConversationProfile.Turn t : conversation.turns) {
            ObjectNode turn = turns.addObject();
            turn.put("turn", t.turn());
            turn.put("requests_sent", t.sent());
            turn.put("completed", t.completed());
            turn.put("failures", t.failed());
            RampProfileJson.putIfPresent(turn, "prompt_tokens_mean", t.promptTokensMean());
            RampProfileJson.putLatencies(
                    turn, t.ttftP50Ms(), t.ttftP99Ms(), t.e2elP50Ms(), t.e2elP99Ms());
        }
    }
}
