package io.inferencebench.runner.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.http.HttpTransport;
import java.time.Duration;

/**
 * The model name when none is given: the first entry of {@code /v1/models}, else TGI's {@code
 * /info}. One implementation for the command line and the runner pods, so both report the same
 * model (in the profile, the status and the MODEL column).
 */
public final class ModelDiscovery {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The server could not be reached (connect, timeout or TLS failure). */
    public static final class Unreachable extends RuntimeException {
        Unreachable(String message) {
            super(message);
        }
    }

    /** The server answered but names no model. */
    public static final class NoModel extends RuntimeException {
        NoModel(String message) {
            super(message);
        }
    }

    private ModelDiscovery() {}

    /**
     * Asks the server which model it serves.
     *
     * @throws Unreachable when the server cannot be reached
     * @throws NoModel when it names no model at /v1/models or /info
     */
    public static String discover(HttpTransport transport, String baseUrl) {
        String failure;
        try {
            JsonNode data =
                    JSON.readTree(transport.get("/v1/models", Duration.ofSeconds(10))).path("data");
            if (data.isArray() && !data.isEmpty() && data.get(0).path("id").isTextual()) {
                return data.get(0).get("id").asText();
            }
            failure = baseUrl + "/v1/models lists no model";
        } catch (Exception e) {
            String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            if (reason.startsWith("connect:")
                    || reason.startsWith("timeout:")
                    || reason.startsWith("tls:")) {
                throw new Unreachable(
                        "cannot reach "
                                + baseUrl
                                + " (GET /v1/models for the model name): "
                                + reason);
            }
            failure = "discovery from " + baseUrl + "/v1/models failed: " + reason;
        }
        try {
            // TGI's native API has no /v1/models; its /info names the model.
            JsonNode info = JSON.readTree(transport.get("/info", Duration.ofSeconds(10)));
            if (info.path("model_id").isTextual()) {
                return info.get("model_id").asText();
            }
        } catch (Exception ignored) {
            // report the /v1/models failure, the usual case
        }
        throw new NoModel(failure);
    }
}
