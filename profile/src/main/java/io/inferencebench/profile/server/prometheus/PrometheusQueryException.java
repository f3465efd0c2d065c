package io.inferencebench.profile.server.prometheus;

/**
 * A Prometheus HTTP API request failed. The message always says what was asked, of which server
 * (credentials removed) and why; it never contains the bearer token.
 */
public final class PrometheusQueryException extends Exception {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed and why (already free of secrets)
     */
    public PrometheusQueryException(String message) {
        super(message);
    }
}
