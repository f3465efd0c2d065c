package io.inferencebench.runner.backend;

/**
 * What a protocol extracted from a response so far. Filled by {@link Protocol} parse methods, read
 * by the request execution. Only touched on the request's event loop.
 */
public interface ResponseState {

    /** Whether content text is needed (to count tokens); otherwise protocols may pass null. */
    default boolean wantsText() {
        return true;
    }

    /**
     * Where a protocol may keep what it learned about this response's event layout; null: learn
     * nothing (every event is parsed in full).
     */
    default EventShape eventShape() {
        return null;
    }

    /** A content event: {@code text} may be null when the protocol carries no text. */
    void onContent(String text, long nanos);

    void onUsage(int promptTokens, int completionTokens);

    void onErrorPayload(String message);

    /**
     * The stream's explicit end marker (e.g. {@code [DONE]}) or the final event of the protocol.
     */
    void onDone();
}
