package io.inferencebench.runner.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads OpenAI completion and chat chunks straight from the event bytes, picking out only what a
 * benchmark needs: whether the first choice carries content (and its text when a tokenizer needs
 * it), usage, and error objects. Everything else is validated and skipped.
 *
 * <p>Why not Jackson: a JSON tree per SSE event allocated about 1 KB per token, and even Jackson's
 * streaming parser allocates a parser, contexts and symbol tables per event; at thousands of
 * streams per second that garbage made young-GC pauses the main source of schedule lag (JFR). This
 * scanner allocates nothing unless the text is wanted. Instances are per request and not
 * thread-safe.
 */
final class OpenAiJson {

    private static final byte[] CHOICES = ascii("choices");
    private static final byte[] USAGE = ascii("usage");
    private static final byte[] ERROR = ascii("error");
    private static final byte[] OBJECT = ascii("object");
    private static final byte[] MESSAGE = ascii("message");
    private static final byte[] TEXT = ascii("text");
    private static final byte[] DELTA = ascii("delta");
    private static final byte[] CONTENT = ascii("content");
    private static final byte[] REASONING_CONTENT = ascii("reasoning_content");
    private static final byte[] REASONING = ascii("reasoning");
    private static final byte[] PROMPT_TOKENS = ascii("prompt_tokens");
    private static final byte[] COMPLETION_TOKENS = ascii("completion_tokens");
    private static final int MAX_DEPTH = 64;

    private byte[] b;
    private int pos;
    private int end;
    // the last string token: [start, end) of its raw bytes, and whether it has escapes
    private int strStart;
    private int strEnd;
    private boolean strEscaped;

    private OpenAiJson() {}

    /**
     * @param chat read choices[0].delta / choices[0].message instead of choices[0].text
     */
    static void parse(byte[] data, int length, long nanos, ResponseState state, boolean chat)
            throws IOException {
        OpenAiJson scanner = PER_THREAD.get();
        try {
            scanner.chunk(data, length, nanos, state, chat);
        } finally {
            scanner.b = null;
        }
    }

    /** One scanner per event loop: events are parsed on the loop that owns the request. */
    private static final ThreadLocal<OpenAiJson> PER_THREAD =
            ThreadLocal.withInitial(OpenAiJson::new);

    private final int[] found = new int[1];
    // content-carrying strings read in choices[0] by the current parse, and the last one's bounds
    private int contentStrings;
    private int contentStart;
    private int contentEnd;

