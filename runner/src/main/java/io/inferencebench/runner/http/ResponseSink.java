package io.inferencebench.runner.http;

/**
 * Receives one HTTP exchange as it happens, always on the event loop that owns the exchange.
 * Exactly one of {@link #onEnd}, {@link #onFailure}, {@link #onCancelled} or {@link #onJvmError} is
 * called, exactly once.
 */
public interface ResponseSink {

    /** The request is about to be written (after a pooled or new connection was obtained). */
    default void onConnected(long nanos) {}

    /**
     * The exchange waited {@code waitedNanos} in its loop's queue because every connection the pool
     * may open was busy ({@code --max-connections}); called right before {@link #onConnected}, only
     * when it waited.
     */
    default void onPoolWait(long waitedNanos) {}

    void onStatus(int status, String contentType);

    /**
     * The response is a redirect (3xx) to {@code location} (as the server wrote it: untrusted
     * text); called right before {@link #onStatus}. Redirects are never followed: the user is told
     * where the server points.
     */
    default void onRedirect(String location) {}

    /**
     * Body bytes of one network read, transfer coding removed ({@code data} is valid only during
     * the call). Returns false to abort the exchange (the sink has decided it failed; it then calls
     * nothing else and the transport closes the connection).
     */
    boolean onBytes(byte[] data, int offset, int length);

    void onEnd(long nanos);

    void onFailure(FailureClass failure, String message, long nanos);

    /**
     * The exchange was aborted by {@link Exchange#cancel()}: not a failure of the server. Called
     * instead of {@link #onEnd} or {@link #onFailure}.
     */
    void onCancelled(long nanos);

    /**
     * The JVM failed while this exchange was handled (out of memory, a stack overflow): not a
     * failure of the server, and the exchange has no outcome of its own; its connection is closed
     * and the transport's JVM-error listener is told (see {@link HttpTransport#onJvmError}). Called
     * instead of the others. By default the exchange counts as cancelled.
     */
    default void onJvmError(VirtualMachineError error, long nanos) {
        onCancelled(nanos);
    }
}
