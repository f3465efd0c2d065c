package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.backend.TgiGenerate;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;

class TgiProtocolTest {

    /** The engine streaming TGI's /generate_stream from {@code server}: 4 tokens, 5 s timeout. */
    private static EngineFixture tgiStreaming(StubServer server) {
        return new EngineFixture(
                server.baseUrl(),
                new TgiGenerate(true),
                true,
                4,
                Duration.ofSeconds(5),
                Slo.NONE,
                1000);
    }

    @Test
    void generateStreamCountsTokensSkipsSpecialOnesAndReadsDetails() throws Exception {
        ConcurrentLinkedQueue<String> paths = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<com.fasterxml.jackson.databind.JsonNode> bodies =
                new ConcurrentLinkedQueue<>();
        StubServer.Handler handler =
                (req, ex) -> {
                    paths.add(req.path());
                    bodies.add(req.json());
                    ex.startSse();
                    for (int i = 0; i < 3; i++) {
                        Thread.sleep(5);
                        ex.chunk(
                                "data:{\"index\":"
                                        + i
                                        + ",\"token\":{\"id\":"
                                        + (10 + i)
                                        + ",\"text\":\" w"
                                        + i
                                        + "\",\"logprob\":-0.1,\"special\":false},"
                                        + "\"generated_text\":null,\"details\":null}\n\n");
                    }
                    ex.chunk(
                            "data:{\"index\":3,\"token\":{\"id\":2,\"text\":\"</s>\",\"special\":true},"
                                    + "\"generated_text\":\" w0 w1 w2\",\"details\":{\"finish_reason\":"
                                    + "\"eos_token\",\"generated_tokens\":4,\"seed\":null}}\n\n");
                    ex.endChunked();
                };
        try (StubServer server = new StubServer(handler);
                EngineFixture f = tgiStreaming(server)) {
            StageResult r = f.engine.runStage(EngineFixture.closed(1, 2));
            assertThat(r.completed).isEqualTo(2);
            assertThat(r.outputTokenSource).isEqualTo("usage");
            assertThat(r.outputLen.mean()).isEqualTo(4);
            assertThat(r.itlMs.count()).isEqualTo(2 * 2);
            assertThat(f.finished.get(0).contentEvents()).isEqualTo(3);
            assertThat(paths).containsOnly("/generate_stream");
            var body = bodies.peek();
            assertThat(body.path("inputs").isTextual()).isTrue();
            assertThat(body.at("/parameters/max_new_tokens").asInt()).isEqualTo(4);
            assertThat(body.at("/parameters/details").asBoolean()).isTrue();
            assertThat(body.at("/parameters/do_sample").asBoolean()).isFalse();
        }
    }

    @Test
    void tgiErrorEventIsAnErrorPayload() throws Exception {
        StubServer.Handler handler =
                (req, ex) -> {
                    ex.startSse();
                    ex.chunk(
                            "data:{\"error\":\"Request failed during generation\",\"error_type\":\"generation\"}\n\n");
                    ex.endChunked();
                };
        try (StubServer server = new StubServer(handler);
                EngineFixture f = tgiStreaming(server)) {
            StageResult r = f.engine.runStage(EngineFixture.closed(1, 2));
            assertThat(r.errorsByClass).isEqualTo(Map.of("error_payload", 2L));
        }
    }
}
