package io.inferencebench.runner.engine;

import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.time.Duration;

/**
 * Runs a few thousand zero-delay requests once per JVM so timing tests measure compiled code, as a
 * real benchmark does after its first second, not the interpreter.
 */
final class JitWarmup {
    private static boolean done;

    private JitWarmup() {}

    static synchronized void ensure() throws Exception {
        if (done) {
            return;
        }
        try (StubServer fast = new StubServer(new OpenAiStub(0, 0, true));
                EngineFixture f = new EngineFixture(fast.baseUrl(), 4, Duration.ofSeconds(10))) {
            f.engine.runStage(EngineFixture.closed(4, 4000));
        }
        try (StubServer fast = new StubServer(new OpenAiStub(0, 0, true));
                EngineFixture f =
                        new EngineFixture(
                                fast.baseUrl(),
                                new io.inferencebench.runner.backend.OpenAiChat(),
                                true,
                                4,
                                Duration.ofSeconds(10),
                                Slo.NONE,
                                1000)) {
            f.engine.runStage(EngineFixture.closed(4, 2000));
        }
        done = true;
    }
}
