package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A stage's keep-alive connections are open before its first request is due. */
class PreconnectTest {

    @Test
    void connectionsForTheFirst100MsAreOpenBeforeTheFirstRequest() throws Exception {
        AtomicInteger connectionsAtFirstRequest = new AtomicInteger(-1);
        OpenAiStub stub = new OpenAiStub(0, 1, true);
        StubServer[] self = new StubServer[1];
        try (StubServer server =
                        new StubServer(
                                (req, ex) -> {
                                    connectionsAtFirstRequest.compareAndSet(
                                            -1, self[0].connections());
                                    stub.handle(req, ex);
                                });
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, Duration.ofSeconds(10))) {
            self[0] = server;
            StagePlan plan = EngineFixture.open(200, 40, ArrivalKind.CONSTANT);
            // 200 req/s: 20 requests in the first 100 ms, plus 2, over 2 loops.
            assertThat(f.engine.connectionsToOpen(plan)).isEqualTo(11);
            StageResult r = f.engine.runStage(plan);
            assertThat(r.completed).isEqualTo(40);
            assertThat(connectionsAtFirstRequest.get()).isGreaterThanOrEqualTo(22);
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
