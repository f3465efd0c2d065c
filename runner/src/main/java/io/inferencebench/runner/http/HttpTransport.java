package io.inferencebench.runner.http;

import io.inferencebench.profile.text.TerminalText;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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

    private final Endpoint endpoint;
    private final Spread spread;

    /**
     * The addresses that take turns now (the base URL's host alone when the transport does not
     * spread); replaced whole by {@link #spreadOver}, read without a lock on every request.
     */
    private volatile SpreadAddress[] active;

    /** Every pool made, the retired ones too (closing the transport closes them all). */
    private final List<ConnectionPool> allPools = new CopyOnWriteArrayList<>();

    /** Requests started per address name, in the order first sent to; guarded by itself. */
    private final Map<String, AtomicLong> startedByName = new LinkedHashMap<>();

    /** Every replacement of the address list, oldest first. */
    private final List<AddressChange> changes = new CopyOnWriteArrayList<>();

    /** Requests moved to another address because theirs refused the connection. */
    private final AtomicLong redirected = new AtomicLong();

    /** The next address in turn (round-robin over all loops, so the counts differ by ≤ 1). */
    private final AtomicLong turn = new AtomicLong();

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
        if (loopsOf != null) {
            this.epoll = loopsOf.epoll;
            this.group = loopsOf.group;
            this.ownsGroup = false;
            this.loops = loopsOf.loops;
            this.active = initialAddresses();
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
        this.active = initialAddresses();
    }

    private SpreadAddress[] initialAddresses() {
        if (!spread.spreads()) {
            return new SpreadAddress[] {newAddress(endpoint.host(), endpoint)};
        }
        return spread.addresses().stream()
                .map(a -> newAddress(Spread.name(a), endpointAt(a)))
                .toArray(SpreadAddress[]::new);
    }

    /** The base URL's TLS settings, connecting to {@code address} instead of its host. */
    private Endpoint endpointAt(InetSocketAddress address) {
        return new Endpoint(
                address.getAddress() != null
                        ? address.getAddress().getHostAddress()
                        : address.getHostString(),
                address.getPort(),
                endpoint.ssl(),
                endpoint.tlsName(),
                endpoint.verifyHostName());
    }

    /** An address with a new pool on every loop; its count carries on under its name. */
    private SpreadAddress newAddress(String name, Endpoint target) {
        ConnectionPool[] pools = new ConnectionPool[loops.length];
        AtomicLong started;
        synchronized (startedByName) {
            started = startedByName.computeIfAbsent(name, n -> new AtomicLong());
        }
        SpreadAddress address = new SpreadAddress(name, pools, started);
        for (int l = 0; l < loops.length; l++) {
            int loop = l;
            pools[l] =
                    new ConnectionPool(
                            loops[l],
                            new ConnectionPool.Settings(
                                    target,
                                    epoll,
                                    timeoutMillis,
                                    maxConnectionsPerLoop,
                                    spread.requestsPerConnection(),
                                    this::jvmError,
                                    () -> passOver(address),
                                    exchange -> redirect(exchange, address, loop)));
            allPools.add(pools[l]);
        }
        return address;
    }

    /**
     * The address whose turn it is, passing over those that refused a connection in the last {@link
     * #DOWN_NANOS} (their share goes to the others); when every one did, the one in turn.
     */
    private static SpreadAddress next(SpreadAddress[] addresses, AtomicLong turn) {
        long now = System.nanoTime();
        SpreadAddress first = null;
        for (int tries = 0; tries < addresses.length; tries++) {
            SpreadAddress address =
                    addresses[(int) Math.floorMod(turn.getAndIncrement(), (long) addresses.length)];
            if (first == null) {
                first = address;
            }
            if (address.up(now)) {
                return address;
            }
        }
        return first;
    }

    /** An address refused a connection: its turns go to the others for a while. */
    private void passOver(SpreadAddress address) {
        if (active.length > 1) {
            address.downUntil = System.nanoTime() + DOWN_NANOS;
        }
    }

    /**
     * A load request whose connection to {@code from} was refused (nothing was sent) goes to the
     * next address that takes turns, once per address at most, counted there: a replica that went
     * away costs no request. Its timeout starts again. On the loop {@code loop}.
     *
     * @return whether it was moved (else it fails as a connect failure)
     */
    private boolean redirect(Exchange exchange, SpreadAddress from, int loop) {
        SpreadAddress[] addresses = active;
        if (!spread.spreads()
                || !exchange.tracked
                || exchange.finished
                || exchange.redirects >= addresses.length - 1) {
            return false;
        }
        long now = System.nanoTime();
        SpreadAddress to = null;
        for (int tries = 0; tries < addresses.length && to == null; tries++) {
            SpreadAddress candidate = next(addresses, turn);
            if (candidate != from && candidate.up(now)) {
                to = candidate;
            }
        }
        if (to == null) {
            return false;
        }
        exchange.redirects++;
        from.started.decrementAndGet();
        to.started.incrementAndGet();
        redirected.incrementAndGet();
        ConnectionPool pool = to.pools[loop];
        exchange.moveTo(pool);
        pool.acquire(exchange);
        return true;
    }

    /**
     * Replaces the addresses requests are spread over (a replica joined or left): new requests go
     * round-robin over {@code addresses} at once; an address that left gets no new ones, its
     * requests in flight finish on their connections, which then close. Counts per address carry
     * on. Callable from any thread.
     *
     * @return the change, or {@code null} when the list is the same
     * @throws IllegalStateException when the transport sends to the base URL's host only
     * @throws IllegalArgumentException when {@code addresses} is empty
     */
    public synchronized AddressChange spreadOver(List<InetSocketAddress> addresses) {
        if (!spread.spreads()) {
            throw new IllegalStateException("the transport sends to its base URL's host only");
        }
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException("no address to send to");
        }
        Map<String, SpreadAddress> staying = new LinkedHashMap<>();
        for (SpreadAddress address : active) {
            staying.put(address.name, address);
        }
        List<String> joined = new ArrayList<>();
        List<SpreadAddress> next = new ArrayList<>();
        for (InetSocketAddress a : addresses) {
            String name = Spread.name(a);
            SpreadAddress kept = staying.remove(name);
            if (kept == null && next.stream().noneMatch(n -> n.name.equals(name))) {
                joined.add(name);
                next.add(newAddress(name, endpointAt(a)));
            } else if (kept != null) {
                next.add(kept);
            }
        }
        List<String> left = new ArrayList<>(staying.keySet());
        if (joined.isEmpty() && left.isEmpty()) {
            // The same addresses: the turn order in use stays.
            return null;
        }
        active = next.toArray(SpreadAddress[]::new);
        for (SpreadAddress gone : staying.values()) {
            for (ConnectionPool pool : gone.pools) {
                pool.loop.execute(pool::retire);
            }
        }
        AddressChange change = new AddressChange(System.nanoTime(), joined, left);
        changes.add(change);
        return change;
    }

    /** Every replacement of the address list so far, oldest first. */
    public List<AddressChange> addressChanges() {
        return List.copyOf(changes);
    }

    /** Requests moved so far to another address because theirs refused the connection. */
    public long redirectedRequests() {
        return redirected.get();
    }

    /**
     * Requests started so far per address the transport spreads over ({@code ip:port}, in the order
     * first given, those that left included), or an empty map when it sends to the base URL's host
     * only.
     */
    public Map<String, Long> requestsPerAddress() {
        Map<String, Long> counts = new LinkedHashMap<>();
        if (!spread.spreads()) {
            return counts;
        }
        synchronized (startedByName) {
            startedByName.forEach((name, started) -> counts.put(name, started.get()));
        }
        return counts;
    }

    /** The addresses that take turns now ({@code ip:port}), empty when it does not spread. */
    public List<String> activeAddresses() {
        if (!spread.spreads()) {
            return List.of();
        }
        return java.util.Arrays.stream(active).map(a -> a.name).toList();
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
        SpreadAddress[] addresses = active;
        SpreadAddress address = addresses.length > 1 ? next(addresses, turn) : addresses[0];
        if (spread.spreads()) {
            address.started.incrementAndGet();
        }
        ConnectionPool pool = address.pools[loop];
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
        List<ConnectionPool> pools = activePools();
        int addresses = active.length;
        int wanted = Math.min((perLoop + addresses - 1) / addresses, maxConnectionsPerLoop);
        CountDownLatch opened = new CountDownLatch(pools.size());
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
        for (ConnectionPool pool : activePools()) {
            idle += pool.idleCount;
        }
        return idle;
    }

    private List<ConnectionPool> activePools() {
        List<ConnectionPool> pools = new ArrayList<>();
        for (SpreadAddress address : active) {
            pools.addAll(List.of(address.pools));
        }
        return pools;
    }

    /**
     * Closes every idle keep-alive connection (between stages), giving their file descriptors back;
     * the next requests open new ones.
     */
    public void closeIdleConnections() {
        List<ConnectionPool> pools = List.copyOf(allPools);
        CountDownLatch closed = new CountDownLatch(pools.size());
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
                    ConnectionPool pool = active[0].pools[0];
                    Exchange exchange = new Exchange(pool, request, sink, timeout.toMillis());
                    exchange.timer =
                            loops[0].schedule(
                                    exchange::timedOut, timeout.toMillis(), TimeUnit.MILLISECONDS);
                    pool.acquire(exchange);
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
            List<ConnectionPool> pools = List.copyOf(allPools);
            CountDownLatch closed = new CountDownLatch(pools.size());
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
