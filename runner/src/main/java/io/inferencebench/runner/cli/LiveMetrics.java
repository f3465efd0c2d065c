package io.inferencebench.runner.cli;

import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.RequestExecution;
import io.inferencebench.runner.engine.StageObserver;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.engine.StageRecorder;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;

/** Live Prometheus metrics of the running benchmark, served on {@code --metrics-port}. */
final class LiveMetrics implements StageObserver, AutoCloseable {

    private static final double[] LATENCY_BOUNDS = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300
    };

    private final HTTPServer server;
    private final Counter requests;
    private final Counter outputTokens;
    private final Histogram ttft;
    private final Histogram latency;
    private final CounterDataPoint succeeded;
    private volatile LoadEngine.Live live;
    private volatile int stage = -1;

    private LiveMetrics(int port) throws IOException {
        PrometheusRegistry registry = new PrometheusRegistry();
        requests =
                Counter.builder()
                        .name("inferencebench_requests_total")
                        .help("Finished requests by outcome (ok or an error class)")
                        .labelNames("outcome")
                        .register(registry);
        succeeded = requests.labelValues("ok");
        outputTokens =
                Counter.builder()
                        .name("inferencebench_output_tokens_total")
                        .help("Output tokens of successful requests")
                        .register(registry);
        ttft =
                Histogram.builder()
                        .name("inferencebench_time_to_first_token_seconds")
                        .help("Time to first content token of successful requests")
                        .classicOnly()
                        .classicUpperBounds(LATENCY_BOUNDS)
                        .register(registry);
        latency =
                Histogram.builder()
                        .name("inferencebench_request_latency_seconds")
                        .help("End-to-end latency of successful requests")
                        .classicOnly()
                        .classicUpperBounds(LATENCY_BOUNDS)
                        .register(registry);
        GaugeWithCallback.builder()
                .name("inferencebench_in_flight_requests")
                .help("Requests sent and not yet finished")
                .callback(cb -> cb.call(live == null ? 0 : live.inFlight()))
                .register(registry);
        GaugeWithCallback.builder()
                .name("inferencebench_stage")
                .help("Index of the running stage (-1 before the first)")
                .callback(cb -> cb.call(stage))
                .register(registry);
        GaugeWithCallback.builder()
                .name("inferencebench_stage_requested_rate")
                .help(
                        "Requested rate of the running stage, req/s (0 when unbounded or closed loop)")
                .callback(
                        cb -> {
                            LoadEngine.Live l = live;
                            double rate =
                                    l == null || l.plan.closedLoop() ? 0 : l.plan.requestRate();
                            cb.call(Double.isInfinite(rate) ? 0 : rate);
                        })
                .register(registry);
        server = HTTPServer.builder().port(port).registry(registry).buildAndStart();
    }

    static LiveMetrics start(int port) {
        if (port < 0 || port > 65535) {
            throw new Main.UsageError("--metrics-port: must be within 0..65535, got " + port);
        }
        try {
            return new LiveMetrics(port);
        } catch (IOException e) {
            throw new Main.UsageError(
                    "--metrics-port: cannot listen on " + port + ": " + e.getMessage());
        }
    }

    int port() {
        return server.getPort();
    }

    @Override
    public void onStageStart(StagePlan plan, StageRecorder recorder, LoadEngine.Live l) {
        live = l;
        stage = plan.index();
    }

    @Override
    public void onFinished(RequestExecution e) {
        if (e.succeeded()) {
            succeeded.inc();
            outputTokens.inc(e.outputTokens());
            latency.observe(e.latencyNanos() / 1e9);
            if (e.contentEvents() > 0) {
                ttft.observe(e.ttftNanos() / 1e9);
            }
        } else {
            requests.labelValues(e.failure().wireName()).inc();
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
