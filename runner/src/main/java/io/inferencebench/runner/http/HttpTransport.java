package io.inferencebench.runner.http;

import io.inferencebench.profile.text.TerminalText;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Non-blocking HTTP/1.1 client for load generation, written directly on Netty's event loops: one
 * connection pool per loop, pre-encoded requests, response bytes handed to the sink as the network
 * delivered them.
 *
 * <p>Why not a general HTTP client (the runner used Vert.x's before): JFR showed that per request
 * it allocated about 10 KB of request objects, header maps, futures and a heap copy of every body
 * read, which cost young collections inside stages; and its pool can only be filled by requests, so
 * every stage started by opening connections while it was already due to send. Here a request is
 * one pre-encoded byte array wrapped in a buffer, the bytes of each read reach the sink without a
 * per-read copy of ours, and {@link #preconnect} opens keep-alive connections before a stage.
 *
 * <p>Threading: every exchange is started and finished on the loop it was assigned to, so a
 * connection, its timer and the per-request state are only ever touched by one thread.
 *
 * <p>Timeouts: one deadline per request, from send to the end of the body. When it fires the
 * exchange fails with {@link FailureClass#TIMEOUT} and its connection is closed; nothing is
 * retried. A connection found closed when taken from the pool is dropped before it is used.
 *
 * <p>JVM errors: Netty hands whatever a handler throws, {@link OutOfMemoryError} included, to
 * {@code exceptionCaught}, where it would look like a failed request ("other: Java heap space"). A
 * {@link VirtualMachineError} is instead reported to the {@link #onJvmError} listener (the engine
 * ends the run) and ends its exchange with {@link ResponseSink#onJvmError}, never as a failure.
 */
public final class HttpTransport implements AutoCloseable {

    /** A request encoded once (request line, headers, body), sent many times. */
    public static final class PreparedRequest {
        final byte[] wire;

        private PreparedRequest(byte[] wire) {
            this.wire = wire;
        }
    }

    private final EventLoopGroup group;
    private final boolean ownsGroup;
    private final boolean epoll;
    private final EventLoop[] loops;

    /**
     * One pool per loop and address: loop {@code l}'s pool for address {@code a} is {@code pools[l
     * * addresses + a]}.
     */
    private final ConnectionPool[] pools;

    private final Endpoint endpoint;
    private final Spread spread;
    private final Endpoint[] targets;

    /** Requests started per address (index as in {@link #targets}), over the whole transport. */
    private final AtomicLongArray startedPerTarget;

    /** The next address in turn (round-robin over all loops, so the counts differ by ≤ 1). */
    private final AtomicLong turn = new AtomicLong();

    /**
     * Per address, until when (System.nanoTime) it is passed over: a connection to it could not be
     * opened (a replica that went away). 0 when it takes its turns.
     */
    private final AtomicLongArray downUntil;

    /** How long an address that refused a connection is passed over before it is tried again. */
    static final long DOWN_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final String basePath;
    private final Map<String, String> baseHeaders;
    private final long timeoutMillis;
    private final int maxConnectionsPerLoop;
    private volatile java.util.function.Consumer<VirtualMachineError> jvmErrors;

    /**
     * @param baseUrl scheme, host, port and an optional path prefix, e.g. http://127.0.0.1:8000
     * @param headers headers sent with every request (e.g. Authorization); never logged
     * @param maxConnectionsPerLoop pool size per event loop
     */
    public HttpTransport(
            String baseUrl,
            Map<String, String> headers,
            int eventLoops,
            int maxConnectionsPerLoop,
            Duration requestTimeout) {
        this(
                baseUrl,
                headers,
                eventLoops,
                maxConnectionsPerLoop,
                requestTimeout,
                TlsOptions.VERIFY);
    }

    /** A transport whose https certificate checks follow {@code tls}. */
    public HttpTransport(
            String baseUrl,
            Map<String, String> headers,
            int eventLoops,
            int maxConnectionsPerLoop,
            Duration requestTimeout,
            TlsOptions tls) {
        this(baseUrl, headers, eventLoops, maxConnectionsPerLoop, requestTimeout, tls, Spread.NONE);
    }

    /**
     * A transport whose https certificate checks follow {@code tls} and whose connections go where
     * {@code spread} says.
     */
    public HttpTransport(
            String baseUrl,
            Map<String, String> headers,
            int eventLoops,
            int maxConnectionsPerLoop,
            Duration requestTimeout,
            TlsOptions tls,
            Spread spread) {
        this(
                baseUrl,
                headers,
                eventLoops,
                maxConnectionsPerLoop,
                requestTimeout,
                null,
                tls,
                spread);
    }

    /**
     * A transport to another server on the event loops of {@code loopsOf} (which keeps owning
     * them). The self-warm-up uses it: warming on the very threads that will carry the load
     * initialises their thread-local caches and lets the JIT see their first-use paths before a
     * measured stage, instead of deoptimising inside it.
     */
    public HttpTransport(
            String baseUrl,
            Map<String, String> headers,
            int maxConnectionsPerLoop,
            Duration requestTimeout,
            HttpTransport loopsOf) {
        this(
                baseUrl,
                headers,
                loopsOf.loops.length,
                maxConnectionsPerLoop,
                requestTimeout,
                loopsOf,
                TlsOptions.VERIFY,
                Spread.NONE);
    }

    private HttpTransport(
            String baseUrl,
            Map<String, String> headers,
            int eventLoops,
            int maxConnectionsPerLoop,
            Duration requestTimeout,
            HttpTransport loopsOf,
            TlsOptions tlsOptions,
            Spread spread) {
        URI uri = URI.create(baseUrl);
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("base URL needs a host: " + baseUrl);
        }
        boolean tls = "https".equalsIgnoreCase(uri.getScheme());
        String host = uri.getHost();
        int port = uri.getPort() > 0 ? uri.getPort() : (tls ? 443 : 80);
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        this.basePath = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        this.timeoutMillis = Math.max(1, requestTimeout.toMillis());
        this.baseHeaders = new LinkedHashMap<>(headers);
        this.maxConnectionsPerLoop = maxConnectionsPerLoop;
        this.endpoint =
                new Endpoint(
                        host,
                        port,
                        tls ? tlsOptions.context() : null,
                        tlsOptions.serverName() != null ? tlsOptions.serverName() : host,
                        !tlsOptions.insecureSkipVerify());
        this.spread = spread;
        this.targets =
                spread.spreads()
                        ? spread.addresses().stream()
                                .map(
                                        a ->
                                                new Endpoint(
                                                        a.getAddress() != null
                                                                ? a.getAddress().getHostAddress()
                                                                : a.getHostString(),
                                                        a.getPort(),
                                                        endpoint.ssl(),
                                                        endpoint.tlsName(),
                                                        endpoint.verifyHostName()))
                                .toArray(Endpoint[]::new)
                        : new Endpoint[] {endpoint};
        this.startedPerTarget = new AtomicLongArray(targets.length);
        this.downUntil = new AtomicLongArray(targets.length);
        if (loopsOf != null) {
            this.epoll = loopsOf.epoll;
            this.group = loopsOf.group;
            this.ownsGroup = false;
            this.loops = loopsOf.loops;
            this.pools = newPools();
            return;
        }
        this.ownsGroup = true;
        AtomicInteger threads = new AtomicInteger();
        ThreadFactory factory =
                r -> {
                    Thread t =
                            new io.netty.util.concurrent.FastThreadLocalThread(
                                    r, "ib-loop-" + threads.getAndIncrement());
                    t.setDaemon(true);
                    t.setPriority(Thread.MAX_PRIORITY);
                    return t;
                };
        // Epoll where the native library loads (Linux x86-64), else the JDK's selector;
        // -Dinferencebench.transport=nio forces the latter (for comparisons).
        this.epoll =
                !"nio".equals(System.getProperty("inferencebench.transport"))
                        && Epoll.isAvailable();
        this.group =
                epoll
                        ? new EpollEventLoopGroup(eventLoops, factory)
                        : new NioEventLoopGroup(eventLoops, factory);
        this.loops = new EventLoop[eventLoops];
        Iterator<io.netty.util.concurrent.EventExecutor> it = group.iterator();
        for (int i = 0; i < eventLoops; i++) {
            loops[i] = (EventLoop) it.next();
        }
        this.pools = newPools();
    }

    private ConnectionPool[] newPools() {
        ConnectionPool[] made = new ConnectionPool[loops.length * targets.length];
        for (int l = 0; l < loops.length; l++) {
            for (int a = 0; a < targets.length; a++) {
                int target = a;
                made[l * targets.length + a] =
                        new ConnectionPool(
                                loops[l],
                                new ConnectionPool.Settings(
                                        targets[a],
                                        epoll,
                                        timeoutMillis,
                                        maxConnectionsPerLoop,
                                        spread.requestsPerConnection(),
                                        this::jvmError,
                                        () -> passOver(target)));
            }
        }
        return made;
    }

    /**
     * The address whose turn it is, passing over those that refused a connection in the last {@link
     * #DOWN_NANOS} (their share goes to the others); when every one did, the one in turn.
     */
    private int nextTarget() {
        long now = System.nanoTime();
        int first = -1;
        for (int tries = 0; tries < targets.length; tries++) {
            int target = (int) Math.floorMod(turn.getAndIncrement(), (long) targets.length);
            if (first < 0) {
                first = target;
            }
            long until = downUntil.get(target);
            if (until == 0 || until - now <= 0) {
                return target;
            }
        }
        return first;
    }

    /** An address refused a connection: its turns go to the others for a while. */
    private void passOver(int target) {
        if (targets.length > 1) {
            downUntil.set(target, System.nanoTime() + DOWN_NANOS);
        }
    }

    /**
     * Requests started so far per address the transport spreads over ({@code ip:port}, in the order
     * given), or an empty map when it sends to the base URL's host only.
     */
    public Map<String, Long> requestsPerAddress() {
        Map<String, Long> counts = new LinkedHashMap<>();
        if (!spread.spreads()) {
            return counts;
        }
        for (int a = 0; a < targets.length; a++) {
            counts.put(Spread.name(spread.addresses().get(a)), startedPerTarget.get(a));
        }
        return counts;
    }

    public int loops() {
        return loops.length;
    }

    /**
     * Sets who hears of a {@link VirtualMachineError} raised while this transport's exchanges were
     * handled on its event loops (the engine: it stops the run). Called on the loop where it
     * happened; the listener must not block.
     */
    public void onJvmError(java.util.function.Consumer<VirtualMachineError> listener) {
        this.jvmErrors = listener;
    }

    /** Tells the listener, if any, of a JVM error on a loop. */
    void jvmError(VirtualMachineError error) {
        java.util.function.Consumer<VirtualMachineError> listener = jvmErrors;
        if (listener != null) {
            listener.accept(error);
        }
    }

    /** Runs {@code task} on loop {@code loop}. Callable from any thread. */
    public void execute(int loop, Runnable task) {
        loops[loop].execute(task);
    }

    /**
     * Runs {@code task} on loop {@code loop} after {@code delayNanos}, between two batches of
     * socket events (the epoll transport waits with a nanosecond timeout).
     */
    public ScheduledFuture<?> schedule(int loop, Runnable task, long delayNanos) {
        return loops[loop].schedule(task, delayNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Waits until every loop has run a task submitted now (at most {@code timeout}): afterwards
     * each loop is awake and its queue holds nothing older.
     */
    public void awaitLoops(Duration timeout) {
        CountDownLatch reached = new CountDownLatch(loops.length);
        for (EventLoop loop : loops) {
            loop.execute(reached::countDown);
        }
        try {
            reached.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Encodes a POST of {@code body} to {@code path} once, for any number of sends. */
    public PreparedRequest preparePost(String path, String accept, byte[] body) {
        byte[] head = head("POST", path, accept, "Content-Type: application/json\r\n", body.length);
        byte[] wire = new byte[head.length + body.length];
        System.arraycopy(head, 0, wire, 0, head.length);
        System.arraycopy(body, 0, wire, head.length, body.length);
        return new PreparedRequest(wire);
    }

    private byte[] head(String method, String path, String accept, String extra, int length) {
        StringBuilder sb = new StringBuilder(256);
        sb.append(method).append(' ').append(basePath).append(path).append(" HTTP/1.1\r\n");
        sb.append("Host: ").append(endpoint.host());
        if (!endpoint.defaultPort()) {
            sb.append(':').append(endpoint.port());
        }
        sb.append("\r\n");
        sb.append("User-Agent: inferencebench-runner\r\n");
        sb.append("Accept: ").append(accept).append("\r\n");
        sb.append(extra);
        baseHeaders.forEach(
                (k, v) -> {
                    if (k.indexOf('\r') >= 0
                            || k.indexOf('\n') >= 0
                            || v.indexOf('\r') >= 0
                            || v.indexOf('\n') >= 0) {
                        // checked before (HeaderValidation.validate); never the value
                        throw new IllegalArgumentException(
                                "header "
                                        + TerminalText.oneLine(k)
                                        + ": line breaks are not allowed in headers");
                    }
                    sb.append(k).append(": ").append(v).append("\r\n");
                });
        sb.append("Content-Length: ").append(length).append("\r\n\r\n");
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Starts one exchange. Must be called on loop {@code loop} (from {@link #execute}); the caller
     * takes the send instant right before calling.
     *
     * @return the exchange, which can be cancelled on the same loop
     */
    public Exchange post(int loop, PreparedRequest request, ResponseSink sink) {
        int target = targets.length > 1 ? nextTarget() : 0;
        if (spread.spreads()) {
            startedPerTarget.incrementAndGet(target);
        }
        ConnectionPool pool = pools[loop * targets.length + target];
        Exchange exchange = new Exchange(pool, request, sink, timeoutMillis);
        pool.track(exchange);
        pool.acquire(exchange);
        return exchange;
    }

    /**
     * Opens keep-alive connections until every loop has {@code perLoop} of them (idle or busy),
     * waiting at most {@code timeout}. Connections that fail to open are not reported: the requests
     * that need them will be.
     *
     * @return the number of idle connections ready when it returned
     */
    public int preconnect(int perLoop, Duration timeout) {
        // Each address's pool gets its share of the loop's connections.
        int wanted =
                Math.min((perLoop + targets.length - 1) / targets.length, maxConnectionsPerLoop);
        CountDownLatch opened = new CountDownLatch(pools.length);
        for (ConnectionPool pool : pools) {
            pool.loop.execute(() -> pool.fill(wanted, opened::countDown));
        }
        try {
            opened.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return idleConnections();
    }

    /**
     * Idle keep-alive connections over all loops. Exact on return from {@link #preconnect} or when
     * the loops are quiet; a moment's snapshot otherwise.
     */
    public int idleConnections() {
        int idle = 0;
        for (ConnectionPool pool : pools) {
            idle += pool.idleCount;
        }
        return idle;
    }

    /**
     * Closes every idle keep-alive connection (between stages), giving their file descriptors back;
     * the next requests open new ones.
     */
    public void closeIdleConnections() {
        CountDownLatch closed = new CountDownLatch(pools.length);
        for (ConnectionPool pool : pools) {
            pool.loop.execute(
                    () -> {
                        pool.closeIdle();
                        closed.countDown();
                    });
        }
        try {
            closed.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A whole response to a GET (model discovery): redirects are reported, not followed.
     *
     * @param status the HTTP status
     * @param contentType the Content-Type header, or {@code null}
     * @param location the Location of a redirect (the server's text), or {@code null}
     * @param body the body as UTF-8
     */
    public record Response(int status, String contentType, String location, String body) {}

    /** A GET whose whole body is returned as a string (model discovery); not for load. */
    public String get(String path, Duration timeout) throws Exception {
        Response response = fetch(path, timeout);
        if (response.status() >= 400) {
            throw new IOException("HTTP " + response.status() + " for GET " + path);
        }
        return response.body();
    }

    /**
     * A GET of {@code path}, any status (model discovery); not for load.
     *
     * @throws IOException {@code connect: ...}, {@code timeout: ...}, {@code tls: ...} (the failure
     *     class, then the reason) when no response came
     */
    public Response fetch(String path, Duration timeout) throws Exception {
        PreparedRequest request = new PreparedRequest(head("GET", path, "*/*", "", 0));
        WholeResponseSink sink = new WholeResponseSink(path);
        CompletableFuture<Response> result = sink.result;
        execute(
                0,
                () -> {
                    Exchange exchange = new Exchange(pools[0], request, sink, timeout.toMillis());
                    exchange.timer =
                            loops[0].schedule(
                                    exchange::timedOut, timeout.toMillis(), TimeUnit.MILLISECONDS);
                    pools[0].acquire(exchange);
                });
        try {
            return result.get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof VirtualMachineError error) {
                throw error;
            }
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    @Override
    public void close() {
        if (!ownsGroup) {
            // Borrowed loops: close only this transport's connections.
            CountDownLatch closed = new CountDownLatch(pools.length);
            for (ConnectionPool pool : pools) {
                pool.loop.execute(
                        () -> {
                            pool.closeAll();
                            closed.countDown();
                        });
            }
            try {
                closed.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "HttpTransport[%s:%d, %d loops]",
                endpoint.host(),
                endpoint.port(),
                loops.length);
    }
}
