package io.inferencebench.runner.http;

import io.netty.channel.ConnectTimeoutException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.channels.ClosedChannelException;

/** Which {@link FailureClass} a throwable from a socket means, and what to tell the user. */
final class TransportFailures {

    private TransportFailures() {}

    /** The process ran out of file descriptors (EMFILE): no new socket can be opened. */
    static boolean outOfFileDescriptors(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("Too many open files")) {
                return true;
            }
        }
        return false;
    }

    /** A connection that could not be opened. */
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

    /** A failure on an open connection (writing the request or reading the response). */
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
}
