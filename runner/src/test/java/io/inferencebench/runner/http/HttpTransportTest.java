package io.inferencebench.runner.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.runner.stub.StubServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The load path's connection pool: pre-opened connections, keep-alive reuse, dead ones dropped. */
class HttpTransportTest {

    /** Collects one exchange's outcome. */
    static class Outcome implements ResponseSink {
        final CompletableFuture<String> done = new CompletableFuture<>();
        final StringBuilder body = new StringBuilder();
        int status;

        @Override
        public void onStatus(int statusCode, String contentType) {
            status = statusCode;
        }

        @Override
        public boolean onBytes(byte[] data, int offset, int length) {
            body.append(new String(data, offset, length, StandardCharsets.UTF_8));
            return true;
        }

        @Override
        public void onEnd(long nanos) {
            done.complete(status + " " + body);
        }

        @Override
        public void onFailure(FailureClass failure, String message, long nanos) {
            done.complete("failed " + failure.wireName() + ": " + message);
        }

        @Override
        public void onCancelled(long nanos) {
            done.complete("cancelled");
        }
    }

    private static String post(HttpTransport transport, int loop, HttpTransport.PreparedRequest r)
            throws Exception {
        Outcome outcome = new Outcome();
        transport.execute(loop, () -> transport.post(loop, r, outcome));
        return outcome.done.get(10, TimeUnit.SECONDS);
    }

