package io.inferencebench.runner.plan;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.http.Redirects;
import java.time.Duration;

/**
 * The model name when none is given: the first entry of {@code /v1/models}, else TGI's {@code
 * /info}. One implementation for the command line and the runner pods, so both report the same
 * model (in the profile, the status and the MODEL column).
 *
 * <p>Messages say what the server answered without quoting its body (it may be anything, e.g. an
 * HTML login page); the callers add what to give instead ({@code --model}, {@code target.model}).
 */
public final class ModelDiscovery {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

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

    /** The server redirects elsewhere: the base URL is not where the API is served. */
    public static final class Redirected extends RuntimeException {
        Redirected(String message) {
            super(message);
        }
    }

    private ModelDiscovery() {}

    /**
     * Asks the server which model it serves.
     *
     * @throws Unreachable when the server cannot be reached
     * @throws Redirected when {@code /v1/models} answers with a redirect
     * @throws NoModel when it names no model at /v1/models or /info
     */
    public static String discover(HttpTransport transport, String baseUrl) {
        String url = baseUrl + "/v1/models";
        String failure;
        try {
            HttpTransport.Response r = transport.fetch("/v1/models", TIMEOUT);
            if (r.status() >= 300 && r.status() < 400) {
                throw new Redirected(
                        "GET "
                                + url
                                + " answered HTTP "
                                + r.status()
                                + ": "
                                + Redirects.advice(r.location(), "the base URL"));
            }
            failure = modelsProblem(url, r);
            if (failure == null) {
                return JSON.readTree(r.body()).path("data").get(0).get("id").asText();
            }
        } catch (Redirected e) {
            throw e;
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
            failure = "GET " + url + " failed: " + reason;
        }
        try {
            // TGI's native API has no /v1/models; its /info names the model.
            HttpTransport.Response info = transport.fetch("/info", TIMEOUT);
            if (info.status() == 200) {
                JsonNode node = JSON.readTree(info.body());
                if (node.path("model_id").isTextual() && !node.get("model_id").asText().isBlank()) {
                    return node.get("model_id").asText();
                }
            }
        } catch (Exception ignored) {
            // report the /v1/models failure, the usual case
        }
        throw new NoModel(failure + " (and /info names no model either)");
    }

    /** What is wrong with an answer to GET /v1/models, or {@code null} when it names a model. */
    private static String modelsProblem(String url, HttpTransport.Response r) {
        if (r.status() != 200) {
            return "GET " + url + " answered HTTP " + r.status();
        }
        JsonNode doc;
        try {
            doc = JSON.readTree(r.body());
        } catch (JsonProcessingException e) {
            doc = null;
        }
        if (doc == null || doc.isMissingNode()) {
            return "GET "
                    + url
                    + " answered with something that is not JSON ("
                    + (r.contentType() == null ? "no Content-Type" : r.contentType())
                    + ", "
                    + r.body().length()
                    + " characters): not the expected {\"data\": [{\"id\": MODEL}, ...]}";
        }
        JsonNode data = doc.path("data");
        if (!data.isArray()) {
            return "GET "
                    + url
                    + " answered JSON that is not the expected {\"data\": [{\"id\": MODEL},"
                    + " ...]} (no \"data\" array)";
        }
        if (data.isEmpty()) {
            return "GET " + url + " lists no model (its \"data\" array is empty)";
        }
        JsonNode id = data.get(0).path("id");
        if (!id.isTextual() || id.asText().isBlank()) {
            return "GET "
                    + url
                    + " answered JSON that is not the expected {\"data\": [{\"id\": MODEL},"
                    + " ...]} (the first entry has no \"id\" text)";
        }
        return null;
    }
}
