package io.inferencebench.runner.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;

/** Events split across TCP reads, several events per read, over a real socket. */
class StreamFramingTest {

    @Test
    void eventsSplitMidLineAndBatchedAreCountedAndTimedAsEvents() throws Exception {
        ConcurrentLinkedQueue<long[]> serverInstants = new ConcurrentLinkedQueue<>();
        StubServer.Handler handler =
                (req, ex) -> {
                    long read = System.nanoTime();
                    ex.startSse();
                    // Event 1 arrives in four reads, 10 ms apart, split inside "data:" and inside
                    // the JSON; it only exists once its blank line arrives.
                    ex.chunk("da");
                    Thread.sleep(10);
                    ex.chunk("ta: {\"choices\":[{\"te");
                    Thread.sleep(10);
                    ex.chunk("xt\":\"a\"}]}\n");
                    Thread.sleep(10);
                    // Instants taken before the writes: the client may read (and stamp) a write
                    // before the server's own clock read after it.
                    long firstComplete = System.nanoTime();
                    ex.chunk("\n");
                    Thread.sleep(20);
                    // Events 2-4 and a comment in one read.
                    long batch = System.nanoTime();
                    ex.chunk(
                            "data: {\"choices\":[{\"text\":\"b\"}]}\n\n"
                                    + ": ping\n\n"
                                    + "data: {\"choices\":[{\"text\":\"c\"}]}\r\n\r\n"
                                    + "data: {\"choices\":[{\"text\":\"d\"}]}\n\n");
                    Thread.sleep(20);
                    // Recorded before the stream ends: once [DONE] is written the client may
                    // finish and read the queue before this thread runs again.
                    serverInstants.add(new long[] {read, firstComplete, batch});
                    // A usage event whose data spans two lines of one event, split across reads.
                    ex.chunk("data: {\"choices\":[],\n");
                    ex.chunk("data: \"usage\":{\"prompt_tokens\":4,\"completion_tokens\":4}}\n\n");
                    ex.chunk("data: [DONE]\n\n");
                    ex.endChunked();
                };
        try (StubServer server = new StubServer(handler);
                EngineFixture f = new EngineFixture(server.baseUrl(), 4, Duration.ofSeconds(10))) {
            StageResult r = f.engine.runStage(EngineFixture.closed(1, 3));
            assertThat(r.completed).isEqualTo(3);
            assertThat(r.failed).isZero();
            assertThat(r.outputTokenSource).isEqualTo("usage");
            assertThat(r.outputLen.mean()).isEqualTo(4);
            assertThat(r.itlMs.count()).isEqualTo(3 * 3);
            java.util.Iterator<long[]> written = serverInstants.iterator();
            for (RequestExecution e : f.finished) {
                long[] s = written.next();
                assertThat(e.contentEvents()).isEqualTo(4);
                // The first token is stamped when its event completed, after the server wrote its
                // last piece (same clock, same JVM), not when its first byte arrived.
                assertThat(e.contentInstant(0)).isGreaterThanOrEqualTo(s[1]);
                assertThat(e.ttftNanos() / 1e6).isGreaterThanOrEqualTo(30);
                // Events 2-4 arrived in one read: stamped after the server wrote that batch, and
                // together: the server's next bytes come 20 ms later, so events of a later read
                // would be stamped at least that far apart (10 ms leaves room for a preempted
                // parser on a loaded machine).
                assertThat(e.contentInstant(1)).isGreaterThanOrEqualTo(s[2]);
                assertThat((e.contentInstant(3) - e.contentInstant(1)) / 1e6).isLessThan(10.0);
            }
        }
    }
}