    private void chunk(byte[] data, int length, long nanos, ResponseState state, boolean chat)
            throws IOException {
        b = data;
        pos = 0;
        end = length;
        boolean wantText = state.wantsText();
        EventShape shape = state.eventShape();
        if (shape != null && shape.prefix != null && sameShape(shape)) {
            if (strEnd > strStart) {
                state.onContent(wantText ? stringValue() : null, nanos);
            }
            return;
        }
        pos = 0;
        contentStrings = 0;
        boolean choices = false;
        boolean errorObject = false;
        String error = null;
        String message = null;
        int promptTokens = -1;
        int completionTokens = -1;
        boolean content = false;
        String text = null;

        expect('{');
        if (!peekIs('}')) {
            do {
                fieldName();
                if (keyIs(CHOICES)) {
                    byte t = peek();
                    if (t == '[') {
                        choices = true;
                        pos++;
                        if (!peekIs(']')) {
                            boolean first = true;
                            do {
                                if (first && peek() == '{') {
                                    found[0] = 0;
                                    String s = firstChoice(chat, wantText, found);
                                    if (found[0] != 0) {
                                        content = true;
                                        text = s;
                                    }
                                } else {
                                    skipValue(1);
                                }
                                first = false;
                            } while (comma(']'));
                        } else {
                            pos++;
                        }
                    } else if (!literal("null")) {
                        throw new IOException("choices is not an array");
                    }
                } else if (keyIs(USAGE)) {
                    if (peek() == '{') {
                        pos++;
                        if (!peekIs('}')) {
                            do {
                                fieldName();
                                if (keyIs(PROMPT_TOKENS) && isNumberStart()) {
                                    promptTokens = integer();
                                } else if (keyIs(COMPLETION_TOKENS) && isNumberStart()) {
                                    completionTokens = integer();
                                } else {
                                    skipValue(2);
                                }
                            } while (comma('}'));
                        } else {
                            pos++;
                        }
                    } else {
                        skipValue(1);
                    }
                } else if (keyIs(ERROR)) {
                    byte t = peek();
                    if (t == '{') {
                        pos++;
                        error = "error";
                        if (!peekIs('}')) {
                            do {
                                fieldName();
                                if (keyIs(MESSAGE) && peek() == '"') {
                                    string();
                                    error = stringValue();
                                } else {
                                    skipValue(2);
                                }
                            } while (comma('}'));
                        } else {
                            pos++;
                        }
                    } else if (t == '"') {
                        string();
                        error = stringValue();
                    } else if (!literal("null")) {
                        int start = pos;
                        skipValue(1);
                        error = new String(b, start, pos - start, StandardCharsets.UTF_8);
                    }
                } else if (keyIs(OBJECT) && peek() == '"') {
                    string();
                    errorObject = strEnd - strStart == 5 && rawEquals(ERROR);
                } else if (keyIs(MESSAGE) && peek() == '"') {
                    string();
                    message = stringValue();
                } else {
                    skipValue(1);
                }
            } while (comma('}'));
        } else {
            pos++;
        }
        skipWhitespace();
        if (pos != end) {
            throw new IOException("trailing data after the JSON object");
        }
        if (error != null) {
            state.onErrorPayload(error);
            return;
        }
        if (errorObject) {
            state.onErrorPayload(message != null ? message : "error object");
            return;
        }
        if (!choices) {
            throw new IOException("chunk without a choices array");
        }
        if (shape != null && contentStrings == 1 && completionTokens < 0) {
            // A plain content event (no usage, no error, one content string): its layout is
            // what the next events of this response most likely repeat.
            shape.prefix = Arrays.copyOfRange(b, 0, contentStart);
            shape.suffix = Arrays.copyOfRange(b, contentEnd + 1, end);
            shape.singleLine = !hasLineBreak(shape.prefix) && !hasLineBreak(shape.suffix);
        }
        if (content) {
            state.onContent(text, nanos);
        }
        if (completionTokens >= 0) {
            state.onUsage(promptTokens, completionTokens);
        }
    }

    /**
     * Whether the event is the learned prefix, one string, the learned suffix; leaves that string's
     * bounds in strStart/strEnd. The string is scanned exactly as the full parse scans it (so a
     * control character fails the same way).
     */
    private static final byte[] DATA_FIELD = ascii("data: ");

    /**
     * Reads a whole SSE event straight from the network bytes when it is one {@code data: } line
     * with the same bytes around its content string as the response's learned {@link EventShape},
     * followed by a blank line: {@code data: <prefix><string><suffix>\n\n}. Then the content goes
     * to {@code state} as {@link #parse} would deliver it, and the index after the event is
     * returned; otherwise -1, and the SSE parser frames the bytes as usual (which also reports any
     * error). The SSE framing and the JSON scan of such an event were half the event loop's CPU in
     * C1-compiled code: here the surrounding bytes are compared as ranges.
     */
    static int shortcut(byte[] b, int from, int end, long nanos, ResponseState state) {
        EventShape shape = state.eventShape();
        if (shape == null || shape.prefix == null || !shape.singleLine) {
            return -1;
        }
        byte[] prefix = shape.prefix;
        byte[] suffix = shape.suffix;
        int start = from + DATA_FIELD.length;
        if (start + prefix.length + suffix.length + 3 > end
                || !Arrays.equals(b, from, start, DATA_FIELD, 0, DATA_FIELD.length)
                || !Arrays.equals(b, start, start + prefix.length, prefix, 0, prefix.length)) {
            return -1;
        }
        int stringStart = start + prefix.length;
        int k = stringStart;
        boolean escaped = false;
        while (true) {
            if (k >= end) {
                return -1;
            }
            byte c = b[k];
            if (c == '"') {
                break;
            }
            if (c == '\\') {
                escaped = true;
                k += 2;
                continue;
            }
            if ((c & 0xff) < 0x20) {
                return -1;
            }
            k++;
        }
        int after = k + 1;
        int lineEnd = after + suffix.length;
        if (lineEnd + 2 > end
                || !Arrays.equals(b, after, lineEnd, suffix, 0, suffix.length)
                || b[lineEnd] != '\n'
                || b[lineEnd + 1] != '\n') {
            return -1;
        }
        if (k > stringStart) {
            String text = null;
            if (state.wantsText()) {
                OpenAiJson scanner = PER_THREAD.get();
                scanner.b = b;
                scanner.strStart = stringStart;
                scanner.strEnd = k;
                scanner.strEscaped = escaped;
                try {
                    text = scanner.stringValue();
                } catch (IOException e) {
                    // a bad escape: the regular path reports it
                    return -1;
                } finally {
                    scanner.b = null;
                }
            }
            state.onContent(text, nanos);
        }
        return lineEnd + 2;
    }

