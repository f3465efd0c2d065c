package io.inferencebench.runner.dataset;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.runner.http.TlsOptions;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The target's own tokenizer through its {@code /tokenize} and {@code /detokenize} endpoints (vLLM
 * and SGLang serve them: {@code {"prompt": text}} gives {@code {"tokens": [...], "count": n}},
 * {@code {"tokens": [...]}} gives {@code {"prompt": text}}). Without a local tokenizer this is the
 * only way to know which token ids the model has: a small model's vocabulary can be far smaller
 * than the 30,000 ids a blind choice would draw from, and vLLM answers every such request with 400
 * "Token id N is out of vocabulary".
 *
 * <p>Used only while building the dataset, before any load: plain blocking JDK HTTP is enough.
 */
public final class ServerTokenizer {

    /** Backends whose servers are known to offer the endpoints. */
    public static final Set<String> BACKENDS = Set.of("vllm", "sglang");

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient client;
    private final String baseUrl;
    private final Map<String, String> headers;
    private final String model;
    private final Duration timeout;
    private long calls;

    private ServerTokenizer(
            HttpClient client,
            String baseUrl,
            Map<String, String> headers,
            String model,
            Duration timeout) {
        this.client = client;
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.headers = Map.copyOf(headers);
        this.model = model;
        this.timeout = timeout;
    }

    /** What {@link #probe} found: the tokenizer, or why there is none. */
    public record Probe(ServerTokenizer tokenizer, String reason) {}

    /**
     * Asks the server to tokenize a word, over plain HTTP or with the JVM's certificate checks.
     *
     * @see #probe(String, String, Map, String, Duration, TlsOptions)
     */
    public static Probe probe(
            String backend,
            String baseUrl,
            Map<String, String> headers,
            String model,
            Duration timeout) {
        return probe(backend, baseUrl, headers, model, timeout, TlsOptions.VERIFY);
    }

    /**
     * Asks the server to tokenize a word. A tokenizer comes back when it answers 200 with a list of
     * token ids; otherwise (no such endpoint, another shape, unreachable) the reason says why.
     *
     * @param model sent as {@code model} when not null (vLLM takes the request without one)
     * @param tls the certificate checks of the target, as for the load's connections
     */
    public static Probe probe(
            String backend,
            String baseUrl,
            Map<String, String> headers,
            String model,
            Duration timeout,
            TlsOptions tls) {
        if (!BACKENDS.contains(backend.toLowerCase(Locale.ROOT))) {
            return new Probe(null, "backend " + backend + " has no /tokenize endpoint");
        }
        HttpClient.Builder builder =
                HttpClient.newBuilder()
                        .connectTimeout(timeout)
                        .version(HttpClient.Version.HTTP_1_1);
        if (baseUrl.regionMatches(true, 0, "https:", 0, 6)) {
            builder.sslContext(tls.jdkContext());
        }
        HttpClient client = builder.build();
        ServerTokenizer tokenizer = new ServerTokenizer(client, baseUrl, headers, model, timeout);
        try {
            tokenizer.tokenize("the");
            return new Probe(tokenizer, null);
        } catch (IOException e) {
            return new Probe(null, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Probe(null, "interrupted");
        }
    }

    /** The ids of {@code text} as the server's tokenizer encodes it (no special tokens added). */
    public int[] tokenize(String text) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode();
        if (model != null) {
            body.put("model", model);
        }
        body.put("prompt", text);
        body.put("add_special_tokens", false);
        JsonNode tokens = post("/tokenize", body).path("tokens");
        if (!tokens.isArray()) {
            throw new IOException(baseUrl + "/tokenize: the answer has no 'tokens' array");
        }
        int[] ids = new int[tokens.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = tokens.get(i).asInt();
        }
        return ids;
    }

    /** The text of {@code ids} as the server's tokenizer decodes it. */
    public String detokenize(int[] ids) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode();
        if (model != null) {
            body.put("model", model);
        }
        var array = body.putArray("tokens");
        for (int id : ids) {
            array.add(id);
        }
        JsonNode answer = post("/detokenize", body);
        JsonNode text = answer.has("prompt") ? answer.get("prompt") : answer.path("text");
        if (!text.isTextual()) {
            throw new IOException(baseUrl + "/detokenize: the answer has no 'prompt' text");
        }
        return text.asText();
    }

    /** Requests sent so far (to report the cost of building a dataset). */
    public long calls() {
        return calls;
    }

    /** Where the tokenizer lives, for profiles' tokenizer_id. */
    public String id() {
        return baseUrl + "/tokenize";
    }

    private JsonNode post(String path, JsonNode body) throws IOException, InterruptedException {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(baseUrl + path))
                        .timeout(timeout)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        headers.forEach(request::header);
        calls++;
        HttpResponse<String> response;
        try {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            if (TlsOptions.tlsFailure(e) != null) {
                throw new IOException(
                        baseUrl + path + ": tls: " + TlsOptions.describeFailure(e), e);
            }
            throw new IOException(
                    baseUrl + path + ": " + e.getClass().getSimpleName() + " " + e.getMessage(), e);
        }
        if (response.statusCode() != 200) {
            String text = response.body() == null ? "" : response.body().strip();
            throw new IOException(
                    baseUrl
                            + path
                            + ": HTTP "
                            + response.statusCode()
                            + (text.isEmpty()
                                    ? ""
                                    : " " + text.substring(0, Math.min(200, text.length()))));
        }
        try {
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new IOException(baseUrl + path + ": not JSON", e);
        }
    }
}
