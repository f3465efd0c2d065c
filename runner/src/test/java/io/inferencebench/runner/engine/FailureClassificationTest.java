package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.backend.OpenAiCompletions;
import io.inferencebench.runner.stub.StubServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every failure class is counted, and no failure makes a stage outlive the request timeout. */
class FailureClassificationTest {

    private static final Duration TIMEOUT = Duration.ofMillis(800);
    private static final int REQUESTS = 3;

    private static StageResult runAgainst(String baseUrl, boolean stream) {
        try (EngineFixture f =
                new EngineFixture(
                        baseUrl, new OpenAiCompletions(), stream, 4, TIMEOUT, Slo.NONE, 1000)) {
            long start = System.nanoTime();
            StageResult r =
                    f.engine.runStage(
                            EngineFixture.open(
                                    Double.POSITIVE_INFINITY, REQUESTS, ArrivalKind.POISSON));
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(elapsedMs).as("stage duration").isLessThan(TIMEOUT.toMillis() + 1500);
            assertThat(r.sent).isEqualTo(REQUESTS);
            assertThat(r.completed + r.failed).isEqualTo(REQUESTS);
            return r;
        }
    }

    private static StageResult runAgainst(StubServer.Handler handler) throws Exception {
        try (StubServer server = new StubServer(handler)) {
            return runAgainst(server.baseUrl(), true);
        }
    }

    /** Streams {@code events} as server-sent events and ends the stream as it should. */
    private static StubServer.Handler events(String... events) {
        return sse(true, events);
    }

    /** Streams {@code events}, then closes the connection without ending the stream. */
    private static StubServer.Handler eventsThenClose(String... events) {
        return sse(false, events);
    }

    private static StubServer.Handler sse(boolean endTheStream, String... events) {
        return (req, ex) -> {
            ex.startSse();
            for (String event : events) {
                ex.chunk(event);
            }
            if (endTheStream) {
                ex.endChunked();
            } else {
                ex.close();
            }
        };
    }

    private static void assertOnly(StageResult r, String errorClass) {
        assertThat(r.completed).isZero();
        assertThat(r.failed).isEqualTo(REQUESTS);
        assertThat(r.errorsByClass).isEqualTo(Map.of(errorClass, (long) REQUESTS));
        assertThat(r.latencyMs.count()).isZero();
    }

