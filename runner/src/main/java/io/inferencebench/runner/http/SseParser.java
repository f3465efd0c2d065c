package io.inferencebench.runner.http;

import java.util.Arrays;

/**
 * Incremental Server-Sent-Events parser over raw bytes as they arrive from the network.
 *
 * <p>Network reads split and merge events arbitrarily, so bytes are framed into lines and lines
 * into events (a blank line ends an event); an event is handed to the listener only when complete,
 * stamped with the {@link System#nanoTime()} of the read that completed it. {@code data:} lines of
 * one event are joined with {@code \n}; comments ({@code :...}) and {@code event}/{@code id}/{@code
 * retry} fields are skipped. Any other line means the body is not an event stream and is reported
 * as malformed. Not thread-safe: one parser per response, fed from its event loop.
 */
public final class SseParser {

    /** Receives complete events. The data array is reused after the call returns. */
    public interface Listener {
        void onEvent(byte[] data, int length, long nanos);

        void onMalformed(String reason);

        /**
         * Offered the bytes at each event boundary: a listener that recognises a whole event there
         * (e.g. a token event shaped like the last one) takes it as it would {@link #onEvent} and
         * returns the index after its blank line; -1 leaves it to the parser. Default: never.
         */
        default int shortcut(byte[] bytes, int from, int end, long nanos) {
            return -1;
        }
    }

    private static final int MAX_EVENT_BYTES = 16 * 1024 * 1024;

    private final Listener listener;
    private byte[] line = new byte[128];
    private int lineLength;
    private byte[] data = new byte[256];
    private int dataLength;
    private boolean hasData;
    private boolean lastWasCarriageReturn;
    private boolean failed;
    private long events;

    /** When the current read arrived: every event completed by it carries this instant. */
    private long readNanos;

    public SseParser(Listener listener) {
        this.listener = listener;
    }

    /** Feeds {@code length} bytes starting at {@code offset}. */
    public void feed(byte[] bytes, int offset, int length) {
        int end = offset + length;
        int i = offset;
        readNanos = System.nanoTime();
        while (i < end && !failed) {
            if (lastWasCarriageReturn) {
                lastWasCarriageReturn = false;
                if (bytes[i] == '\n') {
                    i++;
                    continue;
                }
            }
            if (lineLength == 0 && !hasData) {
                int next = listener.shortcut(bytes, i, end, readNanos);
                if (next >= 0) {
                    events++;
                    i = next;
                    continue;
                }
            }
            int j = i;
            while (j < end) {
                byte c = bytes[j];
                if (c == '\n' || c == '\r') {
                    break;
                }
                j++;
            }
            if (j == end) {
                appendPartial(bytes, i, j - i);
                return;
            }
            if (lineLength > 0) {
                appendPartial(bytes, i, j - i);
                if (failed) {
                    return;
                }
                endLine(line, 0, lineLength);
                lineLength = 0;
            } else {
                // The whole line is inside this read: parse it in place, no copy.
                endLine(bytes, i, j - i);
            }
            lastWasCarriageReturn = bytes[j] == '\r';
            i = j + 1;
        }
    }

    private void appendPartial(byte[] bytes, int from, int count) {
        if (lineLength + count > line.length) {
            if (lineLength + count > MAX_EVENT_BYTES) {
                fail("line longer than " + MAX_EVENT_BYTES + " bytes");
                return;
            }
            line = Arrays.copyOf(line, Math.max(lineLength + count, line.length * 2));
        }
        System.arraycopy(bytes, from, line, lineLength, count);
        lineLength += count;
    }

    /**
     * Called when the body ended. Returns true when nothing was left half-parsed (a final event
     * without its blank line is still delivered, as browsers do not, but servers often omit it).
     */
    public boolean finish() {
        if (failed) {
            return false;
        }
        if (lineLength > 0) {
            endLine(line, 0, lineLength);
            lineLength = 0;
        }
        if (hasData && !failed) {
            readNanos = System.nanoTime();
            dispatch();
        }
        return !failed;
    }

    public long eventCount() {
        return events;
    }

    public boolean failed() {
        return failed;
    }

    private void endLine(byte[] src, int start, int length) {
        if (length == 0) {
            if (hasData) {
                dispatch();
            }
            return;
        }
        if (src[start] == ':') {
            return;
        }
        int colon = -1;
        for (int k = start; k < start + length; k++) {
            if (src[k] == ':') {
                colon = k;
                break;
            }
        }
        int lineEnd = start + length;
        int nameLength = (colon < 0 ? lineEnd : colon) - start;
        int valueStart = colon < 0 ? lineEnd : colon + 1;
        if (valueStart < lineEnd && src[valueStart] == ' ') {
            valueStart++;
        }
        if (isField(src, start, nameLength, "data")) {
            appendData(src, valueStart, lineEnd - valueStart);
        } else if (!(isField(src, start, nameLength, "event")
                || isField(src, start, nameLength, "id")
                || isField(src, start, nameLength, "retry"))) {
            byte[] shown = Arrays.copyOfRange(src, start, start + Math.min(length, 80));
            fail("not an event-stream line: " + printable(shown, shown.length));
        }
    }

    private static boolean isField(byte[] src, int start, int nameLength, String name) {
        if (nameLength != name.length()) {
            return false;
        }
        for (int k = 0; k < nameLength; k++) {
            if (src[start + k] != name.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    private void appendData(byte[] src, int valueStart, int valueLength) {
        int needed = dataLength + valueLength + (hasData ? 1 : 0);
        if (needed > MAX_EVENT_BYTES) {
            fail("event larger than " + MAX_EVENT_BYTES + " bytes");
            return;
        }
        if (needed > data.length) {
            data = Arrays.copyOf(data, Math.max(needed, data.length * 2));
        }
        if (hasData) {
            data[dataLength++] = '\n';
        }
        System.arraycopy(src, valueStart, data, dataLength, valueLength);
        dataLength += valueLength;
        hasData = true;
    }

    private void dispatch() {
        long now = readNanos;
        events++;
        int length = dataLength;
        hasData = false;
        dataLength = 0;
        listener.onEvent(data, length, now);
    }

    private void fail(String reason) {
        failed = true;
        listener.onMalformed(reason);
    }

    public static String printable(byte[] bytes, int length) {
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            int c = bytes[i] & 0xff;
            sb.append(c >= 0x20 && c < 0x7f ? (char) c : '?');
        }
        return sb.toString();
    }
}
