package io.inferencebench.runner.pod;

/** An unrecoverable problem of the runner pod; its message goes into the part's {@code error}. */
public final class PodFailure extends RuntimeException {

    public PodFailure(String message) {
        super(message);
    }

    public PodFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
