package io.inferencebench.operator;

import io.inferencebench.operator.metrics.ServerMetricsCheckpointTest;
import io.inferencebench.profile.lpg.RunnerCpu;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.WindowStatistics;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Stage results and server metrics of a large run, made the way runners and the scraper make them:
 * per runner, every request's latencies recorded into the runner's recorders (exact samples up to
 * the cap, so the parts' JSON is the size real parts are), and per stage a window of real
 * vLLM-shaped pages from two replicas, summarised by {@link WindowStatistics}.
 */
final class LargeRunFixture {

    static final ServerMetricCatalog VLLM = ServerMetricCatalog.forBackend("vllm");

    private LargeRunFixture() {}

    /** One runner's result of one stage: {@code requests} requests at {@code rateShare} req/s. */
    static StageResult part(int stage, int runner, int requests, double rateShare, long seed) {
        Random random = new Random(seed * 1_000 + runner);
        StageResult r = new StageResult();
        r.stageIndex = stage - 1;
        r.requestedRate = rateShare;
        r.numPromptsRequested = requests;
        r.sent = requests;
        long start = 1_764_000_000_000_000_000L + stage * 120_000_000_000L;
        r.firstDispatchEpochNanos = start;
        r.lastDispatchEpochNanos = start + (long) ((requests - 1) / rateShare * 1e9);
        r.lastCompletionEpochNanos = r.lastDispatchEpochNanos + 2_000_000_000L;
        r.outputTokenSource = "usage";
        r.inputTokenSource = "usage";
        for (int i = 0; i < requests; i++) {
            if (random.nextInt(200) == 0) {
                r.countFailure("http_5xx");
                continue;
            }
            r.completed++;
            int in = 200 + random.nextInt(800);
            int out = 50 + random.nextInt(200);
            double ttft = 20 + 200 * Math.exp(random.nextGaussian() * 0.5);
            double itl = 8 + 4 * Math.abs(random.nextGaussian());
            double latency = ttft + itl * (out - 1);
            r.totalInputTokens += in;
            r.totalOutputTokens += out;
            r.ttftMs.record(ttft);
            r.latencyMs.record(latency);
            r.tpotMs.record((latency - ttft) / (out - 1));
            for (int t = 0; t < 3; t++) {
                r.itlMs.record(itl + random.nextGaussian());
            }
            r.perTokenLatencySec.record(latency / 1000 / (in + out));
            r.perOutputTokenLatencyMs.record(latency / out);
            r.inputLen.record(in);
            r.outputLen.record(out);
            r.scheduleLagMs.record(Math.abs(random.nextGaussian()) * 0.3);
        }
        r.inFlightPeak = 10 + random.nextInt(20);
        RunnerCpu cpu = new RunnerCpu();
        cpu.runner = runner;
        cpu.cpuSeconds = 0.4;
        cpu.wallSeconds = requests / rateShare;
        cpu.availableCpus = 1;
        cpu.runQueueWaitSeconds = 0.01;
        r.runnerCpu = cpu;
        return r;
    }

    /** A stage window of two replicas scraped every 5 s for {@code seconds}. */
    static ServerMetricsReport serverMetrics(int stage, int seconds) {
        Random random = new Random(stage);
        List<Scrape> scrapes = new ArrayList<>();
        int rounds = seconds / 5 + 1;
        for (int i = 0; i < rounds; i++) {
            for (String replica : List.of("vllm-0-7f9c8d6b5-x2k4q", "vllm-1-7f9c8d6b5-p9z3m")) {
                scrapes.add(
                        Scrape.success(
                                replica,
                                1_000L + i * 5_000L,
                                VLLM.trim(ServerMetricsCheckpointTest.vllmPage(i, random))));
            }
        }
        return WindowStatistics.compute(VLLM, scrapes, 0, 1_000L + rounds * 5_000L, rounds * 2);
    }
}
