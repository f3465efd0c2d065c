package io.inferencebench.runner.http;

import io.netty.channel.ConnectTimeoutException;
import io.vertx.core.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.impl.VertxInternal;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Non-blocking HTTP/1.1 transport with pooled keep-alive connections, built on Vert.x core (the
 * Vert.x managed by the project's BOM; no Quarkus).
 *
 * <p>Why Vert.x core rather than raw Netty: it is a thin layer over Netty's event loops that
 * already gets the hard parts of an HTTP client right — connection pooling and keep-alive reuse,
 * chunked framing, back-pressure, connect timeouts, and no automatic retries — while every body
 * read still reaches us as the raw bytes of one network read on the event loop, which is all the
 * SSE parser needs. Raw Netty would only save the Future allocations per request, which JFR shows
 * are not where the time goes.
 *
 * <p>Threading: one Vert.x event-loop context and one {@link HttpClient} per loop. Every exchange
 * is started and finished on the loop it was assigned to, so a pooled connection, its timers and
 * the per-request state are only ever touched by one thread and need no locks.
 *
 * <p>Timeouts: one deadline per request, from send to the end of the body. When it fires the
 * exchange fails with {@link FailureClass#TIMEOUT} and its connection is reset; nothing is retried.
 */
public final class HttpTransport implements AutoCloseable {

    private final Vertx vertx;
    private final boolean ownsVertx;
    private final Context[] contexts;
    private final HttpClient[] clients;
    private final String host;
    private final int port;
    private final String basePath;
    private final MultiMap baseHeaders;
    private final long timeoutMillis;

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
        this.baseHeaders = MultiMap.caseInsensitiveMultiMap();
        headers.forEach(baseHeaders::add);
        this.vertx =
                Vertx.vertx(
                        new VertxOptions()
                                .setEventLoopPoolSize(eventLoops)
                                .setWorkerPoolSize(1)
                                .setInternalBlockingPoolSize(1)
                                .setBlockedThreadCheckInterval(1)
                                .setBlockedThreadCheckIntervalUnit(TimeUnit.HOURS));
        this.ownsVertx = true;
        this.contexts = new Context[eventLoops];
        this.clients = new HttpClient[eventLoops];
        HttpClientOptions options =
                new HttpClientOptions()
                        .setSsl(tls)
                        .setTrustAll(tls)
                        .setVerifyHost(false)
                        .setKeepAlive(true)
                        .setKeepAliveTimeout(60)
                        .setPipelining(false)
                        .setTcpNoDelay(true)
                        .setTryUseCompression(false)
                        .setDecompressionSupported(false)
                        .setConnectTimeout((int) Math.min(timeoutMillis, 30_000))
                        .setMaxInitialLineLength(16 * 1024)
                        .setMaxHeaderSize(64 * 1024);
        PoolOptions pool =
                new PoolOptions()
                        .setHttp1MaxSize(maxConnectionsPerLoop)
                        .setMaxWaitQueueSize(-1)
                        .setEventLoopSize(0);
        // One context per distinct event loop: contexts made from a non-Vert.x thread may share a
        // loop (JFR showed all traffic on one of two loops), so pick loops explicitly.
        VertxInternal internal = (VertxInternal) vertx;
        java.util.Set<io.netty.channel.EventLoop> used = new java.util.HashSet<>();
        int made = 0;
        for (io.netty.util.concurrent.EventExecutor executor : internal.getEventLoopGroup()) {
            if (made == eventLoops) {
                break;
            }
            io.netty.channel.EventLoop loop = (io.netty.channel.EventLoop) executor;
            if (used.add(loop)) {
                contexts[made] =
                        internal.createEventLoopContext(
                                loop, null, Thread.currentThread().getContextClassLoader());
                clients[made] = vertx.createHttpClient(options, pool);
                made++;
            }
        }
        if (made != eventLoops) {
            throw new IllegalStateException(
                    "expected " + eventLoops + " event loops, found " + made);
        }
    }

    public int loops() {
        return contexts.length;
    }

    public Vertx vertx() {
        return vertx;
    }

    /** Runs {@code task} on loop {@code loop}. Callable from any thread. */
    public void execute(int loop, Runnable task) {
        contexts[loop].runOnContext(v -> task.run());
    }

    /**
     * Starts one POST exchange. Must be called on loop {@code loop} (from {@link #execute}); the
     * caller takes the send instant right before calling.
     *
     * @return the exchange, which can be cancelled on the same loop
     */
    public Exchange post(int loop, String path, String accept, Buffer body, ResponseSink sink) {
        Exchange exchange = new Exchange(sink);
        RequestOptions options =
                new RequestOptions()
                        .setMethod(HttpMethod.POST)
                        .setHost(host)
                        .setPort(port)
                        .setURI(basePath + path)
                        .setHeaders(MultiMap.caseInsensitiveMultiMap().addAll(baseHeaders))
                        .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                        .putHeader(HttpHeaders.ACCEPT, accept);
        exchange.timer = vertx.setTimer(timeoutMillis, id -> exchange.timedOut());
        clients[loop]
                .request(options)
                .onComplete(
                        ar -> {
                            if (ar.failed()) {
                                exchange.fail(classifyConnect(ar.cause()), ar.cause());
                                return;
                            }
                            exchange.start(ar.result(), body);
                        });
        return exchange;
    }

    /** A GET whose whole body is returned as a string (model discovery); not for load. */
    public String get(String path, Duration timeout) throws Exception {
        var future =
                clients[0]
                        .request(
                                new RequestOptions()
                                        .setMethod(HttpMethod.GET)
                                        .setHost(host)
                                        .setPort(port)
                                        .setURI(basePath + path)
                                        .setHeaders(
                                                MultiMap.caseInsensitiveMultiMap()
                                                        .addAll(baseHeaders))
                                        .setTimeout(timeout.toMillis()))
                        .compose(
                                req ->
                                        req.send()
                                                .compose(
                                                        resp -> {
                                                            if (resp.statusCode() >= 400) {
                                                                return io.vertx.core.Future
                                                                        .failedFuture(
                                                                                "HTTP "
                                                                                        + resp
                                                                                                .statusCode()
                                                                                        + " for GET "
                                                                                        + path);
                                                            }
                                                            return resp.body();
                                                        }));
        return future.toCompletionStage()
                .toCompletableFuture()
                .get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS)
                .toString();
    }

    static FailureClass classifyConnect(Throwable cause) {
        if (cause instanceof ConnectException
                || cause instanceof ConnectTimeoutException
                || cause instanceof UnknownHostException
                || cause instanceof NoRouteToHostException
                || (cause.getCause() instanceof ConnectException)) {
            return FailureClass.CONNECT;
        }
        return classifyStream(cause);
    }

    static FailureClass classifyStream(Throwable cause) {
        if (cause instanceof HttpClosedException
                || cause instanceof ClosedChannelException
                || (cause instanceof IOException
                        && cause.getMessage() != null
                        && (cause.getMessage().contains("reset")
                                || cause.getMessage().contains("closed")
                                || cause.getMessage().contains("Broken pipe")))
                || (cause.getMessage() != null
                        && cause.getMessage().contains("Connection was closed"))) {
            return FailureClass.RESET;
        }
        if (cause instanceof ConnectException) {
            return FailureClass.CONNECT;
        }
        return FailureClass.OTHER;
    }

    @Override
    public void close() {
        for (HttpClient client : clients) {
            if (client != null) {
                client.close();
            }
        }
        if (ownsVertx) {
            try {
                vertx.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                // Closing is best effort; the loops are daemon-free but the process is ending.
            }
        }
    }

    /** State of one exchange; only touched on its event loop. */
    public final class Exchange {
        private final ResponseSink sink;
        private HttpClientRequest request;
        private long timer = -1;
        private boolean finished;

        Exchange(ResponseSink sink) {
            this.sink = sink;
        }

        void start(HttpClientRequest req, Buffer body) {
            if (finished) {
                req.reset();
                return;
            }
            this.request = req;
            sink.onConnected(System.nanoTime());
            req.exceptionHandler(e -> fail(classifyStream(e), e));
            req.response()
                    .onComplete(
                            ar -> {
                                if (ar.failed()) {
                                    fail(classifyStream(ar.cause()), ar.cause());
                                    return;
                                }
                                onResponse(ar.result());
                            });
            req.end(body);
        }

        void onResponse(HttpClientResponse response) {
            if (finished) {
                return;
            }
            response.exceptionHandler(e -> fail(classifyStream(e), e));
            response.handler(
                    buffer -> {
                        if (finished) {
                            return;
                        }
                        if (!sink.onBytes(buffer)) {
                            abort();
                        }
                    });
            response.endHandler(
                    v -> {
                        if (finished) {
                            return;
                        }
                        finish();
                        sink.onEnd(System.nanoTime());
                    });
            sink.onStatus(response.statusCode(), response.getHeader(HttpHeaders.CONTENT_TYPE));
        }

        void timedOut() {
            timer = -1;
            if (finished) {
                return;
            }
            finish();
            if (request != null) {
                request.reset();
            }
            sink.onFailure(
                    FailureClass.TIMEOUT,
                    "no complete response within " + timeoutMillis + " ms",
                    System.nanoTime());
        }

        void fail(FailureClass failure, Throwable cause) {
            if (finished) {
                return;
            }
            long now = System.nanoTime();
            finish();
            if (request != null) {
                request.reset();
            }
            String message =
                    cause.getMessage() == null
                            ? cause.getClass().getSimpleName()
                            : cause.getMessage();
            sink.onFailure(failure, message, now);
        }

        /**
         * Aborts the exchange (its connection is reset, so no half-read stream is reused) and
         * reports {@link ResponseSink#onCancelled}; nothing if it already finished. Call on the
         * exchange's loop.
         */
        public void cancel() {
            if (finished) {
                return;
            }
            finish();
            if (request != null) {
                request.reset();
            }
            sink.onCancelled(System.nanoTime());
        }

        /** The sink rejected the body; drop the connection so no half-read stream is reused. */
        void abort() {
            finish();
            if (request != null) {
                request.reset();
            }
        }

        private void finish() {
            finished = true;
            if (timer >= 0) {
                vertx.cancelTimer(timer);
                timer = -1;
            }
        }
    }
}
