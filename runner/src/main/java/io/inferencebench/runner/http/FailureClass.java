package io.inferencebench.runner.http;

/** Why a request failed; the wire names are the error classes of the profile. */
public enum FailureClass {
    CONNECT("connect"),
    TIMEOUT("timeout"),

    /** The TLS handshake failed: certificate not trusted, wrong host name, no common protocol. */
    TLS("tls"),
    /** 429 Too Many Requests: the server (or a gateway before it) rate-limited the request. */
    HTTP_429("http_429"),
    HTTP_4XX("http_4xx"),
    HTTP_5XX("http_5xx"),
    RESET("reset"),
    MALFORMED_STREAM("malformed_stream"),
    ERROR_PAYLOAD("error_payload"),

    /**
     * A well-formed response that generated nothing: no content in the stream (at most a usage
     * event), or a complete body with empty text and no completion tokens.
     */
    EMPTY_RESPONSE("empty_response"),
    OTHER("other");

    private final String wireName;

    FailureClass(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    public static FailureClass forStatus(int status) {
        if (status == 429) {
            return HTTP_429;
        }
        if (status >= 400 && status < 500) {
            return HTTP_4XX;
        }
        if (status >= 500 && status < 600) {
            return HTTP_5XX;
        }
        return OTHER;
    }
}
