package io.inferencebench.runner.http;

import io.inferencebench.profile.text.TerminalText;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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
        private final byte[] wire;

        private PreparedRequest(byte[] wire) {
            this.wire = wire;
        }
    }

    private final EventLoopGroup group;
    private final boolean ownsGroup;
    private final boolean epoll;
    private final EventLoop[] loops;
    private final Pool[] pools;
    private final SslContext ssl;

    /** Whether the certificate must name {@link #tlsName} (off only with insecureSkipVerify). */
    private final boolean verifyHostName;

    /** The name sent as SNI and verified in the certificate. */
    private final String tlsName;

    private final String host;
    private final int port;
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
                null,
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
        this(baseUrl, headers, eventLoops, maxConnectionsPerLoop, requestTimeout, null, tls);
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
                TlsOptions.VERIFY);
    }

    private HttpTransport(
            String baseUrl,
            Map<String, String> headers,
            int eventLoops,
            int maxConnectionsPerLoop,
            Duration requestTimeout,
            HttpTransport loopsOf,
            TlsOptions tlsOptions) {
        URI uri = URI.create(baseUrl);
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("base URL needs a host: " + baseUrl);
        }
        boolean tls = "https".equalsIgnoreCase(uri.getScheme());
        this.host = uri.getHost();
        this.port = uri.getPort() > 0 ? uri.getPort() : (tls ? 443 : 80);
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        this.basePath = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        this.timeoutMillis = Math.max(1, requestTimeout.toMillis());
        this.baseHeaders = new LinkedHashMap<>(headers);
        this.maxConnectionsPerLoop = maxConnectionsPerLoop;
        this.ssl = tls ? tlsOptions.context() : null;
        this.verifyHostName = !tlsOptions.insecureSkipVerify();
        this.tlsName = tlsOptions.serverName() != null ? tlsOptions.serverName() : host;
        if (loopsOf != null) {
            this.epoll = loopsOf.epoll;
            this.group = loopsOf.group;
            this.ownsGroup = false;
            this.loops = loopsOf.loops;
            this.pools = new Pool[loops.length];
            for (int i = 0; i < loops.length; i++) {
                pools[i] = new Pool(loops[i]);
            }
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
        this.pools = new Pool[eventLoops];
        Iterator<io.netty.util.concurrent.EventExecutor> it = group.iterator();
        for (int i = 0; i < eventLoops; i++) {
            loops[i] = (EventLoop) it.next();
            pools[i] = new Pool(loops[i]);
        }
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
        sb.append("Host: ").append(host);
        if (port != (ssl != null ? 443 : 80)) {
            sb.append(':').append(port);
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
                        // checked before (SpecValidation.validateHeaders); never the value
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
        Exchange exchange = new Exchange(pools[loop], request, sink, timeoutMillis);
        pools[loop].track(exchange);
        pools[loop].acquire(exchange);
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
        int wanted = Math.min(perLoop, maxConnectionsPerLoop);
        CountDownLatch opened = new CountDownLatch(loops.length);
        for (Pool pool : pools) {
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
        for (Pool pool : pools) {
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
        for (Pool pool : pools) {
            pool.loop.execute(
                    () -> {
                        Connection c;
                        while ((c = pool.idle.pollFirst()) != null) {
                            pool.idleCount--;
                            c.channel.close();
                        }
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

    /** Largest body {@link #fetch} reads. */
    static final int MAX_FETCH_BYTES = 4 << 20;

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
        CompletableFuture<Response> result = new CompletableFuture<>();
        ResponseSink sink =
                new ResponseSink() {
                    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
                    private int status;
                    private String contentType;
                    private String location;

                    @Override
                    public void onRedirect(String target) {
                        location = target;
                    }

                    @Override
                    public void onStatus(int statusCode, String type) {
                        status = statusCode;
                        contentType = type;
                    }

                    @Override
                    public boolean onBytes(byte[] data, int offset, int length) {
                        if (body.size() + length > MAX_FETCH_BYTES) {
                            result.completeExceptionally(
                                    new IOException(
                                            "the answer to GET "
                                                    + path
                                                    + " is larger than "
                                                    + MAX_FETCH_BYTES / (1 << 20)
                                                    + " MiB"));
                            return false;
                        }
                        body.write(data, offset, length);
                        return true;
                    }

                    @Override
                    public void onEnd(long nanos) {
                        result.complete(
                                new Response(
                                        status,
                                        contentType,
                                        location,
                                        body.toString(StandardCharsets.UTF_8)));
                    }

                    @Override
                    public void onFailure(FailureClass failure, String message, long nanos) {
                        result.completeExceptionally(
                                new IOException(failure.wireName() + ": " + message));
                    }

                    @Override
                    public void onCancelled(long nanos) {
                        result.completeExceptionally(new IOException("cancelled"));
                    }

                    @Override
                    public void onJvmError(VirtualMachineError error, long nanos) {
                        result.completeExceptionally(error);
                    }
                };
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

    /** The process ran out of file descriptors (EMFILE): no new socket can be opened. */
    static boolean outOfFileDescriptors(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("Too many open files")) {
                return true;
            }
        }
        return false;
    }

    static FailureClass classifyConnect(Throwable cause) {
        if (outOfFileDescriptors(cause)) {
            return FailureClass.CONNECT;
        }
        if (cause instanceof ConnectException
                || cause instanceof ConnectTimeoutException
                || cause instanceof UnknownHostException
                || cause instanceof NoRouteToHostException
                || (cause.getCause() instanceof ConnectException)) {
            return FailureClass.CONNECT;
        }
        return classifyStream(cause);
    }

    /** What a TLS failure means for the user; see {@link TlsOptions#describeFailure}. */
    static String tlsReason(Throwable cause) {
        return TlsOptions.describeFailure(cause);
    }

    static FailureClass classifyStream(Throwable cause) {
        if (TlsOptions.tlsFailure(cause) != null) {
            return FailureClass.TLS;
        }
        String message = cause.getMessage() == null ? "" : cause.getMessage();
        if (cause instanceof ClosedChannelException
                || (cause instanceof IOException
                        && (message.contains("reset")
                                || message.contains("closed")
                                || message.contains("Broken pipe")))) {
            return FailureClass.RESET;
        }
        if (cause instanceof ConnectException) {
            return FailureClass.CONNECT;
        }
        return FailureClass.OTHER;
    }

    @Override
    public void close() {
        if (!ownsGroup) {
            // Borrowed loops: close only this transport's connections.
            CountDownLatch closed = new CountDownLatch(pools.length);
            for (Pool pool : pools) {
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

    /** Connections of one loop: idle ones, how many are open, exchanges waiting for one. */
    private final class Pool {
        final EventLoop loop;
        final Bootstrap bootstrap;
        final ArrayDeque<Connection> idle = new ArrayDeque<>();
        final ArrayDeque<Exchange> waiting = new ArrayDeque<>();
        final java.util.Set<Channel> channels = new java.util.HashSet<>();
        int open;
        int idleCount;

        /**
         * Load exchanges in flight, oldest first. They share one timeout, so this is also their
         * deadline order, and one timer for the oldest serves them all (a scheduled task per
         * request cost an allocation and two priority-queue operations).
         */
        Exchange oldest;

        Exchange newest;
        ScheduledFuture<?> expiry;

        Pool(EventLoop loop) {
            this.loop = loop;
            this.bootstrap =
                    new Bootstrap()
                            .group(loop)
                            .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                            .option(ChannelOption.TCP_NODELAY, true)
                            .option(ChannelOption.SO_KEEPALIVE, true)
                            // Socket reads still land in direct buffers (Netty's ioBuffer);
                            // what the HTTP decoder accumulates across reads is on the heap,
                            // where the SSE parser scans the array in place.
                            .option(ChannelOption.ALLOCATOR, new PooledByteBufAllocator(false))
                            .option(
                                    ChannelOption.CONNECT_TIMEOUT_MILLIS,
                                    (int) Math.min(timeoutMillis, 30_000))
                            .handler(
                                    new ChannelInitializer<SocketChannel>() {
                                        @Override
                                        protected void initChannel(SocketChannel ch) {
                                            if (ssl != null) {
                                                ch.pipeline().addLast(tlsHandler(ch));
                                            }
                                            ch.pipeline().addLast(new Connection(Pool.this));
                                        }
                                    });
        }

        private io.netty.handler.ssl.SslHandler tlsHandler(SocketChannel ch) {
            io.netty.handler.ssl.SslHandler handler = ssl.newHandler(ch.alloc(), tlsName, port);
            if (verifyHostName) {
                // Netty checks the chain but not the name unless asked: without this any
                // certificate the trust store accepts would do for any host.
                javax.net.ssl.SSLEngine engine = handler.engine();
                javax.net.ssl.SSLParameters parameters = engine.getSSLParameters();
                parameters.setEndpointIdentificationAlgorithm("HTTPS");
                engine.setSSLParameters(parameters);
            }
            return handler;
        }

        void track(Exchange exchange) {
            long now = System.nanoTime();
            exchange.deadlineNanos = now + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
            exchange.tracked = true;
            exchange.older = newest;
            if (newest != null) {
                newest.newer = exchange;
            } else {
                oldest = exchange;
            }
            newest = exchange;
            if (expiry == null) {
                expiry =
                        loop.schedule(
                                this::expire, exchange.deadlineNanos - now, TimeUnit.NANOSECONDS);
            }
        }

        void untrack(Exchange exchange) {
            if (!exchange.tracked) {
                return;
            }
            exchange.tracked = false;
            if (exchange.older != null) {
                exchange.older.newer = exchange.newer;
            } else {
                oldest = exchange.newer;
            }
            if (exchange.newer != null) {
                exchange.newer.older = exchange.older;
            } else {
                newest = exchange.older;
            }
            exchange.older = null;
            exchange.newer = null;
        }

        /** Fails every exchange past its deadline and sets the timer for the next one. */
        private void expire() {
            expiry = null;
            long now = System.nanoTime();
            try {
                while (oldest != null && oldest.deadlineNanos - now <= 0) {
                    Exchange late = oldest;
                    untrack(late);
                    late.timedOut();
                }
            } catch (VirtualMachineError error) {
                // A timer task's throwable would only be logged by Netty.
                jvmError(error);
            }
            if (oldest != null && expiry == null) {
                expiry =
                        loop.schedule(
                                this::expire, oldest.deadlineNanos - now, TimeUnit.NANOSECONDS);
            }
        }

        void acquire(Exchange exchange) {
            Connection c;
            while ((c = idle.pollLast()) != null) {
                idleCount--;
                if (c.channel.isActive()) {
                    exchange.start(c);
                    return;
                }
            }
            if (open < maxConnectionsPerLoop) {
                connect(exchange, null);
            } else {
                exchange.queuedNanos = System.nanoTime();
                waiting.addLast(exchange);
            }
        }

        /** Opens a connection for {@code exchange}, or into the idle pool when it is null. */
        void connect(Exchange exchange, Runnable onOpened) {
            open++;
            ChannelFuture f = bootstrap.connect(host, port);
            f.addListener(
                    done -> {
                        if (!done.isSuccess()) {
                            open--;
                            if (done.cause() instanceof VirtualMachineError error) {
                                if (exchange != null) {
                                    exchange.jvmError(error);
                                }
                                jvmError(error);
                            } else if (exchange != null) {
                                Throwable cause = done.cause();
                                FailureClass failureClass = classifyConnect(cause);
                                if (outOfFileDescriptors(cause)) {
                                    cause =
                                            new IOException(
                                                    "cannot open a connection: too many open files"
                                                            + " (raise the limit, e.g. ulimit -n,"
                                                            + " or lower --max-connections)");
                                }
                                exchange.fail(failureClass, cause);
                            }
                            if (onOpened != null) {
                                onOpened.run();
                            }
                            serveWaiting();
                            return;
                        }
                        Connection c = f.channel().pipeline().get(Connection.class);
                        channels.add(c.channel);
                        if (exchange != null && !exchange.finished) {
                            exchange.start(c);
                        } else {
                            release(c);
                        }
                        if (onOpened != null) {
                            onOpened.run();
                        }
                    });
        }

        void fill(int wanted, Runnable done) {
            int missing = wanted - open;
            if (missing <= 0) {
                done.run();
                return;
            }
            AtomicInteger left = new AtomicInteger(missing);
            for (int i = 0; i < missing; i++) {
                connect(
                        null,
                        () -> {
                            if (left.decrementAndGet() == 0) {
                                done.run();
                            }
                        });
            }
        }

        /** A connection whose exchange ended cleanly goes back to the pool (or a waiter). */
        void release(Connection c) {
            if (!c.channel.isActive()) {
                return;
            }
            Exchange next;
            while ((next = waiting.pollFirst()) != null) {
                if (!next.finished) {
                    next.dequeued();
                    next.start(c);
                    return;
                }
            }
            idle.addLast(c);
            idleCount++;
        }

        /** A connection closed: count it and let a waiting exchange open a new one. */
        void closed(Channel channel) {
            channels.remove(channel);
            open--;
            serveWaiting();
        }

        void reportJvmError(VirtualMachineError error) {
            jvmError(error);
        }

        /** Closes every connection of this pool (on its loop). */
        void closeAll() {
            for (Channel c : List.copyOf(channels)) {
                c.close();
            }
            idle.clear();
            idleCount = 0;
        }

        private void serveWaiting() {
            Exchange next;
            while (open < maxConnectionsPerLoop && (next = waiting.pollFirst()) != null) {
                if (!next.finished) {
                    next.dequeued();
                    connect(next, null);
                }
            }
        }
    }

    /**
     * Socket reads land in direct buffers; each is copied once into this array, where the response
     * framer and the SSE parser both scan it.
     */
    private static final io.netty.util.concurrent.FastThreadLocal<byte[]> READ_SCRATCH =
            new io.netty.util.concurrent.FastThreadLocal<>() {
                @Override
                protected byte[] initialValue() {
                    return new byte[64 * 1024];
                }
            };

    /** One keep-alive connection; carries at most one exchange at a time. */
    private static final class Connection extends ChannelInboundHandlerAdapter
            implements ResponseFramer.Receiver {
        final Pool pool;
        final ResponseFramer framer = new ResponseFramer();
        Channel channel;
        Exchange current;
        boolean keepAlive;

        Connection(Pool pool) {
            this.pool = pool;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            channel = ctx.channel();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf bytes = (ByteBuf) msg;
            try {
                if (current == null) {
                    // Bytes without a request (a server that ignored keep-alive rules): drop it.
                    ctx.close();
                    return;
                }
                int length = bytes.readableBytes();
                byte[] data;
                int offset;
                if (bytes.hasArray()) {
                    data = bytes.array();
                    offset = bytes.arrayOffset() + bytes.readerIndex();
                } else {
                    data = READ_SCRATCH.get();
                    if (data.length < length) {
                        data = new byte[Math.max(length, data.length * 2)];
                        READ_SCRATCH.set(data);
                    }
                    bytes.getBytes(bytes.readerIndex(), data, 0, length);
                    offset = 0;
                }
                framer.feed(data, offset, length, this);
            } finally {
                bytes.release();
            }
        }

        @Override
        public void head(int status, String contentType, boolean reusable) {
            Exchange exchange = current;
            if (exchange != null) {
                keepAlive = reusable;
                if (status >= 300 && status < 400 && framer.location() != null) {
                    exchange.sink.onRedirect(framer.location());
                }
                exchange.sink.onStatus(status, contentType);
            }
        }

        @Override
        public boolean body(byte[] data, int offset, int length) {
            Exchange exchange = current;
            if (exchange == null) {
                return false;
            }
            if (length > 0 && !exchange.sink.onBytes(data, offset, length)) {
                exchange.abort();
                return false;
            }
            return true;
        }

        @Override
        public void end(boolean reusable) {
            Exchange exchange = current;
            if (exchange != null) {
                keepAlive = reusable;
                exchange.complete();
            }
        }

        @Override
        public void malformed(String reason) {
            Exchange exchange = current;
            if (exchange != null) {
                exchange.fail(
                        FailureClass.OTHER, new IOException("malformed HTTP response: " + reason));
            } else {
                channel.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            Exchange exchange = current;
            if (exchange != null) {
                if (framer.bodyUntilClose()) {
                    // The body's end is the connection's end (no length, not chunked).
                    keepAlive = false;
                    exchange.complete();
                } else {
                    exchange.fail(
                            FailureClass.RESET,
                            new ClosedChannelException() {
                                @Override
                                public String getMessage() {
                                    return "connection closed before the response ended";
                                }
                            });
                }
            }
            pool.closed(ctx.channel());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            Exchange exchange = current;
            if (cause instanceof VirtualMachineError error) {
                // The JVM failed, not the server: never a failed request.
                if (exchange != null) {
                    exchange.jvmError(error);
                } else {
                    ctx.close();
                }
                pool.reportJvmError(error);
                return;
            }
            if (exchange != null) {
                exchange.fail(classifyStream(cause), cause);
            } else {
                ctx.close();
            }
        }
    }

    /** State of one exchange; only touched on its event loop. */
    public final class Exchange {
        private final Pool pool;
        private final PreparedRequest request;
        private final ResponseSink sink;
        private final long timeoutMillis;

        /** A timer of its own (a GET); load exchanges are tracked by their pool instead. */
        private ScheduledFuture<?> timer;

        private Connection connection;
        private boolean finished;

        /** Links and deadline in its pool's list of tracked exchanges. */
        boolean tracked;

        Exchange older;
        Exchange newer;
        long deadlineNanos;

        /** When it joined the pool's queue; 0 when it never waited there. */
        long queuedNanos;

        private long poolWaitNanos;

        Exchange(Pool pool, PreparedRequest request, ResponseSink sink, long timeoutMillis) {
            this.pool = pool;
            this.request = request;
            this.sink = sink;
            this.timeoutMillis = timeoutMillis;
        }

        void dequeued() {
            if (queuedNanos != 0) {
                poolWaitNanos = System.nanoTime() - queuedNanos;
            }
        }

        void start(Connection c) {
            connection = c;
            c.current = this;
            c.keepAlive = false;
            c.framer.reset();
            if (poolWaitNanos > 0) {
                sink.onPoolWait(poolWaitNanos);
            }
            sink.onConnected(System.nanoTime());
            c.channel
                    .writeAndFlush(Unpooled.wrappedBuffer(request.wire))
                    .addListener(
                            written -> {
                                if (written.isSuccess()) {
                                    return;
                                }
                                if (written.cause() instanceof VirtualMachineError error) {
                                    jvmError(error);
                                    pool.reportJvmError(error);
                                } else {
                                    fail(classifyStream(written.cause()), written.cause());
                                }
                            });
        }

        /** The response ended: the connection goes back to the pool before the sink hears. */
        void complete() {
            Connection c = detach();
            if (c.keepAlive) {
                pool.release(c);
            } else {
                c.channel.close();
            }
            sink.onEnd(System.nanoTime());
        }

        void timedOut() {
            timer = null;
            if (finished) {
                return;
            }
            long now = System.nanoTime();
            closeConnection();
            sink.onFailure(
                    FailureClass.TIMEOUT,
                    "no complete response within " + timeoutMillis + " ms",
                    now);
        }

        void fail(FailureClass failure, Throwable cause) {
            if (finished) {
                return;
            }
            long now = System.nanoTime();
            closeConnection();
            String message =
                    failure == FailureClass.TLS
                            ? tlsReason(cause)
                            : (cause.getMessage() == null
                                    ? cause.getClass().getSimpleName()
                                    : cause.getMessage());
            sink.onFailure(failure, message, now);
        }

        /**
         * Ends the exchange for a JVM error: its connection is closed and the sink hears {@link
         * ResponseSink#onJvmError}; nothing if it already finished.
         */
        void jvmError(VirtualMachineError error) {
            if (finished) {
                return;
            }
            long now = System.nanoTime();
            closeConnection();
            sink.onJvmError(error, now);
        }

        /**
         * Aborts the exchange (its connection is closed, so no half-read stream is reused) and
         * reports {@link ResponseSink#onCancelled}; nothing if it already finished. Call on the
         * exchange's loop.
         */
        public void cancel() {
            if (finished) {
                return;
            }
            closeConnection();
            sink.onCancelled(System.nanoTime());
        }

        /** The sink rejected the body; drop the connection so no half-read stream is reused. */
        void abort() {
            closeConnection();
        }

        private void closeConnection() {
            Connection c = detach();
            if (c != null) {
                c.channel.close();
            } else {
                pool.waiting.remove(this);
            }
        }

        /** Marks the exchange finished, stops its timer and unhooks it from its connection. */
        private Connection detach() {
            finished = true;
            if (timer != null) {
                timer.cancel(false);
                timer = null;
            }
            pool.untrack(this);
            Connection c = connection;
            if (c != null && c.current == this) {
                c.current = null;
            }
            connection = null;
            return c;
        }
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT, "HttpTransport[%s:%d, %d loops]", host, port, loops.length);
    }
}