    private static boolean hasLineBreak(byte[] bytes) {
        for (byte c : bytes) {
            if (c == '\n' || c == '\r') {
                return true;
            }
        }
        return false;
    }

    private boolean sameShape(EventShape shape) throws IOException {
        byte[] prefix = shape.prefix;
        byte[] suffix = shape.suffix;
        int p = prefix.length;
        if (end < p + suffix.length || !Arrays.equals(b, 0, p, prefix, 0, p)) {
            return false;
        }
        pos = p - 1;
        string();
        return end - pos == suffix.length && Arrays.equals(b, pos, end, suffix, 0, suffix.length);
    }

    private void contentString() {
        contentStrings++;
        contentStart = strStart;
        contentEnd = strEnd;
    }

    /** Reads choices[0]; sets found[0] when it carries non-empty content. */
    private String firstChoice(boolean chat, boolean wantText, int[] found) throws IOException {
        String text = null;
        expect('{');
        if (peekIs('}')) {
            pos++;
            return null;
        }
        do {
            fieldName();
            if (!chat && keyIs(TEXT) && peek() == '"') {
                string();
                contentString();
                if (strEnd > strStart) {
                    found[0] = 1;
                    text = wantText ? concat(text, stringValue()) : null;
                }
            } else if (chat && (keyIs(DELTA) || keyIs(MESSAGE)) && peek() == '{') {
                pos++;
                if (!peekIs('}')) {
                    do {
                        fieldName();
                        if ((keyIs(CONTENT) || keyIs(REASONING_CONTENT) || keyIs(REASONING))
                                && peek() == '"') {
                            string();
                            contentString();
                            if (strEnd > strStart) {
                                found[0] = 1;
                                text = wantText ? concat(text, stringValue()) : null;
                            }
                        } else {
                            skipValue(3);
                        }
                    } while (comma('}'));
                } else {
                    pos++;
                }
            } else {
                skipValue(2);
            }
        } while (comma('}'));
        return text;
    }

    private static String concat(String a, String b) {
        return a == null ? b : a + b;
    }

    // ---- scanning primitives ---------------------------------------------------------------

    private int keyStart;
    private int keyEnd;

    private void fieldName() throws IOException {
        skipWhitespace();
        if (pos >= end || b[pos] != '"') {
            throw new IOException("expected a field name at " + pos);
        }
        string();
        keyStart = strStart;
        keyEnd = strEnd;
        expect(':');
    }

    private boolean keyIs(byte[] name) {
        if (keyEnd - keyStart != name.length) {
            return false;
        }
        for (int i = 0; i < name.length; i++) {
            if (b[keyStart + i] != name[i]) {
                return false;
            }
        }
        return true;
    }

    private boolean rawEquals(byte[] value) {
        for (int i = 0; i < value.length; i++) {
            if (b[strStart + i] != value[i]) {
                return false;
            }
        }
        return true;
    }

    /** After a member or element: true on ',', false on the closing bracket (consumed). */
    private boolean comma(char close) throws IOException {
        skipWhitespace();
        if (pos >= end) {
            throw new IOException("unterminated JSON");
        }
        byte c = b[pos++];
        if (c == ',') {
            return true;
        }
        if (c == close) {
            return false;
        }
        throw new IOException("expected ',' or '" + close + "' at " + (pos - 1));
    }

