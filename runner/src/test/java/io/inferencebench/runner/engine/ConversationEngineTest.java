package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.OpenAiCompletions;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import io.inferencebench.testkit.FreePorts;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Sessions at the edges: a cancel while sessions think stops them at once and nothing is sent after
 * it, in a closed loop and at a session rate; a server that refuses every first turn ends every
 * session after one request.
 */
class ConversationEngineTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** An engine over 4 sessions of 3 turns with {@code think} between turns. */
    private static LoadEngine engine(HttpTransport transport, Duration think) {
        return new LoadEngine(
                transport,
                EngineFixture.prompts(12, 2),
                null,
                new EngineSettings(
                        new OpenAiCompletions(),
                        new GenerationParams("stub-model", true, true, 0.0, null, null, null),
                        "/v1/completions",
                        Slo.NONE,
                        1000,
                        7,
                        TIMEOUT,
                        new Conversations(3, think, false),
                        null),
                StageObserver.NONE);
    }

    /** Runs {@code plan}, cancels once the server saw {@code requests}, returns the result. */
    private static StageResult cancelAfter(
            LoadEngine engine, StubServer server, StagePlan plan, int requests) throws Exception {
        CompletableFuture<StageResult> stage =
                CompletableFuture.supplyAsync(() -> engine.runStage(plan));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (server.requests() < requests) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            Thread.sleep(2);
        }
        // The first turns were answered at once (2 tokens, no delay): the users now think.
        Thread.sleep(200);
        long cancelled = System.nanoTime();
        engine.cancel();
        StageResult r = stage.get(10, TimeUnit.SECONDS);
        assertThat((System.nanoTime() - cancelled) / 1_000_000)
                .as("ms from the cancel to the result: no think time awaited")
                .isLessThan(1500);
        return r;
    }

    @Test
    void aCancelWhileUsersThinkEndsTheStageAtOnceAndSendsNothingAfter() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 0, true));
                HttpTransport transport =
                        new HttpTransport(server.baseUrl(), Map.of(), 2, 4096, TIMEOUT)) {
            LoadEngine engine = engine(transport, Duration.ofSeconds(3));
            StageResult r = cancelAfter(engine, server, EngineFixture.closed(2, 4), 2);
            int seen = server.requests();
            assertThat(r.partial).isTrue();
            assertThat(r.sent).isEqualTo(2);
            assertThat(r.conversation.sessionsStarted).isEqualTo(2);
            assertThat(r.conversation.sessionsCompleted).isZero();
            assertThat(r.conversation.sessionsCut).isEqualTo(2);
            // The users' timers fire after the stage: they send nothing.
            Thread.sleep(3500);
            assertThat(server.requests()).isEqualTo(seen);
        }
    }

    @Test
    void aCancelWhileSessionsAtARateThinkEndsTheStageAtOnceAndSendsNothingAfter() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 0, true));
                HttpTransport transport =
                        new HttpTransport(server.baseUrl(), Map.of(), 2, 4096, TIMEOUT)) {
            LoadEngine engine = engine(transport, Duration.ofSeconds(3));
            // Two sessions 100 ms apart, the next two a second later.
            StageResult r =
                    cancelAfter(engine, server, EngineFixture.open(1, 4, ArrivalKind.CONSTANT), 1);
            int seen = server.requests();
            assertThat(r.partial).isTrue();
            assertThat(r.conversation.sessionRate).isEqualTo(1.0);
            assertThat(r.conversation.sessionsStarted).isEqualTo(r.sent);
            assertThat(r.conversation.sessionsCut).isEqualTo(r.sent);
            Thread.sleep(3500);
            assertThat(server.requests()).isEqualTo(seen);
        }
    }

    @Test
    void aServerThatRefusesEveryFirstTurnEndsEverySessionAfterOneRequest() throws Exception {
        String nowhere = "http://127.0.0.1:" + FreePorts.claim();
        try (HttpTransport transport = new HttpTransport(nowhere, Map.of(), 2, 4096, TIMEOUT)) {
            LoadEngine engine = engine(transport, Duration.ofSeconds(3));
            long started = System.nanoTime();
            StageResult r = engine.runStage(EngineFixture.closed(2, 4));
            assertThat(System.nanoTime() - started).isLessThan(TimeUnit.SECONDS.toNanos(10));
            assertThat(r.partial).isFalse();
            assertThat(r.sent).isEqualTo(4);
            assertThat(r.failed).isEqualTo(4);
            assertThat(r.conversation.sessionsStarted).isEqualTo(4);
            assertThat(r.conversation.sessionsAbandoned).isEqualTo(4);
            assertThat(r.conversation.turns.get(1).sent()).isZero();
        }
    }
}
