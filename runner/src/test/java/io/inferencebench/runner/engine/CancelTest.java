package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * {@link LoadEngine#cancel()}: dispatching stops, requests in flight are aborted and counted as
 * cancelled (not failed), and the stage returns its partial result promptly.
 */
class CancelTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /**
     * Runs the stage on another thread and cancels it once {@code progressed} says the engine got
     * far enough (a count the server or the observers saw, never a sleep: a loaded machine may take
     * longer than any fixed delay to start the stage). Returns the result, the epoch instant of the
     * cancel and how long the result took after it.
     */
    private static Timed cancelWhen(EngineFixture f, StagePlan plan, BooleanSupplier progressed)
            throws Exception {
        CompletableFuture<StageResult> stage =
                CompletableFuture.supplyAsync(() -> f.engine.runStage(plan));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!progressed.getAsBoolean()) {
            assertThat(System.nanoTime())
                    .as("the stage made progress within 20 s")
                    .isLessThan(deadline);
            assertThat(stage.isDone()).as("the stage ended before the cancel").isFalse();
            Thread.sleep(2);
        }
        Instant now = Instant.now();
        long cancelledEpochNanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        long cancelled = System.nanoTime();
        f.engine.cancel();
        StageResult r = stage.get(10, TimeUnit.SECONDS);
        return new Timed(r, cancelledEpochNanos, (System.nanoTime() - cancelled) / 1_000_000);
    }

    record Timed(StageResult result, long cancelledEpochNanos, long returnedAfterCancelMs) {}

    @Test
    void openLoopStopsSendingAndAbortsSlowStreams() throws Exception {
        // 20 tokens 200 ms apart: every request would take 4 s.
        try (StubServer server = new StubServer(new OpenAiStub(0, 200, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 20, TIMEOUT)) {
            Timed t =
                    cancelWhen(
                            f,
                            EngineFixture.open(20, 200, ArrivalKind.CONSTANT),
                            () -> server.requests() >= 5);
            StageResult r = t.result();
            // The streams would last 4 s: a result well before that means they were aborted,
            // not awaited.
            assertThat(t.returnedAfterCancelMs()).as("ms from cancel to result").isLessThan(3000);
            assertThat(r.partial).isTrue();
            assertThat(r.sent).isGreaterThanOrEqualTo(5);
            // Due every 50 ms from the first dispatch: nothing due after the cancel was sent.
            long dueBeforeCancel =
                    1 + (t.cancelledEpochNanos() - r.firstDispatchEpochNanos) / 50_000_000L;
            assertThat(r.sent)
                    .as("sent, at most what was due before the cancel")
                    .isLessThanOrEqualTo(dueBeforeCancel + 1);
            assertThat(r.lastDispatchEpochNanos)
                    .isLessThanOrEqualTo(t.cancelledEpochNanos() + 5_000_000L);
            assertThat(r.completed).isZero();
            assertThat(r.failed).as("cancelled requests are not failures").isZero();
            assertThat(r.errorsByClass.values()).allMatch(v -> v == 0);
            assertThat(r.cancelledRequests).isGreaterThanOrEqualTo(r.sent);
            assertThat(r.latencyMs.count()).isZero();
            assertThat(r.scheduleLagMs.count()).isEqualTo(r.sent);
            assertThat(f.finished).as("observers see no cancelled request").isEmpty();
            // The server saw what the engine says it sent, and nothing more arrives later (at 20
            // req/s, 300 ms would bring about 6 more if dispatching had gone on).
            Thread.sleep(300);
            assertThat((long) server.requests()).isEqualTo(r.sent);
        }
    }

    @Test
    void requestsFinishedBeforeTheCancelCountNormally() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(2, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, TIMEOUT)) {
            Timed t =
                    cancelWhen(
                            f,
                            EngineFixture.open(50, 1000, ArrivalKind.CONSTANT),
                            () -> f.finished.size() >= 15);
            StageResult r = t.result();
            assertThat(r.partial).isTrue();
            // Every request the observers saw finish before the cancel is counted as completed.
            assertThat(r.completed).isGreaterThanOrEqualTo(15);
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
            Timed t = cancelWhen(f, EngineFixture.closed(4, 1000), () -> server.requests() >= 4);
            StageResult r = t.result();
            // Each stream would last 4 s.
            assertThat(t.returnedAfterCancelMs()).isLessThan(3000);
            assertThat(r.partial).isTrue();
            assertThat(r.sent).isEqualTo(4);
            assertThat(r.cancelledRequests).isEqualTo(4);
            assertThat(r.completed).isZero();
            assertThat(r.failed).isZero();
        }
    }

    @Test
    void aConcurrencyFarAboveThePromptsEndsWithTheLastRequest() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, TIMEOUT)) {
            long start = System.nanoTime();
            CompletableFuture<StageResult> stage =
                    CompletableFuture.supplyAsync(
                            () -> f.engine.runStage(EngineFixture.closed(Integer.MAX_VALUE, 5)));
            // Five requests of a few ms: the stage is over in well under a second unless the
            // engine goes on with workers that have nothing left to send (it did, for minutes).
            StageResult r = stage.get(20, TimeUnit.SECONDS);
            long millis = (System.nanoTime() - start) / 1_000_000;
            System.out.printf("concurrency 2^31-1, 5 prompts: %d ms%n", millis);
            assertThat(r.partial).isFalse();
            assertThat(r.sent).isEqualTo(5);
            assertThat(r.completed).isEqualTo(5);
            assertThat(r.inFlightPeak).isLessThanOrEqualTo(5);
            assertThat(server.requests()).isEqualTo(5);
        }
    }

    @Test
    void aCancelStopsAClosedLoopOfHugeConcurrencyAtOnce() throws Exception {
        // 20 tokens 200 ms apart: every request would take 4 s.
        try (StubServer server = new StubServer(new OpenAiStub(0, 200, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 20, TIMEOUT)) {
            Timed t =
                    cancelWhen(
                            f,
                            EngineFixture.closed(Integer.MAX_VALUE, 40),
                            () -> server.requests() >= 5);
            StageResult r = t.result();
            assertThat(t.returnedAfterCancelMs()).isLessThan(3000);
            assertThat(r.partial).isTrue();
            assertThat(r.sent).isBetween(5L, 40L);
            assertThat(r.cancelledRequests).isEqualTo(r.sent);
            assertThat(r.failed).isZero();
        }
    }

    @Test
    void aCancelledEngineSendsNothingInLaterStages() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 1, true));
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, TIMEOUT)) {
            f.engine.cancel();
            long start = System.nanoTime();
            StageResult r = f.engine.runStage(EngineFixture.open(1, 50, ArrivalKind.CONSTANT));
            // The schedule would take 49 s; a cancelled engine does not wait it out.
            assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(10_000);
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
