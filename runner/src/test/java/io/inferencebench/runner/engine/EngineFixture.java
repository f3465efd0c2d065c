package io.inferencebench.runner.engine;

import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.OpenAiCompletions;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.http.HttpTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Builds a transport and engine against a test server. */
final class EngineFixture implements AutoCloseable {
    final HttpTransport transport;
    final LoadEngine engine;

    /** Every finished measured request (warm-ups excluded), in completion order. */
    final List<RequestExecution> finished =
            java.util.Collections.synchronizedList(new ArrayList<>());

    EngineFixture(String baseUrl, int maxTokens, Duration timeout) {
        this(baseUrl, new OpenAiCompletions(), true, maxTokens, timeout, Slo.NONE, 100_000);
    }

    EngineFixture(
            String baseUrl,
            Protocol protocol,
            boolean stream,
            int maxTokens,
            Duration timeout,
            Slo slo,
            int sampleCap) {
        transport = new HttpTransport(baseUrl, Map.of(), 2, 4096, timeout);
        engine =
                new LoadEngine(
                        transport,
                        prompts(8, maxTokens),
                        null,
                        new EngineSettings(
                                protocol,
                                new GenerationParams(
                                        "stub-model", stream, true, 0.0, null, null, null),
                                protocol.defaultPath(),
                                slo,
                                sampleCap,
                                42,
                                timeout),
                        new StageObserver() {
                            @Override
                            public void onFinished(RequestExecution execution) {
                                finished.add(execution);
                            }
                        });
    }

    static List<Prompt> prompts(int n, int maxTokens) {
        List<Prompt> prompts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            prompts.add(
                    new Prompt(
                            "hello world number " + i, null, null, 4, maxTokens, "approximation"));
        }
        return prompts;
    }

    static StagePlan closed(int concurrency, int numPrompts) {
        return new StagePlan(
                0,
                Double.POSITIVE_INFINITY,
                concurrency,
                numPrompts,
                null,
                null,
                ArrivalKind.POISSON,
                1,
                null);
    }

    static StagePlan open(double rate, int numPrompts, ArrivalKind arrival) {
        return new StagePlan(0, rate, null, numPrompts, null, null, arrival, 1, null);
    }

    @Override
    public void close() {
        transport.close();
    }
}
