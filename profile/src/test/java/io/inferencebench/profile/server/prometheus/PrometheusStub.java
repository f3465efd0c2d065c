package io.inferencebench.profile.server.prometheus;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/** A loopback stand-in for a Prometheus server's HTTP API that answers with recorded JSON. */
final class PrometheusStub implements AutoCloseable {

    /** One request as received. */
    record Request(String method, String path, Map<String, List<String>> params, String auth) {
        String param(String name) {
            List<String> v = params.get(name);
            return v == null || v.isEmpty() ? null : v.get(0);
        }
    }

    /** An answer: HTTP status, body and an optional delay. */
    record Answer(int status, String body, long delayMillis) {
        static Answer ok(String body) {
            return new Answer(200, body, 0);
        }
    }

    private final HttpServer server;
    private final Map<String, Function<Request, Answer>> routes = new ConcurrentHashMap<>();
    final List<Request> requests = Collections.synchronizedList(new ArrayList<>());

    PrometheusStub() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::handle);
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        server.start();
    }

    URI url() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    PrometheusStub route(String path, Function<Request, Answer> answer) {
        routes.put(path, answer);
        return this;
    }

    PrometheusStub json(String path, String body) {
        return route(path, r -> Answer.ok(body));
    }

    List<Request> requests(String path) {
        synchronized (requests) {
            return requests.stream().filter(r -> r.path().equals(path)).toList();
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String raw = exchange.getRequestURI().getRawQuery();
            byte[] body = exchange.getRequestBody().readAllBytes();
            Map<String, List<String>> params = new LinkedHashMap<>();
            decode(raw, params);
            decode(new String(body, StandardCharsets.UTF_8), params);
            Request request =
                    new Request(
                            exchange.getRequestMethod(),
                            exchange.getRequestURI().getPath(),
                            params,
                            exchange.getRequestHeaders().getFirst("Authorization"));
            requests.add(request);
            Function<Request, Answer> route = routes.get(request.path());
            Answer answer =
                    route == null
                            ? new Answer(404, "404 page not found\n", 0)
                            : route.apply(request);
            if (answer.delayMillis() > 0) {
                try {
                    Thread.sleep(answer.delayMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            byte[] out = answer.body().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(answer.status(), out.length == 0 ? -1 : out.length);
            if (out.length > 0) {
                try (OutputStream os = exchange.getResponseBody()) {
                    os.write(out);
                }
            }
        } catch (IOException e) {
            // the client gave up (timeout tests): nothing to answer
        }
    }

    private static void decode(String form, Map<String, List<String>> into) {
        if (form == null || form.isEmpty()) {
            return;
        }
        for (String pair : form.split("&")) {
            int eq = pair.indexOf('=');
            String k =
                    URLDecoder.decode(
                            eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String v =
                    eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            into.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
