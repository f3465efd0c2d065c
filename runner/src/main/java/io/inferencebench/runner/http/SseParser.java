package io.inferencebench.runner.http;

import java.util.Arrays;

/**
 * Incremental Server-Sent-Events parser over raw bytes as they arrive from the network.
 *
 * <p>Network reads split and merge events arbitrarily, so bytes are framed into lines and lines
 * into events (a blank line ends an event); an event is handed to the listener only when complete,
 * stamped with {@link System#nanoTime()} at that moment. {@code data:} lines of one event are
 * joined with {@code \n}; comments ({@code :...}) and {@code event}/{@code id}/{@code retry} fields
 * are skipped. Any other line means the body is not an event stream and is reported as malformed.
 * Not thread-safe: one parser per response, fed from its event loop.
 */
public final class SseParser {

    /** Receives complete events. The data array is reused after the call returns. */
    public interface Listener {
        void onEvent(byte[] data, int length, long nanos);

        void onMalformed(String reason);
    }

    private static final int MAX_EVENT_BYTES = 16 * 1024 * 1024;

    private final Listener listener;
    private byte[] line = new byte[256];
    private int lineLength;
    private byte[] data = new byte[512];
    private int dataLength;
    private boolean hasData;
    private boolean lastWasCarriageReturn;
    private boolean failed;
    private long events;

    public SseParser(Listener listener) {
        this.listener = listener;
    }

    /** Feeds {@code length} bytes starting at {@code offset}. */
    public void feed(byte[] bytes, int offset, int length) {
        int end = offset + length;
        for (int i = offset; i < end && !failed; i++) {
            byte b = bytes[i];
            if (b == '\n') {
                if (lastWasCarriageReturn) {
                    lastWasCarriageReturn = false;
                    continue;
                }
                endLine();
            } else if (b == '\r') {
                lastWasCarriageReturn = true;
                endLine();
            } else {
                lastWasCarriageReturn = false;
                if (lineLength == line.length) {
                    if (line.length >= MAX_EVENT_BYTES) {
                        fail("line longer than " + MAX_EVENT_BYTES + " bytes");
                        return;
                    }
                    line = Arrays.copyOf(line, line.length * 2);
                }
                line[lineLength++] = b;
            }
        }
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
            endLine();
        }
        if (hasData && !failed) {
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

    private void endLine() {
        if (lineLength == 0) {
            if (hasData) {
                dispatch();
            }
            return;
        }
        byte first = line[0];
        if (first == ':') {
            lineLength = 0;
            return;
        }
        int colon = -1;
        for (int i = 0; i < lineLength; i++) {
            if (line[i] == ':') {
                colon = i;
                break;
            }
        }
        int nameEnd = colon < 0 ? lineLength : colon;
        int valueStart = colon < 0 ? lineLength : colon + 1;
        if (valueStart < lineLength && line[valueStart] == ' ') {
            valueStart++;
        }
        if (isField("data", nameEnd)) {
            appendData(valueStart);
        } else if (!(isField("event", nameEnd)
                || isField("id", nameEnd)
                || isField("retry", nameEnd))) {
            fail("not an event-stream line: " + printable(line, Math.min(lineLength, 80)));
        }
        lineLength = 0;
    }

    private boolean isField(String name, int nameEnd) {
        if (nameEnd != name.length()) {
            return false;
        }
        for (int i = 0; i < nameEnd; i++) {
            if (line[i] != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private void appendData(int valueStart) {
        int valueLength = lineLength - valueStart;
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
        System.arraycopy(line, valueStart, data, dataLength, valueLength);
        dataLength += valueLength;
        hasData = true;
    }

    private void dispatch() {
        long now = System.nanoTime();
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
