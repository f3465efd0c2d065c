package io.inferencebench.profile.prom;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Reads one {@code /metrics} response body with a bound on its size and on the time it takes.
 *
 * <p>A scraped endpoint is not trusted: a page that is huge, a gzip bomb or a body that never ends
 * must cost one failed scrape, never the memory or a thread of the process that scrapes every run.
 * So the bound applies to the <em>decompressed</em> bytes while they are read (a bomb stops after
 * {@code maxBytes} of output, whatever its compressed size), and a deadline closes the stream when
 * the body has not ended in time (a blocked read then returns). Nothing beyond {@code maxBytes}
 * plus one read buffer is ever held.
 *
 * <p>Thread-safe; the deadlines share one daemon thread.
 */
public final class ScrapeBodyReader {

    /**
     * Default bound on a decompressed page: 8 MiB. Real model-server pages are far smaller (the
     * largest kept in this project's tests is 7 KB; a vLLM server with a handful of LoRA adapters
     * serves tens of KiB), so only a broken or hostile endpoint reaches it.
     */
    public static final long DEFAULT_MAX_BYTES = 8L * 1024 * 1024;

    private static final int CHUNK = 64 * 1024;

    private static final ScheduledThreadPoolExecutor DEADLINES = deadlineThread();

    private final long maxBytes;
    private final Duration timeout;

    /** Why a body was refused; the message is the reason a coverage error shows. */
    public static final class BodyRefused extends IOException {
        private static final long serialVersionUID = 1L;

        private final boolean tooLarge;
        private final boolean timedOut;

        BodyRefused(String reason, Throwable cause) {
            this(reason, cause, false, false);
        }

        private BodyRefused(String reason, Throwable cause, boolean tooLarge, boolean timedOut) {
            super(reason, cause);
            this.tooLarge = tooLarge;
            this.timedOut = timedOut;
        }

        /** Whether the body was cut at the bound on its size. */
        public boolean tooLarge() {
            return tooLarge;
        }

        /** Whether the body had not ended at the deadline. */
        public boolean timedOut() {
            return timedOut;
        }
    }

    /**
     * @param maxBytes most decompressed bytes accepted (at least 1)
     * @param timeout longest time from the request's start to the body's last byte
     */
    public ScrapeBodyReader(long maxBytes, Duration timeout) {
        if (maxBytes < 1 || maxBytes > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException(
                    "maxBytes must be between 1 and " + (Integer.MAX_VALUE - 16) + ": " + maxBytes);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        this.maxBytes = maxBytes;
        this.timeout = timeout;
    }

    /** The bound on decompressed bytes. */
    public long maxBytes() {
        return maxBytes;
    }

    /** The time allowed from the request's start to the body's end. */
    public Duration timeout() {
        return timeout;
    }

    /** The reason recorded for a scrape that ran out of time. */
    public String timedOutReason() {
        return "timed out after " + timeout.toMillis() + " ms";
    }

    /**
     * Reads a whole body, inflating gzip (named by {@code Content-Encoding} or recognised by its
     * magic bytes), and closes it.
     *
     * @param body the response body stream
     * @param contentEncoding the Content-Encoding header, or {@code null}
     * @param startNanos {@link System#nanoTime()} when the request was sent; the deadline is {@link
     *     #timeout()} after it
     * @return the decompressed bytes
     * @throws BodyRefused when the body exceeds the bound, is not valid gzip, uses an unsupported
     *     encoding or does not end before the deadline; its message is the reason
     * @throws IOException when the connection fails otherwise
     */
    public byte[] read(InputStream body, String contentEncoding, long startNanos)
            throws IOException {
        AtomicBoolean expired = new AtomicBoolean();
        long remaining = startNanos + timeout.toNanos() - System.nanoTime();
        ScheduledFuture<?> deadline =
                DEADLINES.schedule(
                        () -> {
                            expired.set(true);
                            closeQuietly(body);
                        },
                        Math.max(0, remaining),
                        TimeUnit.NANOSECONDS);
        try (InputStream in = body) {
            return readBounded(decoded(in, contentEncoding));
        } catch (BodyRefused e) {
            throw expired.get() ? timedOut(e) : e;
        } catch (IOException e) {
            if (expired.get()) {
                throw timedOut(e);
            }
            throw e;
        } finally {
            deadline.cancel(false);
        }
    }

    private BodyRefused timedOut(IOException cause) {
        return new BodyRefused(timedOutReason(), cause, false, true);
    }

    private InputStream decoded(InputStream in, String contentEncoding) throws IOException {
        String encoding =
                contentEncoding == null ? "" : contentEncoding.trim().toLowerCase(Locale.ROOT);
        if (!encoding.isEmpty() && !encoding.equals("identity") && !encoding.equals("gzip")) {
            throw new BodyRefused("unsupported Content-Encoding '" + contentEncoding + "'", null);
        }
        BufferedInputStream buffered = new BufferedInputStream(in, 2);
        buffered.mark(2);
        int b0 = buffered.read();
        int b1 = b0 < 0 ? -1 : buffered.read();
        buffered.reset();
        if (!encoding.equals("gzip") && !(b0 == 0x1f && b1 == 0x8b)) {
            return buffered;
        }
        try {
            return new GzipStream(new GZIPInputStream(buffered, CHUNK));
        } catch (ZipException | EOFException e) {
            throw new BodyRefused("gzip: " + gzipProblem(e), e);
        }
    }

    private byte[] readBounded(InputStream in) throws IOException {
        byte[] buffer = new byte[(int) Math.min(CHUNK, maxBytes + 1)];
        int length = 0;
        while (true) {
            if (length == buffer.length) {
                if (length > maxBytes) {
                    break;
                }
                buffer = Arrays.copyOf(buffer, (int) Math.min(maxBytes + 1, (long) length * 2));
            }
            int n = in.read(buffer, length, buffer.length - length);
            if (n < 0) {
                return length == buffer.length ? buffer : Arrays.copyOf(buffer, length);
            }
            length += n;
        }
        throw new BodyRefused(
                "body exceeds "
                        + maxBytes
                        + " bytes"
                        + (in instanceof GzipStream ? " (decompressed from gzip)" : ""),
                null,
                true,
                false);
    }

    private static String gzipProblem(IOException e) {
        if (e instanceof EOFException) {
            return "truncated body";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** Turns inflation errors into reasons, so they are told apart from network failures. */
    private static final class GzipStream extends InputStream {
        private final GZIPInputStream in;

        GzipStream(GZIPInputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return in.read(b, off, len);
            } catch (ZipException e) {
                throw new BodyRefused("gzip: " + gzipProblem(e), e);
            } catch (EOFException e) {
                throw new BodyRefused("gzip: " + gzipProblem(e), e);
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException | RuntimeException ignored) {
            // the reader sees the closed stream; nothing more to do here
        }
    }

    private static ScheduledThreadPoolExecutor deadlineThread() {
        ScheduledThreadPoolExecutor executor =
                new ScheduledThreadPoolExecutor(
                        1,
                        r -> {
                            Thread t = new Thread(r, "scrape-body-deadline");
                            t.setDaemon(true);
                            return t;
                        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }
}
