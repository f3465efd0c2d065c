package io.inferencebench.runner.http;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;

/**
 * Frames HTTP/1.1 responses from raw socket reads: the status line and headers, then the body by
 * chunked transfer coding, by {@code Content-Length} or up to the connection's end (RFC 9112 §6).
 * Body bytes reach the receiver in place, with no object per chunk or header.
 *
 * <p>Why not Netty's {@code HttpResponseDecoder}: a streamed completion is one chunk per flush of
 * the server, and the decoder built a header map, header name and value strings, a response object
 * and one content object per chunk; at thousands of streams per second that was 14 % of the event
 * loop's CPU and a quarter of its allocation (JFR, 4,800 req/s on one CPU). Only what the load path
 * needs is read here: the status, {@code Content-Type}, the body framing and whether the connection
 * stays open.
 *
 * <p>One framer per connection, reused for each response on it; not thread-safe.
 */
final class ResponseFramer {

    /** What a framer reports, in order: {@link #head}, any {@link #body}, then {@link #end}. */
    interface Receiver {
        /** The status line and headers of a final (not 1xx) response. */
        void head(int status, String contentType, boolean keepAlive);

        /**
         * Body bytes with any transfer coding removed, valid during the call only. False stops
         * framing: the receiver aborted the exchange.
         */
        boolean body(byte[] data, int offset, int length);

        /**
         * The response is complete. {@code reusable}: the connection may carry another exchange
         * (the server allows it and sent nothing after this response in the same read).
         */
        void end(boolean reusable);

        /** The bytes are not an HTTP/1.x response; the connection cannot be used further. */
        void malformed(String reason);
    }

    /** Largest status line plus headers, and largest chunk-size or trailer line. */
    static final int MAX_HEAD_BYTES = 64 * 1024;

    private enum State {
        STATUS_LINE,
        HEADERS,
        FIXED,
        CHUNK_SIZE,
        CHUNK_DATA,
        CHUNK_END,
        TRAILERS,
        UNTIL_CLOSE,
        DONE,
        FAILED
    }

    private State state = State.STATUS_LINE;

    /** A line that began in an earlier read. */
    private byte[] partial = new byte[128];

    private int partialLength;
    private int headBytes;

    private int status;
    private boolean http11;
    private String contentType;

    /** The Location of a redirect (3xx), else null. */
    private String location;

    private long contentLength;
    private boolean transferEncoding;
    private boolean chunked;
    private boolean connectionClose;
    private boolean connectionKeepAlive;

    /** Whether the connection may be reused once the current response ends. */
    private boolean keepAliveAfter;

    private long remaining;

    /** Prepares for the next response on the connection. */
    void reset() {
        state = State.STATUS_LINE;
        partialLength = 0;
        headBytes = 0;
        clearHead();
    }

    /** Longest Location kept (a redirect's target is shown to the user, not followed). */
    static final int MAX_LOCATION_BYTES = 2048;

    /** The {@code Location} header of the current response when it is a redirect (3xx). */
    String location() {
        return location;
    }

    /** Whether the current response's body runs until the connection closes. */
    boolean bodyUntilClose() {
        return state == State.UNTIL_CLOSE;
    }

    /** Frames {@code length} bytes of one read. */
    void feed(byte[] b, int offset, int length, Receiver receiver) {
        int i = offset;
        int end = offset + length;
        while (i < end) {
            switch (state) {
                case FIXED, CHUNK_DATA -> {
                    int n = (int) Math.min(remaining, end - i);
                    if (!receiver.body(b, i, n)) {
                        state = State.FAILED;
                        return;
                    }
                    i += n;
                    remaining -= n;
                    if (remaining == 0) {
                        if (state == State.FIXED) {
                            complete(receiver, i < end);
                        } else {
                            state = State.CHUNK_END;
                        }
                    }
                }
                case UNTIL_CLOSE -> {
                    if (!receiver.body(b, i, end - i)) {
                        state = State.FAILED;
                    }
                    return;
                }
                case DONE, FAILED -> {
                    // Bytes after a complete response belong to no request; end() has already
                    // said the connection is not reusable.
                    return;
                }
                default -> {
                    int newline = indexOfNewline(b, i, end);
                    if (newline < 0) {
                        keepPartial(b, i, end - i, receiver);
                        return;
                    }
                    boolean ok;
                    if (partialLength > 0) {
                        if (!keepPartial(b, i, newline - i, receiver)) {
                            return;
                        }
                        int n = partialLength;
                        partialLength = 0;
                        ok = line(partial, 0, trimCr(partial, 0, n), receiver, newline + 1 < end);
                    } else {
                        if (!countHead(newline - i + 1, receiver)) {
                            return;
                        }
                        ok = line(b, i, trimCr(b, i, newline - i), receiver, newline + 1 < end);
                    }
                    if (!ok) {
                        return;
                    }
                    i = newline + 1;
                }
            }
        }
    }

