package io.inferencebench.e2e.programs;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/** Serves {@code hello from <pod> at <ip>} on POD_IP:PORT, and 200 on /healthz. */
public final class HttpEcho {
    private HttpEcho() {}

    public static void main(String[] args) throws Exception {
        String ip = System.getenv("POD_IP");
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "8080"));
        HttpServer server = HttpServer.create(new InetSocketAddress(ip, port), 16);
        byte[] body =
                ("hello from " + System.getenv("POD_NAME") + " at " + ip)
                        .getBytes(StandardCharsets.UTF_8);
        server.createContext(
                "/",
                exchange -> {
                    exchange.sendResponseHeaders(200, body.length);
                    exchange.getResponseBody().write(body);
                    exchange.close();
                });
        server.createContext(
                "/healthz",
                exchange -> {
                    exchange.sendResponseHeaders(200, -1);
                    exchange.close();
                });
        server.start();
        System.out.println("listening on " + ip + ":" + port);
    }
}
