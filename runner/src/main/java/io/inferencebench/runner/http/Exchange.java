package io.inferencebench.runner.http;

import io.inferencebench.runner.http.HttpTransport.PreparedRequest;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * State of one exchange (a request and its response) of an {@link HttpTransport}; only touched on
 * its event loop.
 */
public final class Exchange {
    private ConnectionPool pool;
    private final PreparedRequest request;
    final ResponseSink sink;
    private final long timeoutMillis;

    /** A timer of its own (a GET); load exchanges are tracked by their pool instead. */
    ScheduledFuture<?> timer;

    private HttpConnection connection;
    boolean finished;

    /** Links and deadline in its pool's list of tracked exchanges. */
    boolean tracked;

    Exchange older;
    Exchange newer;
    long deadlineNanos;

    /** Times it was moved to another address after a refused connection. */
    int redirects;

    /** When it joined the pool's queue; 0 when it never waited there. */
    long queuedNanos;

    private long poolWaitNanos;

    Exchange(ConnectionPool pool, PreparedRequest request, ResponseSink sink, long timeoutMillis) {
        this.pool = pool;
        this.request = request;
        this.sink = sink;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * Moves a load exchange that has not been sent to {@code to} (another address's pool on the
     * same loop); its deadline starts again there.
     */
    void moveTo(ConnectionPool to) {
        pool.untrack(this);
        pool = to;
        to.track(this);
    }

    void dequeued() {
        if (queuedNanos != 0) {
            poolWaitNanos = System.nanoTime() - queuedNanos;
        }
    }

    void start(HttpConnection c) {
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
                                fail(
                                        TransportFailures.classifyStream(written.cause()),
                                        written.cause());
                            }
                        });
    }

    /** The response ended: the connection goes back to the pool before the sink hears. */
    void complete() {
        HttpConnection c = detach();
        if (c.keepAlive) {
            pool.exchangeEnded(c);
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
                FailureClass.TIMEOUT, "no complete response within " + timeoutMillis + " ms", now);
    }

    void fail(FailureClass failure, Throwable cause) {
        if (finished) {
            return;
        }
        long now = System.nanoTime();
        closeConnection();
        String message =
                failure == FailureClass.TLS
                        ? TransportFailures.tlsReason(cause)
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
     * Aborts the exchange (its connection is closed, so no half-read stream is reused) and reports
     * {@link ResponseSink#onCancelled}; nothing if it already finished. Call on the exchange's
     * loop.
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
        HttpConnection c = detach();
        if (c != null) {
            c.channel.close();
        } else {
            pool.waiting.remove(this);
        }
    }

    /** Marks the exchange finished, stops its timer and unhooks it from its connection. */
    private HttpConnection detach() {
        finished = true;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        pool.untrack(this);
        HttpConnection c = connection;
        if (c != null && c.current == this) {
            c.current = null;
        }
        connection = null;
        return c;
    }
}
