package io.inferencebench.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The tests' plain GET: the body as text, 5 s for the whole answer. */
public final class HttpGet {

    private HttpGet() {}

    /** GETs {@code url} with {@code http}, at most 5 s until the answer is read. */
    public static HttpResponse<String> get(HttpClient http, String url)
            throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
