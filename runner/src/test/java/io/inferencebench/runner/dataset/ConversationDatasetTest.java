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

    /** A ShareGPT file of the given conversations, each a list of (from, value) pairs. */
    private static java.nio.file.Path shareGpt(java.nio.file.Path dir, List<List<String[]>> entries)
            throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper json =
                new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.databind.node.ArrayNode root = json.createArrayNode();
        for (List<String[]> entry : entries) {
            com.fasterxml.jackson.databind.node.ArrayNode c =
                    root.addObject().put("id", "x").putArray("conversations");
            for (String[] m : entry) {
                c.addObject().put("from", m[0]).put("value", m[1]);
            }
        }
        java.nio.file.Path file = dir.resolve("sharegpt.json");
        java.nio.file.Files.writeString(file, json.writeValueAsString(root));
        return file;
    }

    private static String[] m(String from, String value) {
        return new String[] {from, value};
    }

    @Test
    void shareGptConversationsReplayTheirFirstTurnsWithTheRecordedReplies(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path file =
                shareGpt(
                        dir,
                        List.of(
                                // Three pairs after a system message: its first two turns.
                                List.of(
                                        m("system", "be brief"),
                                        m("human", "what is a cat"),
                                        m("gpt", "a small animal that purrs"),
                                        m("human", "and a dog"),
                                        m("gpt", "an animal that barks at night"),
                                        m("human", "thanks"),
                                        m("gpt", "welcome")),
                                // One pair only: too short for two turns.
                                List.of(m("human", "hello there"), m("gpt", "hi")),
                                // Two questions in a row: not pairs.
                                List.of(
                                        m("human", "one"),
                                        m("human", "two"),
                                        m("gpt", "three"),
                                        m("human", "four"),
                                        m("gpt", "five"))));
        FileDatasets.Filters none = new FileDatasets.Filters(null, null, null, null, null, null);
        List<Prompt> prompts = FileDatasets.shareGptConversations(file, 2, 2, none, null, 1);
        // The only conversation long enough, cycled for the second session.
        assertThat(prompts).hasSize(4);
        Prompt first = prompts.get(0);
        assertThat(first.messages())
                .containsExactly(
                        new Prompt.ChatMessage("system", "be brief"),
                        new Prompt.ChatMessage("user", "what is a cat"));
        // No tokenizer: about 4 characters a token, labelled so.
        assertThat(first.inputTokens()).isEqualTo(2 + 3);
        assertThat(first.maxTokens()).isEqualTo(6);
        assertThat(first.inputSource()).isEqualTo("approximation");
        Prompt second = prompts.get(1);
        assertThat(second.messages())
                .containsExactly(
                        new Prompt.ChatMessage("system", "be brief"),
                        new Prompt.ChatMessage("user", "what is a cat"),
                        new Prompt.ChatMessage("assistant", "a small animal that purrs"),
                        new Prompt.ChatMessage("user", "and a dog"));
        assertThat(second.inputTokens()).isEqualTo(2 + 3 + 6 + 2);
        assertThat(second.maxTokens()).isEqualTo(7);
        assertThat(prompts.get(2)).isEqualTo(first);

        // Every turn must pass the filters: a reply shorter than 7 tokens drops the session.
        FileDatasets.Filters longReplies =
                new FileDatasets.Filters(null, null, 7, null, null, null);
        assertThatThrownBy(
                        () -> FileDatasets.shareGptConversations(file, 2, 2, longReplies, null, 1))
                .hasMessageContaining("no conversation has 2 question-and-reply pairs");
        // The output override asks every turn for the same length; the history keeps the text.
        FileDatasets.Filters eight = new FileDatasets.Filters(null, null, null, null, null, 8);
        List<Prompt> fixed = FileDatasets.shareGptConversations(file, 1, 3, eight, null, 1);
        assertThat(fixed).extracting(Prompt::maxTokens).containsExactly(8, 8, 8);
        assertThat(fixed.get(2).messages()).hasSize(6);
    }
}
