package io.inferencebench.runner.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.FastThreadLocal;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;

/**
 * One keep-alive connection of a {@link ConnectionPool}; carries at most one exchange at a time and
 * hands it the response as the {@link ResponseFramer} frames it.
 */
final class HttpConnection extends ChannelInboundHandlerAdapter implements ResponseFramer.Receiver {

    /**
     * Socket reads land in direct buffers; each is copied once into this array, where the response
     * framer and the SSE parser both scan it.
     */
    private static final FastThreadLocal<byte[]> READ_SCRATCH =
            new FastThreadLocal<>() {
                @Override
                protected byte[] initialValue() {
                    return new byte[64 * 1024];
                }
            };

    final ConnectionPool pool;
    final ResponseFramer framer = new ResponseFramer();
    Channel channel;
    Exchange current;
    boolean keepAlive;

    /** Exchanges this connection carried to a clean end. */
    int served;

    HttpConnection(ConnectionPool pool) {
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
            exchange.fail(TransportFailures.classifyStream(cause), cause);
        } else {
            ctx.close();
        }
    }
}
