package io.inferencebench.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;

/**
 * A transparent HTTP/1.1 forwarder in front of a model server that keeps a ledger of what the
 * server answered: per exchange the method, path, HTTP status, and the {@code usage} the server put
 * in its answer (the last {@code usage} object of an SSE stream, or the body's), and whether a
 * stream ended with {@code data: [DONE]}. A server without {@code /metrics} (Hugging Face {@code
 * transformers serve}) has no counters to compare a benchmark with; its own answers are the record,
 * and this reads them independently of the client under test.
 *
 * <p>Bytes are forwarded as they arrive (each read is flushed as one chunk, with TCP_NODELAY), so
 * streamed events keep their timing apart from a loopback hop. Requests are forwarded with their
 * headers except the hop-by-hop ones; redirects are not followed.
 */
public final class UsageTap implements AutoCloseable {

    /** What one exchange was, as the server answered it. */
    public record Exchange(
            String method,
            String path,
            int status,
            Long promptTokens,
            Long completionTokens,
            boolean streamed,
            boolean endedWithDone,
            int dataEvents,
            String bodyStart) {
        /** True for a 2xx answer. */
        public boolean ok() {
            return status >= 200 && status < 300;
        }
    }

    /** Sums over a set of exchanges. */
    public record Totals(
            int exchanges, int ok, long promptTokens, long completionTokens, int withUsage) {}

