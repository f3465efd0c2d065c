package io.inferencebench.runner.engine;

import io.inferencebench.runner.backend.GenerationParams;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.http.HttpTransport;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the whole client path — dispatcher, event loops, HTTP client, SSE parsing, recording —
 * against a throw-away streaming server on loopback before the first stage.
 *
 * <p>Why: a fresh JVM loads hundreds of classes and interprets the request path for its first
 * requests; peers' and our own measurements showed the first requests of a short stage lagging
 * their schedule by 100+ ms, which alone decides p99 at low rates. Warming against a local server
 * costs about a second and sends nothing to the target.
 */
public final class SelfWarmup {

    private SelfWarmup() {}

    /** Returns the number of warm-up exchanges completed. */
    public static long run(Protocol protocol, GenerationParams params, int loops, Duration budget) {
        Vertx vertx = Vertx.vertx();
        try {
            HttpServer server =
                    vertx.createHttpServer()
                            .requestHandler(
                                    req ->
                                            req.body()
                                                    .onSuccess(
                                                            body ->
                                                                    respond(
                                                                            req.response(),
                                                                            protocol.name(),
                                                                            params.stream())));
            int port =
                    server.listen(0, "127.0.0.1")
                            .toCompletionStage()
                            .toCompletableFuture()
                            .get(5, TimeUnit.SECONDS)
                            .actualPort();
            long done = 0;
            long deadline = System.nanoTime() + budget.toNanos();
            try (HttpTransport transport =
                    new HttpTransport(
                            "http://127.0.0.1:" + port,
                            Map.of(),
                            loops,
                            256,
                            Duration.ofSeconds(5))) {
                List<Prompt> prompts =
                        List.of(
                                new Prompt("warm up", new int[] {1, 2, 3}, null, 3, 8, "token_ids"),
                                new Prompt(
                                        "warm up the client path",
                                        null,
                                        null,
                                        5,
                                        8,
                                        "approximation"));
                LoadEngine engine =
                        new LoadEngine(
                                transport,
                                protocol,
                                params,
                                protocol.defaultPath(),
                                prompts,
                                null,
                                new Slo(1e9, 1e9, 1e9, 0),
                                1000,
                                1,
                                Duration.ofSeconds(5),
                                StageObserver.NONE);
                engine.setCollectBeforeStage(false);
                // Bounded by time, not count: on a loaded machine a fixed count can take many
                // seconds.
                while (System.nanoTime() < deadline - 50_000_000L) {
                    long remaining = deadline - System.nanoTime();
                    done +=
                            engine.runStage(
                                            new StagePlan(
                                                    0,
                                                    Double.POSITIVE_INFINITY,
                                                    8,
                                                    2000,
                                                    Duration.ofNanos(remaining / 2),
                                                    null,
                                                    ArrivalKind.CONSTANT,
                                                    1))
                                    .completed;
                    remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        break;
                    }
                    done +=
                            engine.runStage(
                                            new StagePlan(
                                                    1,
                                                    2000,
                                                    null,
                                                    1000,
                                                    Duration.ofNanos(remaining),
                                                    64,
                                                    ArrivalKind.POISSON,
                                                    1))
                                    .completed;
                }
            }
            server.close();
            return done;
        } catch (Exception e) {
            // Warming is best effort: the benchmark itself is unaffected if it fails.
            return 0;
        } finally {
            vertx.close();
        }
    }

    private static void respond(HttpServerResponse response, String protocol, boolean stream) {
        int tokens = 8;
        if (!stream) {
            String body =
                    switch (protocol) {
                        case "openai-chat" ->
                                "{\"choices\":[{\"message\":{\"content\":\"w w w w w w w w\"}}],"
                                        + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":8}}";
                        case "tgi-generate" ->
                                "{\"generated_text\":\"w w w w w w w w\",\"details\":{\"generated_tokens\":8}}";
                        default ->
                                "{\"choices\":[{\"text\":\"w w w w w w w w\"}],"
                                        + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":8}}";
                    };
            response.putHeader("content-type", "application/json").end(body);
            return;
        }
        response.setChunked(true).putHeader("content-type", "text/event-stream");
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < tokens; i++) {
            String event =
                    switch (protocol) {
                        case "openai-chat" ->
                                "data: {\"id\":\"w\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" w\"},"
                                        + "\"finish_reason\":null}],\"usage\":null}\n\n";
                        case "tgi-generate" ->
                                "data:{\"index\":"
                                        + i
                                        + ",\"token\":{\"id\":5,\"text\":\" w\",\"special\":false},"
                                        + "\"generated_text\":null,\"details\":null}\n\n";
                        default ->
                                "data: {\"id\":\"w\",\"choices\":[{\"index\":0,\"text\":\" w\","
                                        + "\"finish_reason\":null}],\"usage\":null}\n\n";
                    };
            // Half the events in their own write, half batched: both read paths get warm.
            if (i % 2 == 0) {
                response.write(Buffer.buffer(event));
            } else {
                sb.append(event);
            }
        }
        if (protocol.equals("tgi-generate")) {
            sb.append(
                    "data:{\"token\":{\"id\":2,\"text\":\"\",\"special\":true},"
                            + "\"generated_text\":\"w\",\"details\":{\"generated_tokens\":8}}\n\n");
        } else {
            sb.append(
                    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":8}}\n\n");
            sb.append("data: [DONE]\n\n");
        }
        response.end(Buffer.buffer(sb.toString()));
    }
}
