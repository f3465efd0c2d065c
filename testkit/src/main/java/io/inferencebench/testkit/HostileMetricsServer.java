package io.inferencebench.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPOutputStream;

/**
 * A loopback {@code /metrics} endpoint (or any other: the path is not looked at) that misbehaves on
 * purpose, on a plain socket so every byte it sends is counted and a client hanging up is seen: a
 * huge page streamed from one small buffer (never allocated whole), a gzip bomb, a body that never
 * ends (slowly, fast, or not a byte after the headers), or an honest page.
 *
 * <p>Each connection answers one request and then closes. {@link #nextExchange} hands out what the
 * server observed of each exchange, in order.
 */
public final class HostileMetricsServer implements AutoCloseable {

    /** What the server saw of one exchange. */
    public record Exchange(long bodyBytesSent, boolean clientHungUp) {}

    /** How the server answers. */
    public sealed interface Behaviour {}

    /** A valid text page of {@code bytes} bytes of gauge lines, with Content-Length. */
    public record HugePage(long bytes) implements Behaviour {}

    /**
     * {@code compressedBytes} of gzip, sent with {@code Content-Encoding: gzip}: gzip members
     * concatenated, each inflating 1 MiB of gauge lines from about 3 KB.
     */
    public record GzipBomb(long compressedBytes) implements Behaviour {}

    /** Chunked transfer, one gauge line every {@code gapMillis}, until the client hangs up. */
    public record NeverEnding(long gapMillis) implements Behaviour {}

    /** Chunked transfer of 1 MiB chunks, as fast as the client reads, until it hangs up. */
    public record Endless() implements Behaviour {}

    /** Status and headers of a chunked body, then not a byte more until the client hangs up. */
    public record Stalled() implements Behaviour {}

    /** An honest page; gzip-compressed with {@code Content-Encoding: gzip} when asked. */
    public record Page(String text, boolean gzip) implements Behaviour {}

    private final ServerSocket socket;
    private final Behaviour behaviour;
    private final LinkedBlockingQueue<Exchange> exchanges = new LinkedBlockingQueue<>();
    private final java.util.concurrent.atomic.AtomicInteger requests =
            new java.util.concurrent.atomic.AtomicInteger();
    private final Thread acceptor;

