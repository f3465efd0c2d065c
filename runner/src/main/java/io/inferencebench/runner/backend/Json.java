package io.inferencebench.runner.backend;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Map;

/** Shared Jackson instances and small helpers for the protocols. */
final class Json {
    static final ObjectMapper MAPPER = new ObjectMapper();
    static final JsonFactory FACTORY = MAPPER.getFactory();

    private Json() {}

    interface BodyWriter {
        void write(JsonGenerator g) throws IOException;
    }

    static byte[] object(BodyWriter writer) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(512);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            g.setCodec(MAPPER);
            g.writeStartObject();
            writer.write(g);
            g.writeEndObject();
        }
        return out.toByteArray();
    }

    static void writeExtra(JsonGenerator g, Map<String, Object> extra) throws IOException {
        for (Map.Entry<String, Object> e : extra.entrySet()) {
            g.writeFieldName(e.getKey());
            g.writeObject(e.getValue());
        }
    }

    /** Writes top_p and top_k where set: the sampling fields every API names the same. */
    static void writeTopPAndTopK(JsonGenerator g, GenerationParams params) throws IOException {
        if (params.topP() != null) {
            g.writeNumberField("top_p", params.topP());
        }
        if (params.topK() != null) {
            g.writeNumberField("top_k", params.topK());
        }
    }

    static JsonNode parse(byte[] data, int length) throws IOException {
        JsonNode node = MAPPER.readTree(data, 0, length);
        if (node == null || node.isMissingNode()) {
            throw new IOException("empty JSON");
        }
        return node;
    }

    /** Whether the event is the stream's {@code [DONE]}; if so the state hears the end. */
    static boolean endsStream(byte[] data, int length, ResponseState state) {
        if (isDone(data, length)) {
            state.onDone();
            return true;
        }
        return false;
    }

    private static boolean isDone(byte[] data, int length) {
        if (length != 6) {
            return false;
        }
        return data[0] == '['
                && data[1] == 'D'
                && data[2] == 'O'
                && data[3] == 'N'
                && data[4] == 'E'
                && data[5] == ']';
    }

    /** The message of an error object, or null when the node is not an error. */
    static String errorMessage(JsonNode node) {
        JsonNode error = node.get("error");
        if (error != null && !error.isNull()) {
            if (error.isObject()) {
                JsonNode message = error.get("message");
                return message != null ? message.asText() : error.toString();
            }
            return error.asText();
        }
        JsonNode object = node.get("object");
        if (object != null && "error".equals(object.asText())) {
            JsonNode message = node.get("message");
            return message != null ? message.asText() : node.toString();
        }
        return null;
    }

    static void usage(JsonNode node, ResponseState state) {
        JsonNode usage = node.get("usage");
        if (usage != null && usage.isObject()) {
            JsonNode completion = usage.get("completion_tokens");
            JsonNode prompt = usage.get("prompt_tokens");
            if (completion != null && completion.isNumber()) {
                state.onUsage(
                        prompt != null && prompt.isNumber() ? prompt.intValue() : -1,
                        completion.intValue());
            }
        }
    }
}