    private void skipWhitespace() {
        while (pos < end) {
            byte c = b[pos];
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
                pos++;
            } else {
                return;
            }
        }
    }

    private byte peek() throws IOException {
        skipWhitespace();
        if (pos >= end) {
            throw new IOException("unexpected end of JSON");
        }
        return b[pos];
    }

    private boolean peekIs(char c) throws IOException {
        return peek() == c;
    }

    private void expect(char c) throws IOException {
        if (peek() != c) {
            throw new IOException("expected '" + c + "' at " + pos);
        }
        pos++;
    }

    private boolean isNumberStart() throws IOException {
        byte c = peek();
        return c == '-' || (c >= '0' && c <= '9');
    }

    private int integer() throws IOException {
        int start = pos;
        boolean negative = b[pos] == '-';
        if (negative) {
            pos++;
        }
        long value = 0;
        int digits = 0;
        while (pos < end && b[pos] >= '0' && b[pos] <= '9') {
            value = value * 10 + (b[pos++] - '0');
            if (++digits > 10) {
                throw new IOException("number too large at " + start);
            }
        }
        if (digits == 0) {
            throw new IOException("bad number at " + start);
        }
        if (pos < end && (b[pos] == '.' || b[pos] == 'e' || b[pos] == 'E')) {
            pos = start;
            skipNumber();
            return -1;
        }
        return (int) (negative ? -value : value);
    }

    /** Scans a string token at pos (on its opening quote); records its raw bounds. */
    private void string() throws IOException {
        pos++;
        strStart = pos;
        strEscaped = false;
        while (pos < end) {
            byte c = b[pos];
            if (c == '"') {
                strEnd = pos;
                pos++;
                return;
            }
            if (c == '\\') {
                strEscaped = true;
                pos += 2;
                continue;
            }
            if ((c & 0xff) < 0x20) {
                throw new IOException("control character in a string at " + pos);
            }
            pos++;
        }
        throw new IOException("unterminated string");
    }

    private String stringValue() throws IOException {
        if (!strEscaped) {
            return new String(b, strStart, strEnd - strStart, StandardCharsets.UTF_8);
        }
        StringBuilder sb = new StringBuilder(strEnd - strStart);
        int i = strStart;
        int runStart = i;
        while (i < strEnd) {
            if (b[i] != '\\') {
                i++;
                continue;
            }
            sb.append(new String(b, runStart, i - runStart, StandardCharsets.UTF_8));
            if (i + 1 >= strEnd) {
                throw new IOException("bad escape");
            }
            byte e = b[i + 1];
            switch (e) {
                case '"' -> sb.append('"');
                case '\\' -> sb.append('\\');
                case '/' -> sb.append('/');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (i + 6 > strEnd) {
                        throw new IOException("bad \\u escape");
                    }
                    sb.append(
                            (char)
                                    Integer.parseInt(
                                            new String(b, i + 2, 4, StandardCharsets.US_ASCII),
                                            16));
                    i += 4;
                }
                default -> throw new IOException("bad escape \\" + (char) e);
            }
            i += 2;
            runStart = i;
        }
        sb.append(new String(b, runStart, strEnd - runStart, StandardCharsets.UTF_8));
        return sb.toString();
    }

    private boolean literal(String word) throws IOException {
        skipWhitespace();
        if (pos + word.length() > end) {
            return false;
        }
        for (int i = 0; i < word.length(); i++) {
            if (b[pos + i] != word.charAt(i)) {
                return false;
            }
        }
        pos += word.length();
        return true;
    }

    private void skipNumber() throws IOException {
        int start = pos;
        while (pos < end) {
            byte c = b[pos];
            if ((c >= '0' && c <= '9')
                    || c == '-'
                    || c == '+'
                    || c == '.'
                    || c == 'e'
                    || c == 'E') {
                pos++;
            } else {
                break;
            }
        }
        if (pos == start) {
            throw new IOException("bad value at " + start);
        }
    }

    private void skipValue(int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new IOException("JSON nested too deeply");
        }
        byte c = peek();
        switch (c) {
            case '"' -> string();
            case '{' -> {
                pos++;
                if (peekIs('}')) {
                    pos++;
                    return;
                }
                do {
                    fieldName();
                    skipValue(depth + 1);
                } while (comma('}'));
            }
            case '[' -> {
                pos++;
                if (peekIs(']')) {
                    pos++;
                    return;
                }
                do {
                    skipValue(depth + 1);
                } while (comma(']'));
            }
            case 't' -> requireLiteral("true");
            case 'f' -> requireLiteral("false");
            case 'n' -> requireLiteral("null");
            default -> skipNumber();
        }
    }

    private void requireLiteral(String word) throws IOException {
        if (!literal(word)) {
            throw new IOException("bad literal at " + pos);
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
