package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link UsageTap} against a loopback stub: bytes and statuses pass unchanged, streamed events pass
 * as they arrive (not when the stream ends), and the ledger holds each answer's status and usage.
 */
class UsageTapTest {

    private HttpServer upstream;
    private UsageTap tap;
    private final CountDownLatch releaseSecondEvent = new CountDownLatch(1);
    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    static final String FIRST = "data: {\"choices\":[{\"index\":0,\"text\":\"hello\"}]}\n\n";
    static final String LAST =
            "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}],"
                    + "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3,\"total_tokens\":10}}\n\n";

    @BeforeEach
    void start() throws Exception {
        upstream = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        upstream.createContext(
                "/v1/completions",
                ex -> {
                    String body =
                            new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                    if (body.contains("ignore_eos")) {
                        byte[] refusal =
                                "{\"detail\":[{\"loc\":[\"body\",\"ignore_eos\"]}]}"
                                        .getBytes(StandardCharsets.UTF_8);
                        ex.getResponseHeaders().add("Content-Type", "application/json");
                        ex.sendResponseHeaders(422, refusal.length);
                        ex.getResponseBody().write(refusal);
                        ex.close();
                        return;
                    }
                    if (!body.contains("\"stream\":true")) {
                        byte[] whole =
                                ("{\"choices\":[{\"text\":\"abc\"}],\"usage\":{\"prompt_tokens\":5,"
                                                + "\"completion_tokens\":2}}")
                                        .getBytes(StandardCharsets.UTF_8);
                        ex.getResponseHeaders().add("Content-Type", "application/json");
                        ex.sendResponseHeaders(200, whole.length);
                        ex.getResponseBody().write(whole);
                        ex.close();
                        return;
                    }
                    ex.getResponseHeaders().add("Content-Type", "text/event-stream");
                    ex.sendResponseHeaders(200, 0);
                    OutputStream out = ex.getResponseBody();
                    out.write(FIRST.getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    boolean released = false;
                    try {
                        released = releaseSecondEvent.await(5, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    // Like transformers serve: usage in the last event, no [DONE]. Only once the
                    // client has read the first event: a tap that held it back gets no second.
                    if (released) {
                        out.write(LAST.getBytes(StandardCharsets.UTF_8));
                    }
                    ex.close();
                });
        upstream.start();
        tap =
                UsageTap.start(
                        "127.0.0.1",
                        URI.create("http://127.0.0.1:" + upstream.getAddress().getPort()));
    }

    @AfterEach
    void stop() {
        tap.close();
        upstream.stop(0);
        http.close();
    }

    private HttpRequest post(String body) {
        return HttpRequest.newBuilder(URI.create(tap.baseUrl() + "/v1/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
    }

    @Test
    void aStreamPassesEventByEventAndItsLastUsageIsRecorded() throws Exception {
        HttpResponse<InputStream> r =
                http.send(post("{\"stream\":true}"), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("text/event-stream");
        try (InputStream in = r.body()) {
            // The first event arrives while the upstream still holds the second one back.
            byte[] first = in.readNBytes(FIRST.length());
            assertThat(new String(first, StandardCharsets.UTF_8)).isEqualTo(FIRST);
            assertThat(tap.exchanges()).as("nothing finished yet").isEmpty();
            releaseSecondEvent.countDown();
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo(LAST);
        }
        UsageTap.Exchange e = awaitOne();
        assertThat(e.method()).isEqualTo("POST");
        assertThat(e.path()).isEqualTo("/v1/completions");
        assertThat(e.status()).isEqualTo(200);
        assertThat(e.streamed()).isTrue();
        assertThat(e.endedWithDone()).isFalse();
        assertThat(e.dataEvents()).isEqualTo(2);
        assertThat(e.promptTokens()).isEqualTo(7);
        assertThat(e.completionTokens()).isEqualTo(3);
    }

    @Test
    void wholeAnswersAndRefusalsAreRecordedWithTheirStatus() throws Exception {
        HttpResponse<String> whole = http.send(post("{}"), HttpResponse.BodyHandlers.ofString());
        assertThat(whole.body()).contains("\"completion_tokens\":2");
        HttpResponse<String> refused =
                http.send(post("{\"ignore_eos\":true}"), HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(422);
        assertThat(refused.body()).contains("ignore_eos");
        HttpResponse<String> missing =
                http.send(
                        HttpRequest.newBuilder(URI.create(tap.baseUrl() + "/metrics")).build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(missing.statusCode()).isEqualTo(404);

        UsageTap.Totals totals = tap.totals(UsageTap.post("/v1/completions"));
        assertThat(totals.exchanges()).isEqualTo(2);
        assertThat(totals.ok()).isEqualTo(1);
        assertThat(totals.withUsage()).isEqualTo(1);
        assertThat(totals.promptTokens()).isEqualTo(5);
        assertThat(totals.completionTokens()).isEqualTo(2);
        assertThat(tap.exchanges(e -> e.status() == 422))
                .singleElement()
                .satisfies(e -> assertThat(e.bodyStart()).contains("ignore_eos"));
        assertThat(tap.exchanges(e -> e.path().equals("/metrics")))
                .singleElement()
                .satisfies(e -> assertThat(e.method()).isEqualTo("GET"));
        tap.clear();
        assertThat(tap.exchanges()).isEmpty();
    }

    private UsageTap.Exchange awaitOne() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (tap.exchanges().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(tap.exchanges()).hasSize(1);
        return tap.exchanges().get(0);
    }
}
