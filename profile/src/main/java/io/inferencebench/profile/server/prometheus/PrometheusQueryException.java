package io.inferencebench.profile.server.prometheus;

/**
 * A Prometheus HTTP API request failed. The message always says what was asked, of which server
 * (credentials removed) and why; it never contains the bearer token.
 */
public final class PrometheusQueryException extends Exception {

    private static final long serialVersionUID = 1L;

    /** Why a request failed, where the caller acts on it. */
    public enum Kind {
        /** Refused, unreachable, an error answer or one that is not the API's JSON. */
        FAILED,
        /** No complete answer before the deadline (headers or body). */
        TIMED_OUT,
        /** The answer's body was larger than the bound. */
        TOO_LARGE,
        /** {@link PrometheusApiSource#cancel()} stopped it. */
        INTERRUPTED
    }

    private final Kind kind;

    /**
     * Creates the exception for a request that failed.
     *
     * @param message what failed and why (already free of secrets)
     */
    public PrometheusQueryException(String message) {
        this(message, Kind.FAILED);
    }

    /**
     * Creates the exception.
     *
     * @param message what failed and why (already free of secrets)
     * @param kind why it failed
     */
    public PrometheusQueryException(String message, Kind kind) {
        super(message);
        this.kind = kind;
    }

    /**
     * Why the request failed.
     *
     * @return the kind
     */
    public Kind kind() {
        return kind;
    }
}