    @Test
    void preconnectOpensConnectionsThatRequestsThenReuse() throws Exception {
        try (StubServer server =
                        new StubServer(
                                (req, ex) ->
                                        ex.respond(
                                                200,
                                                "application/json",
                                                "{\"echo\":" + req.body().length + "}"));
                HttpTransport transport =
                        new HttpTransport(
                                server.baseUrl(), Map.of(), 2, 100, Duration.ofSeconds(5))) {
            assertThat(transport.preconnect(3, Duration.ofSeconds(5))).isEqualTo(6);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (server.connections() < 6 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(server.connections()).isEqualTo(6);
            assertThat(server.requests()).as("pre-opening sends nothing").isZero();
            HttpTransport.PreparedRequest request =
                    transport.preparePost("/v1/x", "application/json", "{\"a\":1}".getBytes());
            for (int i = 0; i < 20; i++) {
                assertThat(post(transport, i % 2, request)).isEqualTo("200 {\"echo\":7}");
            }
            assertThat(server.requests()).isEqualTo(20);
            assertThat(server.connections()).as("keep-alive: no new connection").isEqualTo(6);
            // Asking again for as many opens nothing more.
            assertThat(transport.preconnect(3, Duration.ofSeconds(5))).isEqualTo(6);
            assertThat(server.connections()).isEqualTo(6);
        }
    }

    @Test
    void aPooledConnectionTheServerClosedIsNotUsed() throws Exception {
        try (StubServer server =
                        new StubServer(
                                (req, ex) -> {
                                    ex.respond(200, "text/plain", "bye");
                                    ex.close();
                                });
                HttpTransport transport =
                        new HttpTransport(
                                server.baseUrl(), Map.of(), 1, 100, Duration.ofSeconds(5))) {
            HttpTransport.PreparedRequest request =
                    transport.preparePost("/x", "text/plain", new byte[0]);
            for (int i = 0; i < 3; i++) {
                assertThat(post(transport, 0, request)).isEqualTo("200 bye");
                Thread.sleep(100); // the server's FIN arrives
            }
            assertThat(server.connections()).isEqualTo(3);
        }
    }

    @Test
    void requestsBeyondThePoolSizeWaitForAConnection() throws Exception {
        try (StubServer server =
                        new StubServer(
                                (req, ex) -> {
                                    Thread.sleep(100);
                                    ex.respond(200, "text/plain", "ok");
                                });
                HttpTransport transport =
                        new HttpTransport(
                                server.baseUrl(), Map.of(), 1, 2, Duration.ofSeconds(5))) {
            HttpTransport.PreparedRequest request =
                    transport.preparePost("/x", "text/plain", new byte[0]);
            Outcome[] outcomes = new Outcome[6];
            for (int i = 0; i < outcomes.length; i++) {
                Outcome o = outcomes[i] = new Outcome();
                transport.execute(0, () -> transport.post(0, request, o));
            }
            for (Outcome o : outcomes) {
                assertThat(o.done.get(10, TimeUnit.SECONDS)).isEqualTo("200 ok");
            }
            assertThat(server.connections()).isEqualTo(2);
        }
    }

    @Test
    void getReturnsTheBodyAndNamesAnHttpError() throws Exception {
        try (StubServer server =
                        new StubServer(
                                (req, ex) -> {
                                    if (req.path().equals("/v1/models")) {
                                        ex.respond(200, "application/json", "{\"data\":[]}");
                                    } else {
                                        ex.respond(404, "text/plain", "no");
                                    }
                                });
                HttpTransport transport =
                        new HttpTransport(
                                server.baseUrl(), Map.of(), 1, 10, Duration.ofSeconds(5))) {
            assertThat(transport.get("/v1/models", Duration.ofSeconds(5)))
                    .isEqualTo("{\"data\":[]}");
            try {
                transport.get("/info", Duration.ofSeconds(5));
                throw new AssertionError("expected an error");
            } catch (java.io.IOException e) {
                assertThat(e.getMessage()).isEqualTo("HTTP 404 for GET /info");
            }
        }
    }

    @Test
    void eachExchangeTimesOutOnItsOwnDeadlineWhileOthersComplete() throws Exception {
        // Requests whose body says "hang" are never answered; the others at once. They are sent
        // 40 ms apart, so the hanging ones sit between completed ones in the pool's deadline list.
        try (StubServer server =
                        new StubServer(
                                (req, ex) -> {
                                    if (new String(req.body(), StandardCharsets.UTF_8)
                                            .equals("hang")) {
                                        Thread.sleep(5_000);
                                    }
                                    ex.respond(200, "text/plain", "ok");
                                });
                HttpTransport transport =
                        new HttpTransport(
                                server.baseUrl(), Map.of(), 1, 20, Duration.ofMillis(400))) {
            HttpTransport.PreparedRequest hang =
                    transport.preparePost("/x", "text/plain", "hang".getBytes());
            HttpTransport.PreparedRequest answer =
                    transport.preparePost("/x", "text/plain", "fine".getBytes());
            Outcome[] outcomes = new Outcome[8];
            long[] posted = new long[outcomes.length];
            long[] ended = new long[outcomes.length];
            for (int i = 0; i < outcomes.length; i++) {
                int index = i;
                Outcome o =
                        outcomes[i] =
                                new Outcome() {
                                    @Override
                                    public void onFailure(
                                            FailureClass failure, String message, long nanos) {
                                        ended[index] = nanos;
                                        super.onFailure(failure, message, nanos);
                                    }
                                };
                HttpTransport.PreparedRequest r = i % 2 == 1 ? hang : answer;
                transport.execute(
                        0,
                        () -> {
                            posted[index] = System.nanoTime();
                            transport.post(0, r, o);
                        });
                Thread.sleep(40);
            }
            for (int i = 0; i < outcomes.length; i++) {
                String result = outcomes[i].done.get(10, TimeUnit.SECONDS);
                if (i % 2 == 1) {
                    assertThat(result)
                            .isEqualTo("failed timeout: no complete response within 400 ms");
                    // never before its own deadline, whatever happened to its neighbours
                    assertThat(ended[i] - posted[i]).isGreaterThanOrEqualTo(400_000_000L);
                } else {
                    assertThat(result).isEqualTo("200 ok");
                }
            }
            // A timed-out exchange's connection is closed, never reused for a later request.
            assertThat(post(transport, 0, answer)).isEqualTo("200 ok");
        }
    }
}
