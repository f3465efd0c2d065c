package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link LoadEngine#cancel()}: dispatching stops, requests in flight are aborted and counted as
 * cancelled (not failed), and the stage returns its partial result promptly.
 */
class CancelTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** Runs the stage on another thread, cancels after {@code afterMs}, returns the result. */
    private static Timed cancelDuring(EngineFixture f, StagePlan plan, long afterMs)
            throws Exception {
        CompletableFuture<StageResult> stage =
                CompletableFuture.supplyAsync(() -> f.engine.runStage(plan));
        Thread.sleep(afterMs);
        long cancelled = System.nanoTime();
        f.engine.cancel();
        StageResult r = stage.get(10, TimeUnit.SECONDS);
        return new Timed(r, (System.nanoTime() - cancelled) / 1_000_000);
    }

    record Timed(StageResult result, long returnedAfterCancelMs) {}

    @Test
    void openLoopStopsSendingAndAbortsSlowStreams() throws Exception {
        // 20 tokens 200 ms apart: every request would take 4 s.
        try (StubServer server = new StubServer(new OpenAiStub(0, 200, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 20, TIMEOUT)) {
            Timed t = cancelDuring(f, EngineFixture.open(20, 200, ArrivalKind.CONSTANT), 500);
            StageResult r = t.result();
            assertThat(t.returnedAfterCancelMs()).as("ms from cancel to result").isLessThan(1000);
            assertThat(r.partial).isTrue();
            // Due at 0, 50, ..., 500 ms: about 10 sent before the cancel, none after it.
            assertThat(r.sent).isBetween(5L, 13L);
            assertThat(r.completed).isZero();
            assertThat(r.failed).as("cancelled requests are not failures").isZero();
            assertThat(r.errorsByClass.values()).allMatch(v -> v == 0);
            assertThat(r.cancelledRequests).isGreaterThanOrEqualTo(r.sent);
            assertThat(r.latencyMs.count()).isZero();
            assertThat(r.scheduleLagMs.count()).isEqualTo(r.sent);
            assertThat(f.finished).as("observers see no cancelled request").isEmpty();
        }
    }

    @Test
    void requestsFinishedBeforeTheCancelCountNormally() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(2, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, TIMEOUT)) {
            Timed t = cancelDuring(f, EngineFixture.open(50, 1000, ArrivalKind.CONSTANT), 600);
            StageResult r = t.result();
            assertThat(t.returnedAfterCancelMs()).isLessThan(1000);
            assertThat(r.partial).isTrue();
            assertThat(r.completed).isBetween(15L, 32L);
            assertThat(r.failed).isZero();
            assertThat(r.sent).isLessThan(1000);
            assertThat(r.completed + r.cancelledRequests).isGreaterThanOrEqualTo(r.sent);
            assertThat(r.latencyMs.count()).isEqualTo(r.completed);
            assertThat(f.finished).hasSize((int) r.completed);
        }
    }

    @Test
    void closedLoopAbortsEveryRequestInFlight() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 200, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 20, TIMEOUT)) {
            Timed t = cancelDuring(f, EngineFixture.closed(4, 1000), 400);
            StageResult r = t.result();
            assertThat(t.returnedAfterCancelMs()).isLessThan(1000);
            assertThat(r.partial).isTrue();
            assertThat(r.sent).isEqualTo(4);
            assertThat(r.cancelledRequests).isEqualTo(4);
            assertThat(r.completed).isZero();
            assertThat(r.failed).isZero();
        }
    }

    @Test
    void aCancelledEngineSendsNothingInLaterStages() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, TIMEOUT)) {
            f.engine.cancel();
            long start = System.nanoTime();
            StageResult r = f.engine.runStage(EngineFixture.open(100, 50, ArrivalKind.CONSTANT));
            assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(1000);
            assertThat(f.engine.isCancelled()).isTrue();
            assertThat(r.partial).isTrue();
            assertThat(r.sent).isZero();
            assertThat(r.completed + r.failed).isZero();
            assertThat(server.requests()).isZero();
        }
    }

    @Test
    void aStageWithoutCancelIsNotPartial() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, TIMEOUT)) {
            StageResult r = f.engine.runStage(EngineFixture.open(200, 20, ArrivalKind.CONSTANT));
            assertThat(r.partial).isFalse();
            assertThat(r.cancelledRequests).isZero();
            assertThat(r.completed).isEqualTo(20);
        }
    }
}
