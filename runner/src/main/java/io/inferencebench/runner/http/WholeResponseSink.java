package io.inferencebench.runner.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * Collects a whole response to a GET ({@link HttpTransport#fetch}) into {@link #result}: at most
 * {@link #MAX_BYTES} of body, redirects reported and not followed.
 */
final class WholeResponseSink implements ResponseSink {

    /** Largest body {@link HttpTransport#fetch} reads. */
    static final int MAX_BYTES = 4 << 20;

    final CompletableFuture<HttpTransport.Response> result = new CompletableFuture<>();

    private final String path;
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private int status;
    private String contentType;
    private String location;

    /**
     * @param path what was fetched, for the message when the body is too large
     */
    WholeResponseSink(String path) {
        this.path = path;
    }

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
        if (body.size() + length > MAX_BYTES) {
            result.completeExceptionally(
                    new IOException(
                            "the answer to GET "
                                    + path
                                    + " is larger than "
                                    + MAX_BYTES / (1 << 20)
                                    + " MiB"));
            return false;
        }
        body.write(data, offset, length);
        return true;
    }

    @Override
    public void onEnd(long nanos) {
        result.complete(
                new HttpTransport.Response(
                        status, contentType, location, body.toString(StandardCharsets.UTF_8)));
    }

    @Override
    public void onFailure(FailureClass failure, String message, long nanos) {
        result.completeExceptionally(new IOException(failure.wireName() + ": " + message));
    }

    @Override
    public void onCancelled(long nanos) {
        result.completeExceptionally(new IOException("cancelled"));
    }

    @Override
    public void onJvmError(VirtualMachineError error, long nanos) {
        result.completeExceptionally(error);
    }
}
