package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.OpenAiCompletions;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A stage's keep-alive connections are open before its first request is due. */
class PreconnectTest {

    @Test
    void connectionsForTheFirst100MsAreOpenWhenTheStageStarts() throws Exception {
        AtomicInteger idleAtStart = new AtomicInteger(-1);
        try (StubServer server = new StubServer(new OpenAiStub(0, 1, true));
                HttpTransport transport =
                        new HttpTransport(
                                server.baseUrl(), Map.of(), 2, 4096, Duration.ofSeconds(10))) {
            LoadEngine engine =
                    new LoadEngine(
                            transport,
                            EngineFixture.prompts(4, 4),
                            null,
                            new EngineSettings(
                                    new OpenAiCompletions(),
                                    new GenerationParams("m", true, true, 0.0, null, null, null),
                                    "/v1/completions",
                                    Slo.NONE,
                                    1000,
                                    1,
                                    Duration.ofSeconds(10)),
                            new StageObserver() {
                                @Override
                                public void onStageStart(
                                        StagePlan plan,
                                        StageRecorder recorder,
                                        LoadEngine.Live live) {
                                    idleAtStart.set(transport.idleConnections());
                                }
                            });
            StagePlan plan = EngineFixture.open(200, 40, ArrivalKind.CONSTANT);
            // 200 req/s: 20 requests in the first 100 ms, plus 2, over 2 loops.
            assertThat(engine.connectionsToOpen(plan)).isEqualTo(11);
            assertThat(transport.idleConnections()).isZero();
            StageResult r = engine.runStage(plan);
            assertThat(r.completed).isEqualTo(40);
            assertThat(idleAtStart.get())
                    .as("idle connections before the first request")
                    .isEqualTo(22);
        }
    }

    @Test
    void prepareStageOpensThemAheadAndOnlyOnce() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, Duration.ofSeconds(10))) {
            StagePlan plan = EngineFixture.closed(6, 30);
            f.engine.prepareStage(plan);
            assertThat(f.transport.idleConnections()).isEqualTo(6);
            f.engine.prepareStage(plan);
            assertThat(f.transport.idleConnections()).isEqualTo(6);
            assertThat(f.engine.runStage(plan).completed).isEqualTo(30);
            assertThat(server.connections()).as("the closed loop reuses them").isEqualTo(6);
        }
    }

    @Test
    void aClosedLoopStageOpensItsConcurrencyAndAStageNeverMoreThanItsPrompts() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, Duration.ofSeconds(10))) {
            assertThat(f.engine.connectionsToOpen(EngineFixture.closed(7, 100))).isEqualTo(4);
            assertThat(f.engine.connectionsToOpen(EngineFixture.open(5000, 6, ArrivalKind.POISSON)))
                    .isEqualTo(3);
            assertThat(
                            f.engine.connectionsToOpen(
                                    EngineFixture.open(
                                            Double.POSITIVE_INFINITY,
                                            100_000,
                                            ArrivalKind.POISSON)))
                    .isEqualTo(512);
        }
    }
}
