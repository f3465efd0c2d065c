package io.inferencebench.testkit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;

/**
 * The part of the kubelet API the API server proxies for {@code kubectl logs}: {@code
 * /containerLogs/<ns>/<pod>/<container>} with {@code tailLines}, {@code limitBytes} and {@code
 * follow}, served over HTTPS on the node address.
 */
final class KubeletServer implements AutoCloseable {

    private final LocalNode node;
    private final HttpsServer server;

    KubeletServer(LocalNode node, String address, SSLContext tls) {
        this.node = node;
        try {
            server =
                    HttpsServer.create(
                            new InetSocketAddress(InetAddress.getByName(address), 0), 64);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/containerLogs/", this::logs);
        server.createContext(
                "/healthz",
                exchange -> {
                    byte[] ok = "ok".getBytes(StandardCharsets.UTF_8);
                    exchange.sendResponseHeaders(200, ok.length);
                    exchange.getResponseBody().write(ok);
                    exchange.close();
                });
        // The dispatcher thread inherits daemon status from the thread that starts the server;
        // a non-daemon one would keep the JVM (and so the whole cluster) alive after main ends.
        Thread starter = Thread.ofPlatform().daemon().unstarted(server::start);
        starter.start();
        try {
            starter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    int port() {
        return server.getAddress().getPort();
    }

    private void logs(HttpExchange exchange) throws IOException {
        try (exchange) {
            String[] parts = exchange.getRequestURI().getPath().split("/");
            if (parts.length != 5) {
                send(exchange, 404, "expected /containerLogs/<namespace>/<pod>/<container>");
                return;
            }
            String namespace = parts[2];
            String pod = parts[3];
            String container = parts[4];
            Path file = node.logFile(namespace, pod, container);
            if (!Files.exists(file)) {
                send(
                        exchange,
                        404,
                        "no logs for container " + container + " in pod " + namespace + "/" + pod);
                return;
            }
            Map<String, String> query = query(exchange.getRequestURI().getRawQuery());
            String content = Files.readString(file);
            if (query.containsKey("tailLines")) {
                List<String> lines = content.lines().toList();
                int n = Integer.parseInt(query.get("tailLines"));
                content =
                        String.join(
                                        "\n",
                                        lines.subList(Math.max(0, lines.size() - n), lines.size()))
                                + (lines.isEmpty() ? "" : "\n");
            }
            byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
            if (query.containsKey("limitBytes")) {
                int limit = Integer.parseInt(query.get("limitBytes"));
                if (bytes.length > limit) {
                    bytes = java.util.Arrays.copyOf(bytes, limit);
                }
            }
            exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            boolean follow = "true".equals(query.get("follow"));
            exchange.sendResponseHeaders(200, follow ? 0 : bytes.length);
            OutputStream out = exchange.getResponseBody();
            out.write(bytes);
            out.flush();
            if (follow) {
                follow(file, Files.size(file), out, namespace, pod, container);
            }
        } catch (NumberFormatException e) {
            send(exchange, 400, "bad number: " + e.getMessage());
        }
    }

    private void follow(
            Path file,
            long offset,
            OutputStream out,
            String namespace,
            String pod,
            String container)
            throws IOException {
        byte[] buffer = new byte[8192];
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
            long position = offset;
            while (!node.isClosed()) {
                raf.seek(position);
                int n = raf.read(buffer);
                if (n > 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                    position += n;
                    continue;
                }
                if (node.containerPid(namespace, pod, container).isEmpty()) {
                    return;
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> map = new HashMap<>();
        if (raw == null) {
            return map;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String key =
                    URLDecoder.decode(
                            eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value =
                    eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            map.put(key, value);
        }
        return map;
    }

    private static void send(HttpExchange exchange, int status, String message) throws IOException {
        byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
