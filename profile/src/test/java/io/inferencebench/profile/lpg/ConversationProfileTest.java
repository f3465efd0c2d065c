package io.inferencebench.profile.lpg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.stats.MetricRecorder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A conversation stage's sessions and turns in its profile, and merged across runner pods. */
class ConversationProfileTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final ProfileContext CONTEXT =
            new ProfileContext(
                    "openai", "sim", null, null, Instant.EPOCH, null, null, 1, "0.1.0", Map.of());

    /**
     * One pod's stage of {@code sessions} completed 2-turn sessions, turn t's latencies {@code base
     * + 1000 (t - 1) + 0..sessions-1} ms and its prompts {@code 10 t} tokens.
     */
    private static StageResult pod(int sessions, int base) {
        StageResult s = new StageResult();
        s.concurrency = 2;
        StageResults.success(s, 2 * sessions, 1, 10, 16, 5);
        ConversationProfile c = new ConversationProfile();
        c.turnsPerSession = 2;
        c.thinkTimeSeconds = 0.5;
        c.thinkTimeDistribution = "fixed";
        c.sessionsStarted = sessions;
        c.sessionsCompleted = sessions;
        c.turnTtftMs = new ArrayList<>();
        c.turnE2elMs = new ArrayList<>();
        c.turnPromptTokens = new ArrayList<>();
        for (int t = 1; t <= 2; t++) {
            MetricRecorder ttft = new MetricRecorder();
            MetricRecorder e2el = new MetricRecorder();
            for (int i = 0; i < sessions; i++) {
                ttft.record(base + 1000 * (t - 1) + i);
                e2el.record(10 * (base + 1000 * (t - 1) + i));
            }
            c.turnTtftMs.add(ttft);
            c.turnE2elMs.add(e2el);
            c.turnPromptTokens.add(10L * t * sessions);
            c.turns.add(
                    new ConversationProfile.Turn(
                            t,
                            sessions,
                            sessions,
                            0,
                            10.0 * t,
                            ttft.percentile(50),
                            ttft.percentile(99),
                            e2el.percentile(50),
                            e2el.percentile(99)));
        }
        s.conversation = c;
        return s;
    }

    @Test
    void theProfileCarriesTheSessionsAndEveryTurnButNotTheRecorders() {
        StageResult s = pod(4, 100);
        s.conversation.sessionsStarted = 5;
        s.conversation.sessionsCut = 1;
        JsonNode c = LpgProfileWriter.write(s, CONTEXT).path("metrics").path("conversation");
        assertThat(c.path("turns_per_session").asInt()).isEqualTo(2);
        assertThat(c.path("think_time_s").asDouble()).isEqualTo(0.5);
        assertThat(c.path("think_time_distribution").asText()).isEqualTo("fixed");
        assertThat(c.path("sessions_started").asInt()).isEqualTo(5);
        assertThat(c.path("sessions_completed").asInt()).isEqualTo(4);
        assertThat(c.path("sessions_cut").asInt()).isEqualTo(1);
        assertThat(c.path("turns")).hasSize(2);
        assertThat(c.at("/turns/1/turn").asInt()).isEqualTo(2);
        assertThat(c.at("/turns/1/prompt_tokens_mean").asDouble()).isEqualTo(20.0);
        assertThat(c.at("/turns/0/ttft_ms_p50").asDouble()).isEqualTo(101.5);
        assertThat(c.has("turnTtftMs")).isFalse();
        assertThat(c.has("turn_ttft_ms")).isFalse();
        s.conversation = null;
        assertThat(LpgProfileWriter.write(s, CONTEXT).path("metrics").has("conversation"))
                .isFalse();
    }

    @Test
    void podsMergeTheirSessionsAndTurnsThroughTheirPartsJson() throws Exception {
        StageResult a = JSON.readValue(JSON.writeValueAsString(pod(100, 100)), StageResult.class);
        StageResult b = JSON.readValue(JSON.writeValueAsString(pod(50, 300)), StageResult.class);
        b.conversation.turnPromptTokens.set(1, 50L * 26);
        ConversationProfile m = StageResult.merge(List.of(a, b)).conversation;
        assertThat(m.sessionsStarted).isEqualTo(150);
        assertThat(m.sessionsCompleted).isEqualTo(150);
        ConversationProfile.Turn second = m.turns.get(1);
        assertThat(second.turn()).isEqualTo(2);
        assertThat(second.sent()).isEqualTo(150);
        // 100 prompts of 20 tokens and 50 of 26: the mean over all 150.
        assertThat(second.promptTokensMean()).isEqualTo((100 * 20.0 + 50 * 26.0) / 150);
        // TTFTs 100..199 and 300..349 (turn 1): the median of all 150 is 174.5, neither pod's.
        assertThat(m.turns.get(0).ttftP50Ms())
                .isCloseTo(174.5, org.assertj.core.data.Offset.offset(0.5));
        assertThat(StageResult.merge(List.of(a)).conversation.turns)
                .isEqualTo(a.conversation.turns);
        assertThat(m.sessionRate).isNull();
    }

    @Test
    void podsStartingSessionsAtTheirSharesOfARateAddUpAndTheirDeliveryIsJudgedOnTheStarts()
            throws Exception {
        StageResult a = pod(10, 100);
        StageResult b = pod(10, 100);
        a.conversation.sessionRate = 1.0;
        b.conversation.sessionRate = 1.0;
        a.conversation.firstSessionStartEpochNanos = 1_000_000_000L;
        a.conversation.lastSessionStartEpochNanos = 10_000_000_000L;
        b.conversation.firstSessionStartEpochNanos = 1_500_000_000L;
        b.conversation.lastSessionStartEpochNanos = 10_500_000_000L;
        a.requestedRate = 2.0;
        b.requestedRate = 2.0;
        StageResult m =
                StageResult.merge(
                        List.of(
                                JSON.readValue(JSON.writeValueAsString(a), StageResult.class),
                                JSON.readValue(JSON.writeValueAsString(b), StageResult.class)));
        assertThat(m.conversation.sessionRate).isEqualTo(2.0);
        assertThat(m.conversation.firstSessionStartEpochNanos).isEqualTo(1_000_000_000L);
        assertThat(m.conversation.lastSessionStartEpochNanos).isEqualTo(10_500_000_000L);
        LoadVerdict.Figures figures = LoadVerdict.Figures.of(m);
        assertThat(figures.requestedRate()).isEqualTo(2.0);
        assertThat(figures.sent()).isEqualTo(20);
        // 19 gaps between the 20 session starts over 9.5 s.
        assertThat(figures.achievedRate()).isEqualTo(2.0);
    }

    @Test
    void partsOfDifferentShapesOrWithoutRecordersAreRefused() throws Exception {
        StageResult a = pod(4, 100);
        StageResult b = pod(4, 100);
        b.conversation.thinkTimeSeconds = 1;
        assertThatThrownBy(() -> StageResult.merge(List.of(a, b)))
                .hasMessageContaining("conversations of different shapes");
        StageResult c = pod(4, 100);
        c.conversation.turnTtftMs = null;
        assertThatThrownBy(() -> StageResult.merge(List.of(a, c)))
                .hasMessageContaining("without their recorders");
    }
}