    @Test
    void connectionRefused() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            port = s.getLocalPort();
        }
        assertOnly(runAgainst("http://127.0.0.1:" + port, true), "connect");
    }

    @Test
    void serverThatNeverAnswersTimesOut() throws Exception {
        assertOnly(runAgainst((req, ex) -> Thread.sleep(10_000)), "timeout");
    }

    @Test
    void streamThatStallsAfterTheFirstTokenTimesOut() throws Exception {
        StageResult r =
                runAgainst(
                        (req, ex) -> {
                            ex.startSse();
                            ex.chunk("data: {\"choices\":[{\"text\":\"a\"}]}\n\n");
                            Thread.sleep(10_000);
                        });
        assertOnly(r, "timeout");
    }

    @Test
    void aRedirectIsNotFollowedAndItsLocationIsReported() throws Exception {
        try (StubServer server =
                        new StubServer(
                                (req, ex) ->
                                        ex.raw(
                                                "HTTP/1.1 308 Permanent Redirect\r\nLocation:"
                                                        + " https://llm.example.net/api/v1/completions"
                                                        + "\r\nContent-Length: 9\r\n\r\nredirect!"));
                EngineFixture f =
                        new EngineFixture(
                                server.baseUrl(),
                                new OpenAiCompletions(),
                                true,
                                4,
                                TIMEOUT,
                                Slo.NONE,
                                1000)) {
            StageResult r =
                    f.engine.runStage(
                            EngineFixture.open(
                                    Double.POSITIVE_INFINITY, REQUESTS, ArrivalKind.POISSON));
            assertOnly(r, "other");
            assertThat(server.requests()).as("nothing followed the redirect").isEqualTo(REQUESTS);
            assertThat(f.finished)
                    .allSatisfy(
                            e ->
                                    assertThat(e.errorMessage())
                                            .isEqualTo(
                                                    "HTTP 308: the server redirected to"
                                                            + " https://llm.example.net/api/v1/completions;"
                                                            + " use that URL as --base-url (target.url)"
                                                            + " (redirects are not followed)"));
        }
    }

    @Test
    void clientErrorStatus() throws Exception {
        StageResult r =
                runAgainst(
                        (req, ex) ->
                                ex.respond(
                                        400,
                                        "application/json",
                                        "{\"object\":\"error\",\"message\":\"bad model\"}"));
        assertOnly(r, "http_4xx");
    }

    @Test
    void serverErrorStatus() throws Exception {
        assertOnly(
                runAgainst((req, ex) -> ex.respond(503, "text/plain", "overloaded")), "http_5xx");
    }

    @Test
    void connectionClosedMidStream() throws Exception {
        StageResult r =
                runAgainst(
                        eventsThenClose(
                                "data: {\"choices\":[{\"text\":\"a\"}]}\n\n",
                                "data: {\"choices\":[{\"text\":\"b\"}]}\n\n"));
        assertOnly(r, "reset");
    }

    @Test
    void garbageInsteadOfAnEventStream() throws Exception {
        StageResult r = runAgainst(events("<html><body>502 Bad Gateway</body></html>\n"));
        assertOnly(r, "malformed_stream");
    }

    @Test
    void eventThatIsNotJson() throws Exception {
        StageResult r =
                runAgainst(events("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {not json\n\n"));
        assertOnly(r, "malformed_stream");
    }

    @Test
    void errorObjectInTheStream() throws Exception {
        StageResult r =
                runAgainst(
                        events(
                                "data: {\"choices\":[{\"text\":\"a\"}]}\n\n",
                                "data: {\"error\":{\"message\":\"out of memory\",\"code\":500}}\n\n",
                                "data: [DONE]\n\n"));
        assertOnly(r, "error_payload");
    }

    @Test
    void errorObjectInANonStreamedBody() throws Exception {
        try (StubServer server =
                new StubServer(
                        (req, ex) ->
                                ex.respond(
                                        200,
                                        "application/json",
                                        "{\"error\":{\"message\":\"nope\"}}"))) {
            assertOnly(runAgainst(server.baseUrl(), false), "error_payload");
        }
    }

    @Test
    void redirectIsOther() throws Exception {
        assertOnly(runAgainst((req, ex) -> ex.respond(302, "text/plain", "")), "other");
    }

    @Test
    void failuresAndSuccessesAreCountedSeparately() throws Exception {
        java.util.concurrent.atomic.AtomicInteger n =
                new java.util.concurrent.atomic.AtomicInteger();
        StageResult r =
                runAgainst(
                        (req, ex) -> {
                            if (n.getAndIncrement() % 3 == 0) {
                                ex.respond(500, "text/plain", "boom");
                                return;
                            }
                            ex.startSse();
                            ex.chunk("data: {\"choices\":[{\"text\":\"a\"}]}\n\n");
                            ex.chunk("data: [DONE]\n\n");
                            ex.endChunked();
                        });
        assertThat(r.failed).isEqualTo(1);
        assertThat(r.completed).isEqualTo(2);
        assertThat(r.errorsByClass).isEqualTo(Map.of("http_5xx", 1L));
        assertThat(r.latencyMs.count()).isEqualTo(2);
    }

    @Test
    void aStreamWithOnlyUsageIsAnEmptyResponse() throws Exception {
        // No content event at all: the usage event is the only data.
        assertOnly(
                runAgainst(
                        events(
                                "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,"
                                        + "\"completion_tokens\":0}}\n\n",
                                "data: [DONE]\n\n")),
                "empty_response");
        // Empty text in the choices and usage that claims tokens: still no text.
        assertOnly(
                runAgainst(
                        events(
                                "data: {\"choices\":[{\"index\":0,\"text\":\"\"}]}\n\n",
                                "data: {\"choices\":[{\"index\":0,\"text\":\"\","
                                        + "\"finish_reason\":\"length\"}],\"usage\":"
                                        + "{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\n",
                                "data: [DONE]\n\n")),
                "empty_response");
    }

    @Test
    void aCompleteBodyWithEmptyTextAndNoCompletionTokensIsAnEmptyResponse() throws Exception {
        try (StubServer server =
                new StubServer(
                        (req, ex) ->
                                ex.respond(
                                        200,
                                        "application/json",
                                        "{\"choices\":[{\"index\":0,\"text\":\"\"}],\"usage\":"
                                                + "{\"prompt_tokens\":5,\"completion_tokens\":0}}"))) {
            assertOnly(runAgainst(server.baseUrl(), false), "empty_response");
        }
        // With text it is a success, streamed or not.
        try (StubServer server =
                new StubServer(
                        (req, ex) ->
                                ex.respond(
                                        200,
                                        "application/json",
                                        "{\"choices\":[{\"index\":0,\"text\":\"hi\"}],\"usage\":"
                                                + "{\"prompt_tokens\":5,\"completion_tokens\":1}}"))) {
            StageResult r = runAgainst(server.baseUrl(), false);
            assertThat(r.completed).isEqualTo(REQUESTS);
            assertThat(r.errorsByClass).isEmpty();
        }
    }
}
