package io.inferencebench.runner.dataset;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Synthetic conversations: {@code sessions} sessions of {@code turns} chat requests, laid out
 * session by session (session s's turn t is prompt {@code s * turns + t}, as {@link
 * io.inferencebench.runner.engine.Conversations} reads them). Turn t's request carries the whole
 * history: the session's questions and replies before it, then its own question. Each question has
 * a drawn input length, each turn asks for a drawn output length, and the history carries a reply
 * of exactly that length in place of the one the server wrote: every request is made before the
 * run, and its prompt length is the sum of the lengths in it (plus the chat template the server
 * adds).
 */
public final class ConversationDataset {

    private ConversationDataset() {}

    /**
     * The prompts of {@code sessions} sessions of {@code turns} turns, drawn from {@code seed}.
     *
     * @param input length of each question
     * @param output length each turn asks for, and of its reply in the later turns' history
     */
    public static List<Prompt> generate(
            int sessions,
            int turns,
            LengthDistribution input,
            LengthDistribution output,
            SyntheticTokens tokens,
            long seed)
            throws IOException, InterruptedException {
        SplittableRandom random = new SplittableRandom(seed);
        List<Prompt> prompts = new ArrayList<>(sessions * turns);
        for (int s = 0; s < sessions; s++) {
            List<Prompt.ChatMessage> history = new ArrayList<>();
            int historyTokens = 0;
            for (int t = 0; t < turns; t++) {
                int questionTokens = input.sample(random);
                int replyTokens = output.sample(random);
                SyntheticTokens.Run question = tokens.make(questionTokens, random);
                // The run alone as a prompt: its text as sent, and how its length is known.
                Prompt alone = tokens.prompt(List.of(question), replyTokens, random);
                if (alone.promptText() == null) {
                    throw new IllegalArgumentException(
                            "conversations are sent as chat messages, not as token ids");
                }
                history.add(new Prompt.ChatMessage("user", alone.promptText()));
                historyTokens += alone.inputTokens();
                prompts.add(
                        new Prompt(
                                null,
                                null,
                                List.copyOf(history),
                                historyTokens,
                                replyTokens,
                                alone.inputSource()));
                if (t + 1 < turns) {
                    SyntheticTokens.Run reply = tokens.make(replyTokens, random);
                    history.add(new Prompt.ChatMessage("assistant", reply.text()));
                    historyTokens += reply.tokens();
                }
            }
        }
        return prompts;
    }
}
