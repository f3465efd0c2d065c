package io.inferencebench.runner.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Synthetic conversations: each turn carries exactly the history before it, drawn from a seed. */
class ConversationDatasetTest {

    private static List<Prompt> words(int sessions, int turns, long seed) throws Exception {
        return ConversationDataset.generate(
                sessions,
                turns,
                LengthDistribution.fixed(12),
                LengthDistribution.fixed(5),
                RandomDataset.local(false, null),
                seed);
    }

    private static int words(String text) {
        return text.isBlank() ? 0 : text.trim().split("\\s+").length;
    }

    @Test
    void eachTurnCarriesTheWholeHistoryBeforeItsQuestion() throws Exception {
        List<Prompt> prompts = words(3, 4, 11);
        assertThat(prompts).hasSize(12);
        for (int s = 0; s < 3; s++) {
            for (int t = 0; t < 4; t++) {
                Prompt p = prompts.get(s * 4 + t);
                List<Prompt.ChatMessage> m = p.messages();
                // Question, reply, question, ... ending with this turn's question.
                assertThat(m).hasSize(2 * t + 1);
                for (int k = 0; k < m.size(); k++) {
                    assertThat(m.get(k).role()).isEqualTo(k % 2 == 0 ? "user" : "assistant");
                    assertThat(words(m.get(k).content())).isEqualTo(k % 2 == 0 ? 12 : 5);
                }
                assertThat(p.inputTokens()).isEqualTo(12 * (t + 1) + 5 * t);
                assertThat(p.maxTokens()).isEqualTo(5);
                assertThat(p.inputSource()).isEqualTo("approximation");
                if (t > 0) {
                    // The previous turn's messages, unchanged, start this one.
                    List<Prompt.ChatMessage> before = prompts.get(s * 4 + t - 1).messages();
                    assertThat(m.subList(0, before.size())).isEqualTo(before);
                }
            }
        }
        // Sessions are their own conversations.
        assertThat(prompts.get(4).messages().get(0)).isNotEqualTo(prompts.get(0).messages().get(0));
    }

    @Test
    void theSameSeedDrawsTheSameConversations() throws Exception {
        assertThat(words(2, 3, 5)).usingRecursiveComparison().isEqualTo(words(2, 3, 5));
        assertThat(words(2, 3, 6).get(0).messages()).isNotEqualTo(words(2, 3, 5).get(0).messages());
    }

    @Test
    void drawnLengthsAreSummedTurnByTurn() throws Exception {
        List<Prompt> prompts =
                ConversationDataset.generate(
                        4,
                        3,
                        LengthDistribution.rangeRatio(20, 0.5),
                        LengthDistribution.rangeRatio(8, 0.5),
                        RandomDataset.local(false, null),
                        2);
        for (int s = 0; s < 4; s++) {
            int history = 0;
            for (int t = 0; t < 3; t++) {
                Prompt p = prompts.get(s * 3 + t);
                List<Prompt.ChatMessage> m = p.messages();
                int question = words(m.get(m.size() - 1).content());
                assertThat(p.inputTokens()).isEqualTo(history + question);
                if (t + 1 < 3) {
                    // The next turn's history holds a reply of the length this turn asked for.
                    String reply = prompts.get(s * 3 + t + 1).messages().get(2 * t + 1).content();
                    assertThat(words(reply)).isEqualTo(p.maxTokens());
                    history += question + p.maxTokens();
                }
            }
        }
    }

    @Test
    void tokenIdsCannotBeChatMessages() {
        assertThatThrownBy(
                        () ->
                                ConversationDataset.generate(
                                        1,
                                        2,
                                        LengthDistribution.fixed(4),
                                        LengthDistribution.fixed(4),
                                        RandomDataset.local(true, null),
                                        1))
                .hasMessageContaining("chat messages, not as token ids");
    }
}
