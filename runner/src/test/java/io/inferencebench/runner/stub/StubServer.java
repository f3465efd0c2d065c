package io.inferencebench.runner.stub;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A loopback HTTP/1.1 server over raw sockets, so tests control every byte and every write (and
 * therefore how the client's reads are split). Keep-alive: each connection serves requests until
 * the client or the handler closes it. One thread per connection.
 */
public final class StubServer implements AutoCloseable {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    public interface Handler {
        void handle(Request request, Exchange exchange) throws Exception;
    }

    public record Request(String method, String path, Map<String, String> headers, byte[] body) {
        public JsonNode json() {
            try {
                return MAPPER.readTree(body);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    private final ServerSocket serverSocket;
    private final javax.net.ssl.SSLContext tls;
    private final Handler handler;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger requests = new AtomicInteger();
    private final java.util.Queue<AtomicInteger> perConnection =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final Thread acceptor;
    private volatile boolean closed;

    public StubServer(Handler handler) throws IOException {
        this(handler, (javax.net.ssl.SSLContext) null);
    }

    /** An HTTPS server when {@code tls} is set (its key manager holds the server certificate). */
    public StubServer(Handler handler, javax.net.ssl.SSLContext tls) throws IOException {
        this(handler, tls, InetAddress.getLoopbackAddress());
    }

    /**
     * An HTTP server on {@code address} (e.g. 127.0.0.2: every 127/8 address is this host's on
     * Linux), for clients that spread over several addresses.
     */
    public StubServer(Handler handler, InetAddress address) throws IOException {
        this(handler, null, address);
    }

    private StubServer(Handler handler, javax.net.ssl.SSLContext tls, InetAddress address)
            throws IOException {
        this.handler = handler;
        this.tls = tls;
        this.serverSocket =
                tls == null
                        ? new ServerSocket()
                        : tls.getServerSocketFactory().createServerSocket();
        serverSocket.bind(new InetSocketAddress(address, 0), 1024);
        this.acceptor = Thread.ofPlatform().daemon().name("stub-accept").start(this::acceptLoop);
    }

    public int port() {
        return serverSocket.getLocalPort();
    }

    public String baseUrl() {
        return (tls == null ? "http" : "https") + "://127.0.0.1:" + port();
    }

    public int connections() {
        return connections.get();
    }

    /** Connections open now (accepted and not yet closed by either side). */
    public int openConnections() {
        return sockets.size();
    }

    public int requests() {
        return requests.get();
    }

    /** The requests each connection carried so far, in the order they were accepted. */
    public List<Integer> requestsPerConnection() {
        return perConnection.stream().map(AtomicInteger::get).toList();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket socket = serverSocket.accept();
                socket.setTcpNoDelay(true);
                sockets.add(socket);
                connections.incrementAndGet();
                AtomicInteger carried = new AtomicInteger();
                perConnection.add(carried);
                Thread.ofPlatform().daemon().name("stub-conn").start(() -> serve(socket, carried));
            } catch (IOException e) {
                if (!closed) {
                    e.printStackTrace();
                }
            }
        }
    }

    private void serve(Socket socket, AtomicInteger carried) {
        try (socket) {
            InputStream in = new BufferedInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            while (!closed) {
                Request request = readRequest(in);
                if (request == null) {
                    return;
                }
                requests.incrementAndGet();
                carried.incrementAndGet();
                Exchange exchange = new Exchange(socket, out);
                handler.handle(request, exchange);
                if (exchange.closed) {
                    return;
                }
            }
        } catch (SocketException e) {
            // client went away
        } catch (Exception e) {
            if (!closed) {
                e.printStackTrace();
            }
        } finally {
            sockets.remove(socket);
        }
    }

    private static Request readRequest(InputStream in) throws IOException {
        String requestLine = readLine(in);
        if (requestLine == null) {
            return null;
        }
        String[] parts = requestLine.split(" ");
        Map<String, String> headers = new TreeMap<>();
        String line;
        while ((line = readLine(in)) != null && !line.isEmpty()) {
            int colon = line.indexOf(':');
            headers.put(
                    line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                    line.substring(colon + 1).trim());
        }
        int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
        byte[] body = in.readNBytes(length);
        return new Request(parts[0], parts[1], headers, body);
    }

    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != -1) {
            if (b == '\n') {
                String s = line.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            line.write(b);
        }
        return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        closed = true;
        serverSocket.close();
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /** Writes one response. Every write is flushed as its own TCP segment (TCP_NODELAY). */
    public static final class Exchange {
        private final Socket socket;
        private final OutputStream out;
        private boolean chunked;
        boolean closed;

        Exchange(Socket socket, OutputStream out) {
            this.socket = socket;
            this.out = out;
        }

        /** Status line and headers of a chunked response. */
        public Exchange startChunked(int status, String contentType) throws IOException {
            chunked = true;
            raw(
                    "HTTP/1.1 "
                            + status
                            + " X\r\nContent-Type: "
                            + contentType
                            + "\r\nTransfer-Encoding: chunked\r\n\r\n");
            return this;
        }

        public Exchange startSse() throws IOException {
            return startChunked(200, "text/event-stream");
        }

        /** One chunk with this text; returns System.nanoTime() right after the flush. */
        public long chunk(String text) throws IOException {
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            ByteArrayOutputStream frame = new ByteArrayOutputStream();
            frame.write(
                    (Integer.toHexString(bytes.length) + "\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            frame.write(bytes);
            frame.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            out.write(frame.toByteArray());
            out.flush();
            return System.nanoTime();
        }

        public void endChunked() throws IOException {
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }

        /** A complete response with a Content-Length body. */
        public void respond(int status, String contentType, String body) throws IOException {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            raw(
                    "HTTP/1.1 "
                            + status
                            + " X\r\nContent-Type: "
                            + contentType
                            + "\r\nContent-Length: "
                            + bytes.length
                            + "\r\n\r\n");
            out.write(bytes);
            out.flush();
        }

        public void raw(String text) throws IOException {
            out.write(text.getBytes(StandardCharsets.UTF_8));
            out.flush();
        }

        /** Drops the connection without finishing the response. */
        public void close() throws IOException {
            closed = true;
            socket.close();
        }

        public boolean isChunked() {
            return chunked;
        }
    }

    /** Sleeps until {@code deadline} (nanoTime) precisely: park, then spin the last 200 µs. */
    public static void sleepUntil(long deadline) {
        long remaining;
        while ((remaining = deadline - System.nanoTime()) > 200_000) {
            LockSupport.parkNanos(remaining - 200_000);
        }
        while (System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
    }
}
