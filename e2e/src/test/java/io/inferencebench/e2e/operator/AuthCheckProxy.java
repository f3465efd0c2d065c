package io.inferencebench.e2e.operator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A model-server front that demands {@code Authorization: Bearer $EXPECTED_API_KEY} on {@code /v1/}
 * paths (401 otherwise) and forwards everything to {@code $UPSTREAM}, streaming the response. It
 * never prints the key or the header; {@code GET /auth-counts} says how many requests carried the
 * right key and how many were rejected.
 */
public final class AuthCheckProxy {
    private static final Set<String> HOP_HEADERS =
            Set.of(
                    "connection",
                    "content-length",
                    "host",
                    "transfer-encoding",
                    "upgrade",
                    "keep-alive",
                    "expect");

    private AuthCheckProxy() {}

    public static void main(String[] args) throws Exception {
        String ip = System.getenv("POD_IP");
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "8000"));
        String upstream = System.getenv("UPSTREAM");
        byte[] expected =
                ("Bearer " + System.getenv("EXPECTED_API_KEY")).getBytes(StandardCharsets.UTF_8);
        AtomicLong accepted = new AtomicLong();
        AtomicLong rejected = new AtomicLong();
        HttpClient http = HttpClient.newHttpClient();
        HttpServer server = HttpServer.create(new InetSocketAddress(ip, port), 256);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext(
                "/auth-counts",
                exchange -> {
                    byte[] body =
                            ("accepted=" + accepted.get() + " rejected=" + rejected.get())
                                    .getBytes(StandardCharsets.UTF_8);
                    exchange.sendResponseHeaders(200, body.length);
                    exchange.getResponseBody().write(body);
                    exchange.close();
                });
        server.createContext(
                "/",
                exchange -> {
                    try {
                        if (exchange.getRequestURI().getPath().startsWith("/v1/")) {
                            String given = exchange.getRequestHeaders().getFirst("Authorization");
                            if (given == null
                                    || !MessageDigest.isEqual(
                                            expected, given.getBytes(StandardCharsets.UTF_8))) {
                                rejected.incrementAndGet();
                                exchange.sendResponseHeaders(401, -1);
                                return;
                            }
                            accepted.incrementAndGet();
                        }
                        forward(http, upstream, exchange);
                    } catch (Exception e) {
                        System.out.println("forwarding failed: " + e.getClass().getSimpleName());
                        try {
                            exchange.sendResponseHeaders(502, -1);
                        } catch (IOException ignored) {
                            // response already started
                        }
                    } finally {
                        exchange.close();
                    }
                });
        server.start();
        System.out.println("auth proxy listening on " + ip + ":" + port + " -> " + upstream);
    }

    private static void forward(HttpClient http, String upstream, HttpExchange exchange)
            throws IOException, InterruptedException {
        byte[] requestBody = exchange.getRequestBody().readAllBytes();
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(upstream + exchange.getRequestURI()))
                        .method(
                                exchange.getRequestMethod(),
                                requestBody.length == 0
                                        ? HttpRequest.BodyPublishers.noBody()
                                        : HttpRequest.BodyPublishers.ofByteArray(requestBody));
        exchange.getRequestHeaders()
                .forEach(
                        (name, values) -> {
                            if (!HOP_HEADERS.contains(name.toLowerCase())
                                    && !name.equalsIgnoreCase("authorization")) {
                                values.forEach(v -> request.header(name, v));
                            }
                        });
        HttpResponse<InputStream> response =
                http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        response.headers()
                .map()
                .forEach(
                        (name, values) -> {
                            if (!HOP_HEADERS.contains(name.toLowerCase())
                                    && !name.startsWith(":")) {
                                exchange.getResponseHeaders().put(name, List.copyOf(values));
                            }
                        });
        exchange.sendResponseHeaders(response.statusCode(), 0);
        try (InputStream in = response.body();
                OutputStream out = exchange.getResponseBody()) {
            byte[] buffer = new byte[8192];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                // server-sent events must reach the client as they come (TTFT, ITL)
                out.flush();
            }
        }
    }
}
