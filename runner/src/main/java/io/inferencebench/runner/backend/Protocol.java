package io.inferencebench.runner.backend;

import io.inferencebench.runner.dataset.Prompt;
import java.io.IOException;

/** The wire format of one generation API: how to build a request and read its response. */
public interface Protocol {

    /** Short name used in logs and profiles, e.g. "openai-completions". */
    String name();

    /** Default request path, e.g. /v1/completions. */
    String defaultPath();

    /** Whether this protocol can send prompts as token ids. */
    boolean acceptsTokenIds();

    byte[] requestBody(Prompt prompt, GenerationParams params) throws IOException;

    /** Parses the data of one SSE event. Throws on data that is not valid for the protocol. */
    void parseEvent(byte[] data, int length, long nanos, ResponseState state) throws IOException;

    /**
     * Reads one whole SSE event from the raw bytes at {@code from} without framing it first, when
     * the protocol recognises it; see {@link
     * io.inferencebench.runner.http.SseParser.Listener#shortcut}.
     *
     * @return the index after the event, or -1 to have it framed and parsed as usual
     */
    default int shortcutEvent(byte[] b, int from, int end, long nanos, ResponseState state) {
        return -1;
    }

    /** Parses a complete non-streamed body. */
    void parseBody(byte[] body, int length, long nanos, ResponseState state) throws IOException;
}
