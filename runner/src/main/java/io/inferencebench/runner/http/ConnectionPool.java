package io.inferencebench.runner.http;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Connections of one event loop of an {@link HttpTransport}: idle ones, how many are open,
 * exchanges waiting for one, and the deadlines of the exchanges in flight. Only touched on its
 * loop.
 */
final class ConnectionPool {

    /**
     * What every pool of one transport shares.
     *
     * @param epoll whether the loops are epoll loops (else NIO)
     * @param timeoutMillis the request timeout, which also bounds the connect timeout
     * @param maxConnections connections per pool (per loop) at most
     * @param requestsPerConnection requests a connection carries before it is closed (0: no bound);
     *     with a bound, idle connections are also reused oldest first ({@link Spread})
     * @param jvmErrors hears of a JVM error on a loop (the transport's listener)
     * @param connectFailed hears that a connection to this pool's endpoint could not be opened
     * @param redirect offered a load exchange whose connection was refused (nothing was sent): true
     *     when it took the exchange elsewhere, so it does not fail here
     */
    record Settings(
            Endpoint endpoint,
            boolean epoll,
            long timeoutMillis,
            int maxConnections,
            int requestsPerConnection,
            Consumer<VirtualMachineError> jvmErrors,
            Runnable connectFailed,
            Predicate<Exchange> redirect) {}

    final EventLoop loop;
    final Bootstrap bootstrap;
    final ArrayDeque<HttpConnection> idle = new ArrayDeque<>();
    final ArrayDeque<Exchange> waiting = new ArrayDeque<>();
    final Set<Channel> channels = new HashSet<>();
    int open;
    int idleCount;

    /**
     * Its address left the transport's list: no new exchanges come, and each connection closes once
     * its waiting exchanges are served.
     */
    boolean retired;

    /**
     * Load exchanges in flight, oldest first. They share one timeout, so this is also their
     * deadline order, and one timer for the oldest serves them all (a scheduled task per request
     * cost an allocation and two priority-queue operations).
     */
    Exchange oldest;

    Exchange newest;
    ScheduledFuture<?> expiry;

    private final Endpoint endpoint;
    private final Settings settings;

    ConnectionPool(EventLoop loop, Settings settings) {
        this.loop = loop;
        this.settings = settings;
        this.endpoint = settings.endpoint();
        this.bootstrap =
                new Bootstrap()
                        .group(loop)
                        .channel(
                                settings.epoll()
                                        ? EpollSocketChannel.class
                                        : NioSocketChannel.class)
                        .option(ChannelOption.TCP_NODELAY, true)
                        .option(ChannelOption.SO_KEEPALIVE, true)
                        // Socket reads still land in direct buffers (Netty's ioBuffer);
                        // what the HTTP decoder accumulates across reads is on the heap,
                        // where the SSE parser scans the array in place.
                        .option(ChannelOption.ALLOCATOR, new PooledByteBufAllocator(false))
                        .option(
                                ChannelOption.CONNECT_TIMEOUT_MILLIS,
                                (int) Math.min(settings.timeoutMillis(), 30_000))
                        .handler(
                                new ChannelInitializer<SocketChannel>() {
                                    @Override
                                    protected void initChannel(SocketChannel ch) {
                                        if (endpoint.ssl() != null) {
                                            ch.pipeline().addLast(endpoint.tlsHandler(ch));
                                        }
                                        ch.pipeline()
                                                .addLast(new HttpConnection(ConnectionPool.this));
                                    }
                                });
    }

    void track(Exchange exchange) {
        long now = System.nanoTime();
        exchange.deadlineNanos = now + TimeUnit.MILLISECONDS.toNanos(settings.timeoutMillis());
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
                    loop.schedule(this::expire, exchange.deadlineNanos - now, TimeUnit.NANOSECONDS);
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
            settings.jvmErrors().accept(error);
        }
        if (oldest != null && expiry == null) {
            expiry = loop.schedule(this::expire, oldest.deadlineNanos - now, TimeUnit.NANOSECONDS);
        }
    }

    void acquire(Exchange exchange) {
        HttpConnection c;
        // Most recently freed first keeps few connections warm; oldest first (when connections
        // are rotated) spreads the requests over all of them, so a per-connection balancer sees
        // each.
        boolean rotate = settings.requestsPerConnection() > 0;
        while ((c = rotate ? idle.pollFirst() : idle.pollLast()) != null) {
            idleCount--;
            if (c.channel.isActive()) {
                exchange.start(c);
                return;
            }
        }
        if (open < settings.maxConnections()) {
            connect(exchange, null);
        } else {
            exchange.queuedNanos = System.nanoTime();
            waiting.addLast(exchange);
        }
    }

    /** Opens a connection for {@code exchange}, or into the idle pool when it is null. */
    void connect(Exchange exchange, Runnable onOpened) {
        open++;
        ChannelFuture f = bootstrap.connect(endpoint.host(), endpoint.port());
        f.addListener(
                done -> {
                    if (!done.isSuccess()) {
                        open--;
                        settings.connectFailed().run();
                        if (done.cause() instanceof VirtualMachineError error) {
                            if (exchange != null) {
                                exchange.jvmError(error);
                            }
                            settings.jvmErrors().accept(error);
                        } else if (exchange != null
                                && !(done.cause() instanceof ConnectTimeoutException)
                                && settings.redirect().test(exchange)) {
                            // refused at once: another address took it (a timed-out connect has
                            // spent the request's time already and fails)
                        } else if (exchange != null) {
                            Throwable cause = done.cause();
                            FailureClass failureClass = TransportFailures.classifyConnect(cause);
                            if (TransportFailures.outOfFileDescriptors(cause)) {
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
                    HttpConnection c = f.channel().pipeline().get(HttpConnection.class);
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

    /**
     * A connection whose exchange ended cleanly goes back to the pool (or a waiter), unless it
     * carried its bound of requests.
     */
    void exchangeEnded(HttpConnection c) {
        c.served++;
        int bound = settings.requestsPerConnection();
        if (bound > 0 && c.served >= bound) {
            // Rotated: closed() lets a waiting exchange open the next connection.
            c.channel.close();
            return;
        }
        release(c);
    }

    /** A connection free for the next exchange: to a waiting one, else to the idle ones. */
    void release(HttpConnection c) {
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
        if (retired) {
            c.channel.close();
            return;
        }
        idle.addLast(c);
        idleCount++;
    }

    /** Its address left: idle connections close now, busy ones when their exchanges end. */
    void retire() {
        retired = true;
        closeIdle();
    }

    /** A connection closed: count it and let a waiting exchange open a new one. */
    void closed(Channel channel) {
        channels.remove(channel);
        open--;
        serveWaiting();
    }

    void reportJvmError(VirtualMachineError error) {
        settings.jvmErrors().accept(error);
    }

    /** Closes every idle connection of this pool (on its loop); busy ones stay. */
    void closeIdle() {
        HttpConnection c;
        while ((c = idle.pollFirst()) != null) {
            idleCount--;
            c.channel.close();
        }
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
        while (open < settings.maxConnections() && (next = waiting.pollFirst()) != null) {
            if (!next.finished) {
                next.dequeued();
                connect(next, null);
            }
        }
    }
}
