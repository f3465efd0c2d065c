package io.inferencebench.profile.cache;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLContext;

/**
 * The POSTs that establish a server's cache state before a stage (a reset, a warming prefix): one
 * HTTP/1.1 client with the load's certificate checks, each request with the load's headers and a
 * time limit, its answer read to the end and only its status kept (never the server's text, which
 * may echo the request's headers).
 */
public final class ServerPost {

    private final HttpClient client;
    private final Map<String, String> headers;
    private final Duration timeout;

    /**
     * @param headers the load's request headers (a gateway may want its key here too)
     * @param sslContext the certificate checks of an https server (the load's), {@code null} for
     *     the JVM's default trust
     * @param timeout the limit on connecting and on each request
     */
    public ServerPost(Map<String, String> headers, SSLContext sslContext, Duration timeout) {
        HttpClient.Builder builder =
                HttpClient.newBuilder()
                        .connectTimeout(timeout)
                        .version(HttpClient.Version.HTTP_1_1);
        if (sslContext != null) {
            builder.sslContext(sslContext);
        }
        this.client = builder.build();
        this.headers = Map.copyOf(headers);
        this.timeout = timeout;
    }

    /**
     * POSTs {@code json} (or nothing) to {@code url}.
     *
     * @param json the body, sent as {@code application/json}, or {@code null} for none
     * @return the answer's status
     */
    public int post(String url, byte[] json) throws IOException, InterruptedException {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(timeout)
                        .POST(
                                json == null
                                        ? HttpRequest.BodyPublishers.noBody()
                                        : HttpRequest.BodyPublishers.ofByteArray(json));
        if (json != null) {
            request.header("Content-Type", "application/json");
        }
        headers.forEach(
                (name, value) -> {
                    if (json == null || !name.equalsIgnoreCase("Content-Type")) {
                        request.header(name, value);
                    }
                });
        return client.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }
}