    // TCP_NODELAY for the JDK's HTTP server (read once, when its configuration class loads): SSE
    // events are small writes that Nagle's algorithm would hold back behind a delayed ACK.
    static {
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    private static final Set<String> HOP_BY_HOP =
            Set.of(
                    "connection",
                    "keep-alive",
                    "proxy-connection",
                    "transfer-encoding",
                    "te",
                    "trailer",
                    "upgrade",
                    "host",
                    "content-length",
                    "expect");
    private static final int MAX_RECORDED_BODY = 8 << 20;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final ExecutorService executor;
    private final HttpClient client;
    private final URI upstream;
    private final List<Exchange> ledger = new ArrayList<>();

    private UsageTap(HttpServer server, ExecutorService executor, URI upstream) {
        this.server = server;
        this.executor = executor;
        this.upstream = upstream;
        this.client =
                HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .followRedirects(HttpClient.Redirect.NEVER)
                        .connectTimeout(Duration.ofSeconds(10))
                        .build();
    }

    /**
     * Starts a tap listening on {@code bindHost} (a free port) that forwards to {@code upstream}
     * ({@code http://host:port}).
     */
    public static UsageTap start(String bindHost, URI upstream) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(bindHost, 0), 256);
        ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        UsageTap tap = new UsageTap(server, executor, upstream);
        server.createContext("/", tap::forward);
        server.setExecutor(executor);
        server.start();
        return tap;
    }

    /** The tap's own base URL ({@code http://host:port}). */
    public URI baseUrl() {
        InetSocketAddress a = server.getAddress();
        return URI.create("http://" + a.getHostString() + ":" + a.getPort());
    }

    /** Every finished exchange so far, in the order they finished. */
    public synchronized List<Exchange> exchanges() {
        return List.copyOf(ledger);
    }

    /** The finished exchanges that match, in the order they finished. */
    public synchronized List<Exchange> exchanges(Predicate<Exchange> filter) {
        return ledger.stream().filter(filter).toList();
    }

    /** Forgets the exchanges recorded so far. */
    public synchronized void clear() {
        ledger.clear();
    }

    /** Sums over the exchanges that match. */
    public Totals totals(Predicate<Exchange> filter) {
        List<Exchange> list = exchanges(filter);
        long prompt = 0;
        long completion = 0;
        int ok = 0;
        int withUsage = 0;
        for (Exchange e : list) {
            ok += e.ok() ? 1 : 0;
            if (e.completionTokens() != null) {
                withUsage++;
                completion += e.completionTokens();
                prompt += e.promptTokens() == null ? 0 : e.promptTokens();
            }
        }
        return new Totals(list.size(), ok, prompt, completion, withUsage);
    }

    /** POSTs to a path ending with {@code suffix} (e.g. {@code /v1/completions}). */
    public static Predicate<Exchange> post(String suffix) {
        return e -> e.method().equals("POST") && e.path().endsWith(suffix);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        client.close();
    }

    private void forward(HttpExchange in) throws IOException {
        String method = in.getRequestMethod().toUpperCase(Locale.ROOT);
        String pathAndQuery = in.getRequestURI().getRawPath();
        if (in.getRequestURI().getRawQuery() != null) {
            pathAndQuery += "?" + in.getRequestURI().getRawQuery();
        }
        try (in) {
            byte[] body = in.getRequestBody().readAllBytes();
            HttpRequest.Builder out =
                    HttpRequest.newBuilder(URI.create(upstream.toString() + pathAndQuery))
                            .method(
                                    method,
                                    body.length == 0
                                            ? HttpRequest.BodyPublishers.noBody()
                                            : HttpRequest.BodyPublishers.ofByteArray(body));
            in.getRequestHeaders()
                    .forEach(
                            (name, values) -> {
                                if (!HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))) {
                                    values.forEach(v -> out.header(name, v));
                                }
                            });
            HttpResponse<InputStream> response;
            try {
                response = client.send(out.build(), HttpResponse.BodyHandlers.ofInputStream());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException e) {
                record(method, in.getRequestURI().getRawPath(), 502, new byte[0]);
                byte[] msg = ("upstream: " + e).getBytes(StandardCharsets.UTF_8);
                in.sendResponseHeaders(502, msg.length);
                in.getResponseBody().write(msg);
                return;
            }
            response.headers()
                    .map()
                    .forEach(
                            (name, values) -> {
                                if (!HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))
                                        && !name.startsWith(":")) {
                                    in.getResponseHeaders().put(name, values);
                                }
                            });
            boolean noBody = method.equals("HEAD") || response.statusCode() == 204;
            in.sendResponseHeaders(response.statusCode(), noBody ? -1 : 0);
            ByteArrayOutputStream copy = new ByteArrayOutputStream();
            try (InputStream from = response.body()) {
                OutputStream to = noBody ? OutputStream.nullOutputStream() : in.getResponseBody();
                byte[] buf = new byte[16 * 1024];
                int n;
                while ((n = from.read(buf)) > 0) {
                    to.write(buf, 0, n);
                    to.flush();
                    if (copy.size() + n <= MAX_RECORDED_BODY) {
                        copy.write(buf, 0, n);
                    }
                }
                to.close();
            } finally {
                record(
                        method,
                        in.getRequestURI().getRawPath(),
                        response.statusCode(),
                        copy.toByteArray());
            }
        }
    }

    private void record(String method, String path, int status, byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        boolean streamed = text.startsWith("data:") || text.contains("\ndata:");
        JsonNode usage = null;
        boolean done = false;
        int events = 0;
        if (streamed) {
            for (String event : text.replace("\r\n", "\n").split("\n\n")) {
                for (String line : event.split("\n")) {
                    if (!line.startsWith("data:")) {
                        continue;
                    }
                    String data = line.substring(5).strip();
                    events++;
                    if (data.equals("[DONE]")) {
                        done = true;
                        continue;
                    }
                    JsonNode u = parse(data).path("usage");
                    if (u.isObject()) {
                        usage = u;
                    }
                }
            }
        } else {
            JsonNode u = parse(text).path("usage");
            usage = u.isObject() ? u : null;
        }
        Exchange e =
                new Exchange(
                        method,
                        path,
                        status,
                        longOrNull(usage, "prompt_tokens"),
                        longOrNull(usage, "completion_tokens"),
                        streamed,
                        done,
                        events,
                        text.substring(0, Math.min(text.length(), 300)));
        synchronized (this) {
            ledger.add(e);
        }
    }

    private static Long longOrNull(JsonNode usage, String field) {
        return usage == null || !usage.path(field).isNumber() ? null : usage.path(field).asLong();
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException | RuntimeException e) {
            return JSON.missingNode();
        }
    }
}
