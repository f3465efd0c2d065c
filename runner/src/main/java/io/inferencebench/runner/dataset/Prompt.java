package io.inferencebench.runner.dataset;

import java.util.List;

/**
 * One request's input. Exactly one of {@code text}, {@code tokenIds} or {@code messages} is the
 * payload; {@code inputTokens} is its length as known before sending (see {@code inputSource}).
 *
 * @param maxTokens output tokens to ask for; 0 leaves it to the server
 * @param inputSource how inputTokens was obtained: "token_ids" (exact), "tokenizer" (exact),
 *     "approximation" (no tokenizer given)
 */
public record Prompt(
        String text,
        int[] tokenIds,
        List<ChatMessage> messages,
        int inputTokens,
        int maxTokens,
        String inputSource) {

    public record ChatMessage(String role, String content) {}

    /** Text to send to an API that takes a plain prompt (messages are joined). */
    public String promptText() {
        if (text != null) {
            return text;
        }
        if (messages != null) {
            StringBuilder sb = new StringBuilder();
            for (ChatMessage m : messages) {
                if (!sb.isEmpty()) {
                    sb.append('\n');
                }
                sb.append(m.content());
            }
            return sb.toString();
        }
        return null;
    }

    /** Messages to send to a chat API (a plain prompt becomes one user message). */
    public List<ChatMessage> chatMessages() {
        if (messages != null) {
            return messages;
        }
        return List.of(new ChatMessage("user", text == null ? "" : text));
    }
}
