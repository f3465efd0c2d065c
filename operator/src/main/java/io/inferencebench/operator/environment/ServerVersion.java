package io.inferencebench.operator.environment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/**
 * The model server's version from {@code GET /version} (vLLM answers {@code {"version": "0.9.1"}}).
 * Servers without it, or not answering in time, have no version: nothing is guessed.
 */
public final class ServerVersion {

    private static final ObjectMapper JSON = new ObjectMapper();
    // Asked once per run, when the runners launch: a busy node answered a loopback request in
    // over 2 s, and a version missing for that reason is a run without its fingerprint.
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final int MAX_LENGTH = 100;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

    /**
     * Asks one server.
     *
     * @param baseUrl e.g. http://10.1.2.3:8000
     * @return the version, if it answered one
     */
    public Optional<String> ask(String baseUrl) {
        try {
            HttpResponse<String> response =
                    http.send(
                            HttpRequest.newBuilder(URI.create(baseUrl + "/version"))
                                    .timeout(TIMEOUT)
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                return Optional.empty();
            }
            JsonNode version = JSON.readTree(response.body()).get("version");
            if (version == null || !version.isTextual() || version.asText().isBlank()) {
                return Optional.empty();
            }
            String text = version.asText().strip();
            return Optional.of(text.length() > MAX_LENGTH ? text.substring(0, MAX_LENGTH) : text);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (Exception e) {
            return Optional.empty();
        }
    }
}
