package io.inferencebench.testkit;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** What a test's stand-in model server answers on {@code /metrics}: a Prometheus text page. */
public final class MetricsPage {

    private MetricsPage() {}

    /** Answers {@code exchange} with 200 and {@code text} as Prometheus text format 0.0.4. */
    public static void send(HttpExchange exchange, String text) throws IOException {
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "text/plain; version=0.0.4");
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
    }
}
