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

    /** Parses a complete non-streamed body. */
    void parseBody(byte[] body, int length, long nanos, ResponseState state) throws IOException;
}
