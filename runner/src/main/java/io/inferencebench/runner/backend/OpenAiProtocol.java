package io.inferencebench.runner.backend;

import com.fasterxml.jackson.core.JsonGenerator;
import io.inferencebench.runner.dataset.Prompt;
import java.io.IOException;

/**
 * What the OpenAI chat and completions APIs share: the generation fields of a request and the
 * response parsing (its events differ only in where the text is, which {@link #chat} says).
 */
abstract sealed class OpenAiProtocol implements Protocol permits OpenAiChat, OpenAiCompletions {

    /** Whether responses carry chat deltas/messages rather than completion text. */
    private final boolean chat;

    OpenAiProtocol(boolean chat) {
        this.chat = chat;
    }

    /** The request fields after the prompt: token limit, streaming, sampling, extra body. */
    static void writeCommon(JsonGenerator g, Prompt prompt, GenerationParams params)
            throws IOException {
        if (prompt.maxTokens() > 0) {
            g.writeNumberField("max_tokens", prompt.maxTokens());
        }
        g.writeBooleanField("stream", params.stream());
        if (params.stream()) {
            g.writeObjectFieldStart("stream_options");
            g.writeBooleanField("include_usage", true);
            g.writeEndObject();
        }
        if (params.ignoreEos()) {
            g.writeBooleanField("ignore_eos", true);
        }
        if (params.temperature() != null) {
            g.writeNumberField("temperature", params.temperature());
        }
        Json.writeTopPAndTopK(g, params);
        Json.writeExtra(g, params.extraBody());
    }

    @Override
    public void parseEvent(byte[] data, int length, long nanos, ResponseState state)
            throws IOException {
        if (!Json.endsStream(data, length, state)) {
            OpenAiJson.parse(data, length, nanos, state, chat);
        }
    }

    @Override
    public int shortcutEvent(byte[] b, int from, int end, long nanos, ResponseState state) {
        return OpenAiJson.shortcut(b, from, end, nanos, state);
    }

    @Override
    public void parseBody(byte[] body, int length, long nanos, ResponseState state)
            throws IOException {
        OpenAiJson.parse(body, length, nanos, state, chat);
    }
}
