package io.inferencebench.runner.dataset;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Text files the user hands the runner (the {@code --config} YAML, datasets, tokenizers): read as
 * UTF-8, strictly (a byte that is not UTF-8 is an error naming where it is, never a replacement
 * character or the JDK's "Input length = 1"), and with a leading byte order mark dropped, as
 * editors on Windows write one.
 */
public final class Utf8Files {

    /** The UTF-8 byte order mark. */
    private static final byte[] BOM = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};

    private Utf8Files() {}

    /** A file that is not UTF-8 text; the message names the file and where. */
    public static final class NotUtf8Exception extends CharacterCodingException {
        private final String message;

        NotUtf8Exception(String message) {
            this.message = message;
        }

        @Override
        public String getMessage() {
            return message;
        }
    }

    /** Whether {@code bytes} start with the UTF-8 byte order mark. */
    public static boolean hasBom(byte[] bytes) {
        return bytes.length >= 3 && bytes[0] == BOM[0] && bytes[1] == BOM[1] && bytes[2] == BOM[2];
    }

    /** {@code bytes} without a leading byte order mark (the same array when there is none). */
    public static byte[] withoutBom(byte[] bytes) {
        return hasBom(bytes) ? java.util.Arrays.copyOfRange(bytes, 3, bytes.length) : bytes;
    }

    /**
     * The whole file as text, without a leading byte order mark.
     *
     * @throws NotUtf8Exception naming the file, the byte offset and the line of the first byte that
     *     is not UTF-8
     */
    public static String read(Path file) throws IOException {
        return decode(file, Files.readAllBytes(file));
    }

    /**
     * {@code bytes} of {@code file} as text, without a leading byte order mark.
     *
     * @throws NotUtf8Exception naming the file, the byte offset and the line of the first byte that
     *     is not UTF-8
     */
    public static String decode(Path file, byte[] bytes) throws NotUtf8Exception {
        int start = hasBom(bytes) ? BOM.length : 0;
        // UTF-8 never encodes anything but U+0000 with a zero byte, and no text file has that.
        int nul = -1;
        for (int i = start; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                nul = i;
                break;
            }
        }
        ByteBuffer in = ByteBuffer.wrap(bytes, start, bytes.length - start);
        CharBuffer out = CharBuffer.allocate(bytes.length - start);
        CharsetDecoder decoder = strictDecoder();
        CoderResult result = decoder.decode(in, out, true);
        if (!result.isError()) {
            result = decoder.flush(out);
        }
        if (result.isError() || nul >= 0) {
            int offset = result.isError() ? in.position() : nul;
            if (nul >= 0 && nul < offset) {
                offset = nul;
            }
            throw notUtf8(file, offset, lineAt(bytes, offset), bytes[offset]);
        }
        return out.flip().toString();
    }

    /**
     * The file's lines as UTF-8 text, strict, without a leading byte order mark; a line that is not
     * UTF-8 text throws a {@link NotUtf8Exception} naming its byte offset and line.
     */
    public static Lines lines(Path file) throws IOException {
        return new Lines(file, Files.newInputStream(file));
    }

    /**
     * Lines of a file, split on {@code \n} (a {@code \r} before it is dropped) and decoded one by
     * one, so a bad byte is reported on its own line rather than wherever a read-ahead buffer
     * ended.
     */
    public static final class Lines implements java.io.Closeable {
        private final Path file;
        private final InputStream in;
        private final CharsetDecoder decoder = strictDecoder();
        private final byte[] chunk = new byte[64 * 1024];
        private int pos;
        private int limit;
        private byte[] line = new byte[1024];
        private long offset;
        private int number;

        private Lines(Path file, InputStream in) {
            this.file = file;
            this.in = in;
        }

        /** 1-based number of the last line returned. */
        public int lineNumber() {
            return number;
        }

        /**
         * The next line without its terminator, or {@code null} at the end.
         *
         * @throws NotUtf8Exception when the line has a byte that is not UTF-8 text, or a NUL
         */
        public String readLine() throws IOException {
            int length = 0;
            boolean any = false;
            boolean terminated = false;
            while (!terminated) {
                if (pos == limit) {
                    int n = in.read(chunk);
                    if (n <= 0) {
                        break;
                    }
                    pos = 0;
                    limit = n;
                }
                any = true;
                int start = pos;
                while (pos < limit && chunk[pos] != '\n') {
                    pos++;
                }
                int take = pos - start;
                if (length + take > line.length) {
                    line = java.util.Arrays.copyOf(line, Math.max(length + take, line.length * 2));
                }
                System.arraycopy(chunk, start, line, length, take);
                length += take;
                if (pos < limit) {
                    pos++;
                    terminated = true;
                }
            }
            if (!any) {
                return null;
            }
            number++;
            long lineStart = offset;
            offset += length + (terminated ? 1 : 0);
            int from =
                    number == 1 && hasBom(java.util.Arrays.copyOf(line, Math.min(3, length)))
                            ? BOM.length
                            : 0;
            int to = length > from && line[length - 1] == '\r' ? length - 1 : length;
            ByteBuffer bytes = ByteBuffer.wrap(line, from, to - from);
            CharBuffer chars = CharBuffer.allocate(to - from);
            decoder.reset();
            CoderResult result = decoder.decode(bytes, chars, true);
            if (!result.isError()) {
                result = decoder.flush(chars);
            }
            int bad = result.isError() ? bytes.position() : to;
            for (int i = from; i < bad; i++) {
                if (line[i] == 0) {
                    bad = i;
                    break;
                }
            }
            if (bad < to) {
                throw notUtf8(file, lineStart + bad, number, line[bad]);
            }
            return chars.flip().toString();
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /** The error for a byte that is not UTF-8 at a known offset. */
    public static NotUtf8Exception notUtf8(Path file, long offset, int line, byte value) {
        return new NotUtf8Exception(
                String.format(
                        java.util.Locale.ROOT,
                        "%s: not UTF-8 text: byte 0x%02X at byte offset %d (line %d) is not part of"
                                + " UTF-8 text (a binary file, or text in another encoding;"
                                + " save it as UTF-8)",
                        file,
                        value & 0xff,
                        offset,
                        line));
    }

    private static CharsetDecoder strictDecoder() {
        return StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
    }

    /** 1-based line of the byte at {@code offset}. */
    private static int lineAt(byte[] bytes, int offset) {
        int line = 1;
        for (int i = 0; i < offset && i < bytes.length; i++) {
            if (bytes[i] == '\n') {
                line++;
            }
        }
        return line;
    }
}
