package io.inferencebench.profile.server.prometheus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The HTTP side of a {@link PrometheusApiSource}: one API call sent and its JSON envelope checked
 * ({@code status}, {@code warnings}, {@code data}). Every answer is read with a {@link
 * ScrapeBodyReader}, so a body over the bound is refused ({@link
 * PrometheusQueryException.Kind#TOO_LARGE}) and the timeout runs from the request to the body's
 * last byte; {@link #cancel()} aborts what is in flight. Messages name the URL without user info or
 * query and never carry the bearer token.
 */
final class PrometheusHttp implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final PrometheusSourceConfig config;
    private final String base;
    private final Duration timeout;
    private final HttpClient http;
    private final ScrapeBodyReader bodyReader;
    private final Set<Runnable> inFlight = ConcurrentHashMap.newKeySet();
    private volatile boolean cancelled;

    /**
     * @param config where to ask, with which token and timeout (validated)
     * @param maxBodyBytes most bytes (after gzip decompression) accepted in one answer
     */
    PrometheusHttp(PrometheusSourceConfig config, long maxBodyBytes) {
        this.config = config;
        String u = config.url().toString();
        while (u.endsWith("/")) {
            u = u.substring(0, u.length() - 1);
        }
        this.base = u;
        this.timeout =
                config.timeout() == null
                        ? PrometheusSourceConfig.DEFAULT_TIMEOUT
                        : config.timeout();
        this.bodyReader = new ScrapeBodyReader(maxBodyBytes, timeout);
        this.http =
                HttpClient.newBuilder()
                        .connectTimeout(timeout)
                        .followRedirects(HttpClient.Redirect.NEVER)
                        .build();
    }

    /** The bound on one answer's bytes. */
    long maxBodyBytes() {
        return bodyReader.maxBytes();
    }

    /** Aborts the request in flight and refuses every later one. Callable from any thread. */
    void cancel() {
        cancelled = true;
        for (Runnable abort : inFlight) {
            abort.run();
        }
    }

    JsonNode call(
            String path, Map<String, List<String>> params, boolean post, List<String> warnings)
            throws PrometheusQueryException {
        String form = formEncode(params);
        String what = path.substring(path.lastIndexOf('/') + 1);
        HttpRequest.Builder request;
        try {
            request =
                    post
                            ? HttpRequest.newBuilder(new URI(base + path))
                                    .header("Content-Type", "application/x-www-form-urlencoded")
                                    .POST(HttpRequest.BodyPublishers.ofString(form))
                            : HttpRequest.newBuilder(
                                            new URI(
                                                    base
                                                            + path
                                                            + (form.isEmpty() ? "" : "?" + form)))
                                    .GET();
        } catch (URISyntaxException | IllegalArgumentException e) {
            throw new PrometheusQueryException(
                    "cannot build the " + what + " request URL from " + redact(config.url()));
        }
        request.timeout(timeout)
                .header("Accept", "application/json")
                .header("User-Agent", "inferencebench-profile");
        if (config.bearerToken() != null) {
            request.header("Authorization", "Bearer " + config.bearerToken());
        }
        long startNanos = System.nanoTime();
        HttpResponse<InputStream> response = awaitHeaders(request.build(), path);
        byte[] bytes = readBody(response, path, startNanos);
        int code = response.statusCode();
        JsonNode body;
        try {
            body = JSON.readTree(bytes);
        } catch (IOException e) {
            body = null;
        }
        if (body == null || !body.isObject() || !body.has("status")) {
            throw new PrometheusQueryException(
                    answered(path, code)
                            + hint(code)
                            + " and a body that is not Prometheus API JSON"
                            + excerpt(bytes));
        }
        for (JsonNode w : body.path("warnings")) {
            PrometheusApiSource.warn(warnings, sanitize(w.asText()));
        }
        if (!"success".equals(body.path("status").asText())) {
            throw new PrometheusQueryException(
                    "Prometheus at "
                            + redact(config.url())
                            + " rejected "
                            + path
                            + " (HTTP "
                            + code
                            + hint(code)
                            + ", "
                            + body.path("errorType").asText("unknown error type")
                            + "): "
                            + sanitize(body.path("error").asText("no error message")));
        }
        if (code / 100 != 2) {
            throw new PrometheusQueryException(answered(path, code) + hint(code));
        }
        return body.path("data");
    }

    /**
     * A timeout or a cancel ends the window's queries: a server that did not answer one request in
     * time is not asked the next ones, so a stalled Prometheus costs one timeout, not one per
     * request.
     */
    static boolean endsWindow(PrometheusQueryException e) {
        return e.kind() == PrometheusQueryException.Kind.TIMED_OUT
                || e.kind() == PrometheusQueryException.Kind.INTERRUPTED;
    }

    /** Sends the request and waits for the status and headers, at most the timeout. */
    private HttpResponse<InputStream> awaitHeaders(HttpRequest request, String path)
            throws PrometheusQueryException {
        if (cancelled) {
            throw interrupted();
        }
        CompletableFuture<HttpResponse<InputStream>> pending =
                http.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream());
        Runnable abort = () -> pending.cancel(true);
        inFlight.add(abort);
        try {
            if (cancelled) {
                abort.run();
            }
            return pending.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            abort.run();
            throw timedOut(path);
        } catch (CancellationException e) {
            throw interrupted();
        } catch (InterruptedException e) {
            abort.run();
            Thread.currentThread().interrupt();
            throw interrupted();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cancelled) {
                throw interrupted();
            }
            if (cause instanceof HttpTimeoutException) {
                throw timedOut(path);
            }
            if (cause instanceof ConnectException) {
                throw new PrometheusQueryException(
                        "cannot connect to Prometheus at "
                                + redact(config.url())
                                + ": "
                                + sanitize(describe(cause)));
            }
            throw failed("request " + path + " to", cause);
        } finally {
            inFlight.remove(abort);
        }
    }

    /** Reads the whole body within the bound and the deadline that began at {@code startNanos}. */
    private byte[] readBody(HttpResponse<InputStream> response, String path, long startNanos)
            throws PrometheusQueryException {
        InputStream body = response.body();
        Runnable abort = () -> closeQuietly(body);
        inFlight.add(abort);
        try {
            if (cancelled) {
                abort.run();
            }
            return bodyReader.read(
                    body,
                    response.headers().firstValue("Content-Encoding").orElse(null),
                    startNanos);
        } catch (ScrapeBodyReader.BodyRefused e) {
            if (cancelled) {
                throw interrupted();
            }
            if (e.timedOut()) {
                throw timedOut(path);
            }
            throw new PrometheusQueryException(
                    answered(path, response.statusCode())
                            + " and a body that was refused: "
                            + e.getMessage(),
                    e.tooLarge()
                            ? PrometheusQueryException.Kind.TOO_LARGE
                            : PrometheusQueryException.Kind.FAILED);
        } catch (IOException e) {
            if (cancelled) {
                throw interrupted();
            }
            throw failed("reading the answer to " + path + " from", e);
        } finally {
            inFlight.remove(abort);
        }
    }

    /** "Prometheus at URL answered PATH with HTTP CODE": the start of a bad answer's message. */
    private String answered(String path, int code) {
        return "Prometheus at " + redact(config.url()) + " answered " + path + " with HTTP " + code;
    }

    /** "WHAT Prometheus at URL failed: CAUSE", e.g. WHAT = "request /api/v1/query to". */
    private PrometheusQueryException failed(String what, Throwable cause) {
        return new PrometheusQueryException(
                what
                        + " Prometheus at "
                        + redact(config.url())
                        + " failed: "
                        + sanitize(describe(cause)));
    }

    private PrometheusQueryException timedOut(String path) {
        return new PrometheusQueryException(
                "Prometheus at "
                        + redact(config.url())
                        + " did not answer "
                        + path
                        + " within "
                        + timeout.toMillis()
                        + " ms",
                PrometheusQueryException.Kind.TIMED_OUT);
    }

    private PrometheusQueryException interrupted() {
        return new PrometheusQueryException(
                "interrupted while querying Prometheus at " + redact(config.url()),
                PrometheusQueryException.Kind.INTERRUPTED);
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException | RuntimeException ignored) {
            // the reader sees the closed stream
        }
    }

    private static String hint(int code) {
        return switch (code) {
            case 301, 302, 303, 307, 308 -> " redirect (not followed): use the final URL";
            case 401 -> " unauthorized: check the bearer token";
            case 403 -> " forbidden: the bearer token lacks access";
            case 404 -> " not found: check the URL and its path prefix";
            case 422 -> " unprocessable: the query could not be executed";
            case 503 -> " unavailable: the query timed out or was aborted";
            default -> "";
        };
    }

    private String excerpt(byte[] body) {
        if (body == null || body.length == 0) {
            return " (empty)";
        }
        String s = new String(body, 0, Math.min(body.length, 200), StandardCharsets.UTF_8);
        s = s.replaceAll("[\\p{Cntrl}]", " ").strip();
        return " (starts: '" + sanitize(s) + "')";
    }

    private static String describe(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getMessage() == null) {
            cause = cause.getCause();
        }
        String m = cause.getMessage();
        return cause.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    /** Removes the bearer token from text that might echo it. */
    String sanitize(String text) {
        String t = config.bearerToken();
        if (text == null || t == null || t.isEmpty()) {
            return text;
        }
        return text.replace(t, "<redacted>");
    }

    /** A URL fit for messages: scheme, host, port and path only. */
    static String redact(URI url) {
        if (url == null) {
            return "null";
        }
        try {
            return new URI(
                            url.getScheme(),
                            null,
                            url.getHost(),
                            url.getPort(),
                            url.getPath(),
                            null,
                            null)
                    .toString();
        } catch (URISyntaxException e) {
            return "<unprintable URL>";
        }
    }

    private static String formEncode(Map<String, List<String>> params) {
        StringBuilder b = new StringBuilder();
        params.forEach(
                (k, values) -> {
                    for (String v : values) {
                        if (b.length() > 0) {
                            b.append('&');
                        }
                        b.append(URLEncoder.encode(k, StandardCharsets.UTF_8))
                                .append('=')
                                .append(URLEncoder.encode(v, StandardCharsets.UTF_8));
                    }
                });
        return b.toString();
    }

    /** Releases the HTTP client at once, aborting anything still in flight. */
    @Override
    public void close() {
        // close() would wait for every exchange to end, and a hostile server's never does.
        http.shutdownNow();
    }
}