    public HostileMetricsServer(Behaviour behaviour) {
        this.behaviour = behaviour;
        try {
            this.socket = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.acceptor = new Thread(this::acceptLoop, "hostile-metrics-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The page's URL. */
    public String url() {
        return "http://127.0.0.1:" + socket.getLocalPort() + "/metrics";
    }

    /** Requests received so far (their heads read; the exchange may still be going on). */
    public int requests() {
        return requests.get();
    }

    /**
     * The next finished exchange.
     *
     * @param timeoutSeconds how long to wait for it
     * @return what the server saw
     * @throws IllegalStateException when no exchange finished in time
     */
    public Exchange nextExchange(long timeoutSeconds) throws InterruptedException {
        Exchange e = exchanges.poll(timeoutSeconds, TimeUnit.SECONDS);
        if (e == null) {
            throw new IllegalStateException("no exchange finished in " + timeoutSeconds + " s");
        }
        return e;
    }

    private void acceptLoop() {
        while (!socket.isClosed()) {
            Socket connection;
            try {
                connection = socket.accept();
            } catch (IOException e) {
                return;
            }
            Thread t = new Thread(() -> serve(connection), "hostile-metrics-connection");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(Socket connection) {
        AtomicLong sent = new AtomicLong();
        boolean hungUp = false;
        try (connection) {
            InputStream in = connection.getInputStream();
            readRequestHead(in);
            requests.incrementAndGet();
            OutputStream out = connection.getOutputStream();
            switch (behaviour) {
                case HugePage p -> hugePage(out, p.bytes(), sent);
                case GzipBomb b -> gzipBomb(out, b.compressedBytes(), sent);
                case NeverEnding n -> neverEnding(out, n.gapMillis(), sent);
                case Endless e -> endless(out, sent);
                case Stalled s -> hungUp = stalled(in, out);
                case Page p -> page(out, p, sent);
            }
            out.flush();
        } catch (SocketException e) {
            hungUp = true; // broken pipe or reset: the client closed while we were sending
        } catch (IOException e) {
            hungUp = true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            exchanges.add(new Exchange(sent.get(), hungUp));
        }
    }

    private static void readRequestHead(InputStream in) throws IOException {
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("request ended early");
            }
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
    }

    private static void head(OutputStream out, String... headers) throws IOException {
        StringBuilder sb = new StringBuilder("HTTP/1.1 200 OK\r\n");
        sb.append("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n");
        for (String h : headers) {
            sb.append(h).append("\r\n");
        }
        sb.append("Connection: close\r\n\r\n");
        out.write(sb.toString().getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** 1 MiB of {@code hostile_gauge{i="..."} 1} lines, the unit every big body repeats. */
    static byte[] oneMebibyteOfLines() {
        byte[] block = new byte[1024 * 1024];
        int pos = 0;
        int i = 0;
        while (pos < block.length) {
            byte[] line =
                    ("hostile_gauge{i=\"" + (i++ % 100_000) + "\"} 1\n")
                            .getBytes(StandardCharsets.US_ASCII);
            int n = Math.min(line.length, block.length - pos);
            System.arraycopy(line, 0, block, pos, n);
            pos += n;
        }
        return block;
    }

    private static void hugePage(OutputStream out, long bytes, AtomicLong sent) throws IOException {
        head(out, "Content-Length: " + bytes);
        byte[] block = oneMebibyteOfLines();
        while (sent.get() < bytes) {
            int n = (int) Math.min(block.length, bytes - sent.get());
            out.write(block, 0, n);
            sent.addAndGet(n);
        }
    }

    private static void gzipBomb(OutputStream out, long compressedBytes, AtomicLong sent)
            throws IOException {
        ByteArrayOutputStream member = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(member)) {
            gz.write(oneMebibyteOfLines());
        }
        byte[] unit = member.toByteArray();
        long members = Math.max(1, compressedBytes / unit.length);
        head(out, "Content-Encoding: gzip", "Content-Length: " + members * unit.length);
        for (long m = 0; m < members; m++) {
            out.write(unit);
            sent.addAndGet(unit.length);
        }
    }

    private static void neverEnding(OutputStream out, long gapMillis, AtomicLong sent)
            throws IOException, InterruptedException {
        head(out, "Transfer-Encoding: chunked");
        for (int i = 0; ; i++) {
            byte[] line = ("endless_gauge{i=\"" + i + "\"} 1\n").getBytes(StandardCharsets.UTF_8);
            out.write((Integer.toHexString(line.length) + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.write(line);
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            sent.addAndGet(line.length);
            Thread.sleep(gapMillis);
        }
    }

    private static void endless(OutputStream out, AtomicLong sent) throws IOException {
        head(out, "Transfer-Encoding: chunked");
        byte[] block = oneMebibyteOfLines();
        byte[] size =
                (Integer.toHexString(block.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] end = "\r\n".getBytes(StandardCharsets.US_ASCII);
        while (true) {
            out.write(size);
            out.write(block);
            out.write(end);
            sent.addAndGet(block.length);
        }
    }

    /** Waits, sending nothing, until the client closes; true when it did. */
    private static boolean stalled(InputStream in, OutputStream out) throws IOException {
        head(out, "Transfer-Encoding: chunked");
        // A read returns -1 (or fails) only when the client hangs up.
        try {
            while (in.read() >= 0) {
                // the client sends nothing more on this connection; keep waiting
            }
        } catch (SocketException e) {
            // reset by the client: it hung up too
        }
        return true;
    }

    private static void page(OutputStream out, Page page, AtomicLong sent) throws IOException {
        byte[] body = page.text().getBytes(StandardCharsets.UTF_8);
        if (page.gzip()) {
            ByteArrayOutputStream gz = new ByteArrayOutputStream();
            try (GZIPOutputStream g = new GZIPOutputStream(gz)) {
                g.write(body);
            }
            body = gz.toByteArray();
            head(out, "Content-Encoding: gzip", "Content-Length: " + body.length);
        } else {
            head(out, "Content-Length: " + body.length);
        }
        out.write(body);
        sent.addAndGet(body.length);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
