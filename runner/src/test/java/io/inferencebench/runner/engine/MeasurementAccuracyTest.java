package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.backend.OpenAiChat;
import io.inferencebench.runner.backend.OpenAiCompletions;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.OpenAiStub.Written;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** TTFT, ITL and latency measured against a server with exact injected delays. */
class MeasurementAccuracyTest {

    @BeforeAll
    static void warmJit() throws Exception {
        JitWarmup.ensure();
    }

    private static final double TTFT = 40;
    private static final double ITL = 8;
    private static final int TOKENS = 10;
    private static final double LATENCY = TTFT + ITL * (TOKENS - 1);

    /** A fixture against {@code server} with the 1000-sample cap these tests read back in full. */
    private static EngineFixture fixture(StubServer server, Protocol protocol, boolean stream) {
        return new EngineFixture(
                server.baseUrl(), protocol, stream, TOKENS, Duration.ofSeconds(10), Slo.NONE, 1000);
    }

    /** After a warm-up, 12 requests one at a time; asserts all 12 completed. */
    private static StageResult warmThenTwelveInARow(EngineFixture f) throws Exception {
        f.engine.warmUp(4, 2);
        StageResult r = f.engine.runStage(EngineFixture.closed(1, 12));
        assertThat(r.completed).isEqualTo(12);
        return r;
    }

    @Test
    void streamedCompletionsMatchInjectedDelaysWithinOneMillisecond() throws Exception {
        OpenAiStub stub = new OpenAiStub(TTFT, ITL, true);
        try (StubServer server = new StubServer(stub);
                EngineFixture f =
                        new EngineFixture(server.baseUrl(), TOKENS, Duration.ofSeconds(10))) {
            StageResult r = warmThenTwelveInARow(f);
            assertThat(r.failed).isZero();
            assertAccurate(r, f.finished, stub);
            assertThat(r.outputTokenSource).isEqualTo("usage");
            assertThat(r.inputTokenSource).isEqualTo("usage");
            assertThat(r.outputLen.min()).isEqualTo(TOKENS);
            assertThat(r.outputLen.max()).isEqualTo(TOKENS);
            assertThat(r.totalOutputTokens).isEqualTo(12L * TOKENS);
            assertThat(stub.bodies.peek().path("stream_options").path("include_usage").asBoolean())
                    .isTrue();
            assertThat(stub.bodies.peek().path("ignore_eos").asBoolean()).isTrue();
            assertThat(stub.bodies.peek().path("max_tokens").asInt()).isEqualTo(TOKENS);
        }
    }

    @Test
    void concurrentStreamsReusePooledConnections() throws Exception {
        OpenAiStub stub = new OpenAiStub(TTFT, ITL, true);
        try (StubServer server = new StubServer(stub);
                EngineFixture f =
                        new EngineFixture(server.baseUrl(), TOKENS, Duration.ofSeconds(10))) {
            StageResult r = f.engine.runStage(EngineFixture.closed(4, 32));
            assertThat(r.completed).isEqualTo(32);
            assertThat(server.requests()).isEqualTo(32);
            assertThat(server.connections()).isLessThanOrEqualTo(4);
            assertThat(r.inFlightPeak).isEqualTo(4);
            List<Written> written = new ArrayList<>(stub.written);
            assertThat(r.ttftMs.min()).isBetween(TTFT, serverMin(written, Written::ttftMs) + 1);
        }
    }

    @Test
    void withoutUsageTheOutputTokensAreTheContentEvents() throws Exception {
        OpenAiStub stub = new OpenAiStub(TTFT, ITL, false);
        try (StubServer server = new StubServer(stub);
                EngineFixture f =
                        new EngineFixture(server.baseUrl(), TOKENS, Duration.ofSeconds(10))) {
            StageResult r = warmThenTwelveInARow(f);
            assertAccurate(r, f.finished, stub);
            assertThat(r.outputTokenSource).isEqualTo("content_events");
            assertThat(r.inputTokenSource).isEqualTo("approximation");
            assertThat(r.outputLen.mean()).isEqualTo(TOKENS);
            assertThat(r.inputLen.mean()).isEqualTo(4);
        }
    }

    @Test
    void chatStreamsIgnoreTheRoleOnlyFirstChunk() throws Exception {
        OpenAiStub stub = new OpenAiStub(TTFT, ITL, true);
        try (StubServer server = new StubServer(stub);
                EngineFixture f = fixture(server, new OpenAiChat(), true)) {
            StageResult r = warmThenTwelveInARow(f);
            assertAccurate(r, f.finished, stub);
        }
    }