    private static int indexOfNewline(byte[] b, int from, int end) {
        for (int k = from; k < end; k++) {
            if (b[k] == '\n') {
                return k;
            }
        }
        return -1;
    }

    private static int trimCr(byte[] b, int start, int length) {
        return length > 0 && b[start + length - 1] == '\r' ? length - 1 : length;
    }

    private boolean keepPartial(byte[] b, int from, int count, Receiver receiver) {
        if (!countHead(count, receiver)) {
            return false;
        }
        if (partialLength + count > partial.length) {
            partial = Arrays.copyOf(partial, Math.max(partialLength + count, partial.length * 2));
        }
        System.arraycopy(b, from, partial, partialLength, count);
        partialLength += count;
        return true;
    }

    private boolean countHead(int count, Receiver receiver) {
        headBytes += count;
        if (headBytes > MAX_HEAD_BYTES) {
            return fail(
                    receiver,
                    state == State.STATUS_LINE || state == State.HEADERS
                            ? "status line and headers longer than " + MAX_HEAD_BYTES + " bytes"
                            : "chunk framing line longer than " + MAX_HEAD_BYTES + " bytes");
        }
        return true;
    }

    /** One line (without its line end) in the line-oriented states; false when framing stopped. */
    private boolean line(byte[] b, int start, int length, Receiver receiver, boolean more) {
        switch (state) {
            case STATUS_LINE -> {
                return statusLine(b, start, length, receiver);
            }
            case HEADERS -> {
                if (length == 0) {
                    return endOfHead(receiver, more);
                }
                return header(b, start, length, receiver);
            }
            case CHUNK_SIZE -> {
                long size = chunkSize(b, start, length);
                if (size < 0) {
                    return fail(
                            receiver,
                            "bad chunk size line: " + printable(b, start, Math.min(length, 40)));
                }
                headBytes = 0;
                if (size == 0) {
                    state = State.TRAILERS;
                } else {
                    remaining = size;
                    state = State.CHUNK_DATA;
                }
                return true;
            }
            case CHUNK_END -> {
                if (length != 0) {
                    return fail(receiver, "chunk data longer than its size");
                }
                headBytes = 0;
                state = State.CHUNK_SIZE;
                return true;
            }
            case TRAILERS -> {
                if (length == 0) {
                    complete(receiver, more);
                }
                return true;
            }
            default -> throw new IllegalStateException(state.toString());
        }
    }

    private boolean statusLine(byte[] b, int start, int length, Receiver receiver) {
        // HTTP/1.x SP 3DIGIT [SP reason]
        if (length < 12
                || !startsWith(b, start, "HTTP/1.")
                || (b[start + 7] != '1' && b[start + 7] != '0')
                || b[start + 8] != ' '
                || !digit(b[start + 9])
                || !digit(b[start + 10])
                || !digit(b[start + 11])
                || (length > 12 && b[start + 12] != ' ')) {
            return fail(
                    receiver,
                    "not an HTTP/1.x status line: " + printable(b, start, Math.min(length, 40)));
        }
        clearHead();
        http11 = b[start + 7] == '1';
        status = (b[start + 9] - '0') * 100 + (b[start + 10] - '0') * 10 + (b[start + 11] - '0');
        state = State.HEADERS;
        return true;
    }

    private boolean header(byte[] b, int start, int length, Receiver receiver) {
        int colon = -1;
        for (int k = start; k < start + length; k++) {
            if (b[k] == ':') {
                colon = k;
                break;
            }
        }
        if (colon <= start) {
            return fail(receiver, "bad header line: " + printable(b, start, Math.min(length, 40)));
        }
        int nameLength = colon - start;
        int valueStart = colon + 1;
        int valueEnd = start + length;
        while (valueStart < valueEnd && (b[valueStart] == ' ' || b[valueStart] == '\t')) {
            valueStart++;
        }
        while (valueEnd > valueStart && (b[valueEnd - 1] == ' ' || b[valueEnd - 1] == '\t')) {
            valueEnd--;
        }
        if (nameIs(b, start, nameLength, "content-type")) {
            contentType = new String(b, valueStart, valueEnd - valueStart, StandardCharsets.UTF_8);
        } else if (nameIs(b, start, nameLength, "content-length")) {
            long value = decimal(b, valueStart, valueEnd);
            if (value < 0 || (contentLength >= 0 && contentLength != value)) {
                return fail(
                        receiver,
                        "bad Content-Length: "
                                + printable(b, valueStart, Math.min(valueEnd - valueStart, 40)));
            }
            contentLength = value;
        } else if (nameIs(b, start, nameLength, "transfer-encoding")) {
            transferEncoding = true;
            // The final coding decides the framing (RFC 9112 §6.3).
            String codings =
                    new String(b, valueStart, valueEnd - valueStart, StandardCharsets.US_ASCII)
                            .toLowerCase(Locale.ROOT);
            int comma = codings.lastIndexOf(',');
            chunked = codings.substring(comma + 1).strip().equals("chunked");
        } else if (status >= 300 && status < 400 && nameIs(b, start, nameLength, "location")) {
            // Only redirects: where the server sent the client is what the user must be told.
            location =
                    new String(
                            b,
                            valueStart,
                            Math.min(valueEnd - valueStart, MAX_LOCATION_BYTES),
                            StandardCharsets.UTF_8);
        } else if (nameIs(b, start, nameLength, "connection")) {
            String tokens =
                    new String(b, valueStart, valueEnd - valueStart, StandardCharsets.US_ASCII)
                            .toLowerCase(Locale.ROOT);
            for (String token : tokens.split(",")) {
                String t = token.strip();
                connectionClose |= t.equals("close");
                connectionKeepAlive |= t.equals("keep-alive");
            }
        }
        return true;
    }

    private boolean endOfHead(Receiver receiver, boolean more) {
        headBytes = 0;
        if (status >= 100 && status < 200 && status != 101) {
            // An interim response (100 Continue, 103 Early Hints): the final one follows.
            state = State.STATUS_LINE;
            clearHead();
            return true;
        }
        boolean keepAlive = http11 ? !connectionClose : connectionKeepAlive && !connectionClose;
        if (status == 204 || status == 304) {
            keepAliveAfter = keepAlive;
            receiver.head(status, contentType, keepAlive);
            complete(receiver, more);
            return true;
        }
        if (transferEncoding) {
            if (chunked) {
                state = State.CHUNK_SIZE;
            } else {
                keepAlive = false;
                state = State.UNTIL_CLOSE;
            }
        } else if (contentLength >= 0) {
            remaining = contentLength;
            state = State.FIXED;
        } else {
            keepAlive = false;
            state = State.UNTIL_CLOSE;
        }
        keepAliveAfter = keepAlive;
        receiver.head(status, contentType, keepAlive);
        if (state == State.FIXED && remaining == 0) {
            complete(receiver, more);
        }
        return true;
    }

    private void complete(Receiver receiver, boolean more) {
        state = State.DONE;
        receiver.end(keepAliveAfter && !more);
    }

    private boolean fail(Receiver receiver, String reason) {
        state = State.FAILED;
        receiver.malformed(reason);
        return false;
    }

    private void clearHead() {
        status = 0;
        http11 = false;
        contentType = null;
        location = null;
        contentLength = -1;
        transferEncoding = false;
        chunked = false;
        connectionClose = false;
        connectionKeepAlive = false;
        keepAliveAfter = false;
        remaining = 0;
    }

    /** Hex size before any chunk extension; -1 when it is not one. */
    private static long chunkSize(byte[] b, int start, int length) {
        int end = start + length;
        int k = start;
        long size = 0;
        int digits = 0;
        for (; k < end; k++) {
            int c = b[k];
            int v;
            if (c >= '0' && c <= '9') {
                v = c - '0';
            } else if (c >= 'a' && c <= 'f') {
                v = c - 'a' + 10;
            } else if (c >= 'A' && c <= 'F') {
                v = c - 'A' + 10;
            } else {
                break;
            }
            if (++digits > 15) {
                return -1;
            }
            size = size * 16 + v;
        }
        if (digits == 0) {
            return -1;
        }
        for (; k < end; k++) {
            if (b[k] == ';') {
                return size;
            }
            if (b[k] != ' ' && b[k] != '\t') {
                return -1;
            }
        }
        return size;
    }

    private static long decimal(byte[] b, int start, int end) {
        if (start >= end || end - start > 18) {
            return -1;
        }
        long value = 0;
        for (int k = start; k < end; k++) {
            if (!digit(b[k])) {
                return -1;
            }
            value = value * 10 + (b[k] - '0');
        }
        return value;
    }

    private static boolean digit(byte c) {
        return c >= '0' && c <= '9';
    }

    private static boolean startsWith(byte[] b, int start, String prefix) {
        for (int k = 0; k < prefix.length(); k++) {
            if (b[start + k] != prefix.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    /** Case-insensitive comparison with a lower-case ASCII name. */
    private static boolean nameIs(byte[] b, int start, int length, String lowerName) {
        if (length != lowerName.length()) {
            return false;
        }
        for (int k = 0; k < length; k++) {
            int c = b[start + k];
            if (c >= 'A' && c <= 'Z') {
                c += 'a' - 'A';
            }
            if (c != lowerName.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    private static String printable(byte[] b, int start, int length) {
        StringBuilder sb = new StringBuilder(length);
        for (int k = start; k < start + length; k++) {
            int c = b[k] & 0xff;
            sb.append(c >= 0x20 && c < 0x7f ? (char) c : '?');
        }
        return sb.toString();
    }
}