    @Test
    void nonStreamedResponsesHaveALatencyButNoTtftItlOrTpot() throws Exception {
        OpenAiStub stub = new OpenAiStub(TTFT, ITL, true);
        try (StubServer server = new StubServer(stub);
                EngineFixture f = fixture(server, new OpenAiCompletions(), false)) {
            StageResult r = warmThenTwelveInARow(f);
            List<Written> written = new ArrayList<>(stub.written);
            written = written.subList(written.size() - 12, written.size());
            double[] error = new double[12];
            for (int i = 0; i < 12; i++) {
                RequestExecution c = f.finished.get(i);
                Written s = written.get(i);
                error[i] = (c.latencyNanos() - (s.end() - s.requestRead())) / 1e6;
            }
            assertThat(median(error)).isBetween(-1.0, 1.0);
            assertThat(r.latencyMs.min())
                    .isBetween(LATENCY, serverMin(written, Written::latencyMs) + 1);
            // No first-token instant exists: no TTFT, ITL or TPOT, rather than TTFT = latency.
            assertThat(r.ttftMs.count()).isZero();
            assertThat(r.itlMs.count()).isZero();
            assertThat(r.tpotMs.count()).isZero();
            assertThat(r.nonStreamedRequests).isEqualTo(12);
            assertThat(r.outputLen.mean()).isEqualTo(TOKENS);
        }
    }

    @Test
    void derivedMetricsFollowTheDefinitions() throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(TTFT, ITL, true));
                EngineFixture f =
                        new EngineFixture(
                                server.baseUrl(),
                                new OpenAiCompletions(),
                                true,
                                TOKENS,
                                Duration.ofSeconds(10),
                                new Slo(TTFT + 500, null, LATENCY + 500, 1.0),
                                1000)) {
            f.engine.warmUp(4, 2);
            StageResult r = f.engine.runStage(EngineFixture.closed(1, 3));
            double latency = r.latencyMs.mean();
            double ttft = r.ttftMs.mean();
            assertThat(r.tpotMs.mean()).isCloseTo((latency - ttft) / (TOKENS - 1), within(1e-3));
            assertThat(r.perOutputTokenLatencyMs.mean()).isCloseTo(latency / TOKENS, within(1e-3));
            int in = (int) r.inputLen.mean();
            assertThat(r.perTokenLatencySec.mean())
                    .isCloseTo(latency / 1000.0 / (in + TOKENS), within(1e-6));
            assertThat(r.goodputRequests).isEqualTo(3);
            assertThat(r.sloTtftMs).isEqualTo(TTFT + 500);
        }
    }

    /**
     * The loaded 2-core test machine can deschedule the stub's or the client's threads for
     * milliseconds, so the server's real write instants (same JVM, same nanoTime clock) are the
     * reference: with one request at a time, client and server records pair up in order.
     */
    private static void assertAccurate(
            StageResult r, List<RequestExecution> client, OpenAiStub stub) {
        List<Written> server = new ArrayList<>(stub.written);
        server = server.subList(server.size() - client.size(), server.size());
        double[] ttftError = new double[client.size()];
        List<Double> itlErrors = new ArrayList<>();
        double[] endError = new double[client.size()];
        for (int i = 0; i < client.size(); i++) {
            RequestExecution c = client.get(i);
            Written s = server.get(i);
            assertThat(c.contentEvents()).isEqualTo(s.tokenWrites().length);
            ttftError[i] = (c.ttftNanos() - (s.tokenWrites()[0] - s.requestRead())) / 1e6;
            for (int k = 1; k < c.contentEvents(); k++) {
                long clientGap = c.contentInstant(k) - c.contentInstant(k - 1);
                long serverGap = s.tokenWrites()[k] - s.tokenWrites()[k - 1];
                itlErrors.add((clientGap - serverGap) / 1e6);
            }
            endError[i] = (c.endNanos - c.sendNanos - (s.end() - s.requestRead())) / 1e6;
        }
        // Within 1 ms of what the server really did (the server stamps after its write returns,
        // so a measurement can come out slightly below the server's own figure).
        assertThat(median(ttftError)).isBetween(-1.0, 1.0);
        assertThat(median(endError)).isBetween(-1.0, 1.0);
        assertThat(median(itlErrors.stream().mapToDouble(Double::doubleValue).toArray()))
                .isBetween(-1.0, 1.0);
        // The recorded statistics against the same server records: the server's own lateness
        // under load only adds to the injected delays, so those are lower bounds, and the best
        // and the typical request are within 1 ms of what the server did.
        assertThat(r.ttftMs.min()).isBetween(TTFT, serverMin(server, Written::ttftMs) + 1);
        assertThat(r.latencyMs.min()).isBetween(LATENCY, serverMin(server, Written::latencyMs) + 1);
        double[] serverGaps = new double[server.size() * (TOKENS - 1)];
        double[] serverTpot = new double[server.size()];
        for (int i = 0; i < server.size(); i++) {
            long[] writes = server.get(i).tokenWrites();
            for (int k = 1; k < writes.length; k++) {
                serverGaps[i * (TOKENS - 1) + k - 1] = (writes[k] - writes[k - 1]) / 1e6;
            }
            serverTpot[i] = (writes[writes.length - 1] - writes[0]) / 1e6 / (TOKENS - 1);
        }
        assertThat(r.itlMs.median()).isCloseTo(median(serverGaps), within(1.0));
        assertThat(r.tpotMs.median()).isCloseTo(median(serverTpot), within(1.0));
        assertThat(r.itlMs.count()).isEqualTo(r.completed * (TOKENS - 1));
    }

    /** The smallest of a per-request figure as the server itself timed it, ms. */
    private static double serverMin(List<Written> server, ToDoubleFunction<Written> figure) {
        return server.stream().mapToDouble(figure).min().orElseThrow();
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
