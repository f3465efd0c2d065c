package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.testkit.TransformersServe;
import io.inferencebench.testkit.TransformersServe.AccessLine;
import io.inferencebench.testkit.UsageTap;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The operator against Hugging Face {@code transformers serve} (the {@code *TransformersIT} tier,
 * {@code make test-transformers}), on the cluster of the {@link TestCluster} switch with the
 * chart-installed operator. The server runs on this host ({@code
 * e2e/scripts/transformers-serve.sh}: the cached venv, the project's tiny random-weight Llama, the
 * CPU) behind a Service without a selector and an EndpointSlice naming the host address the pods
 * reach - how a model server outside the cluster is benchmarked, as {@code OperatorVllmIT} does
 * with vLLM.
 *
 * <p>The slice points at a {@link UsageTap} on that address, which forwards to the server on
 * loopback and keeps what the server answered: with no {@code /metrics} the server's own record of
 * a run is its answers (status, {@code usage}) and its access log. A completions run and a chat
 * run, streamed, prompts sized by the model's tokenizer.json from a ConfigMap: every request is
 * answered 2xx, the profiles' token totals are the sums of the server's {@code usage}, and the
 * operator's scrapes of the missing {@code /metrics} leave the run Succeeded with {@code
 * ServerMetricsCollected=False}.
 */
@ExtendWith(TransformersServe.class)
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class OperatorTransformersIT {

    static final String NAMESPACE = "cl-transformers";
    static final String SERVICE = "transformers";
    static final String TOKENIZER_CONFIG_MAP = "tiny-llama-tokenizer";
    static final int SERVICE_PORT = 8000;
    static final int PROMPTS = 12;
    static final int IN = 48;
    static final int OUT = 16;

    private static ChartCluster cluster;
    private static KubernetesClient client;
    private static TransformersServe.Server server;
    private static UsageTap tap;
    private static final Path LOG_DIR =
            Path.of("target", "operator-transformers-it").toAbsolutePath();

    @BeforeAll
    static void startClusterAndTap() throws Exception {
        server = TransformersServe.server();
        Files.createDirectories(LOG_DIR);
        cluster = ChartCluster.start(List.of(NAMESPACE), LOG_DIR.resolve("cluster-logs"));
        client = cluster.client;
        tap = UsageTap.start(cluster.cluster.hostAddress(), URI.create(server.baseUrl()));
        HostService.expose(
                client,
                NAMESPACE,
                SERVICE,
                SERVICE_PORT,
                tap.baseUrl().getHost(),
                tap.baseUrl().getPort());
        client.configMaps()
                .inNamespace(NAMESPACE)
                .resource(
                        new ConfigMapBuilder()
                                .withNewMetadata()
                                .withName(TOKENIZER_CONFIG_MAP)
                                .endMetadata()
                                .addToData(
                                        "tokenizer.json", Files.readString(server.tokenizerJson()))
                                .build())
                .create();
        System.out.println(
                "[OperatorTransformersIT] transformers serve at "
                        + server.baseUrl()
                        + ", reached by the pods through "
                        + tap.baseUrl());
    }

    @AfterAll
    static void stop() {
        if (tap != null) {
            tap.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    static String run(String name, String api) {
        return """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: %s, namespace: %s}
                spec:
                  target:
                    service: {name: %s, port: %d}
                    backend: openai
                    api: %s
                    model: %s
                    readinessTimeout: 5m
                  workload:
                    dataset:
                      type: random
                      inputTokens: {type: fixed, mean: %d}
                      outputTokens: {type: fixed, mean: %d}
                      seed: 7
                    tokenizer:
                      configMapRef: {name: %s, key: tokenizer.json}
                    streaming: true
                  load:
                    requestRates: [2]
                    numPrompts: %d
                    arrival: poisson
                    cooldown: 1s
                    requestTimeout: 3m
                  metrics:
                    interval: 1s
                  runner:
                    parallelism: 1
                    startTimeout: 5m
                """
                .formatted(
                        name,
                        NAMESPACE,
                        SERVICE,
                        SERVICE_PORT,
                        api,
                        server.modelName(),
                        IN,
                        OUT,
                        TOKENIZER_CONFIG_MAP,
                        PROMPTS);
    }

    @Test
    void completionsThroughAServiceAreAllAnsweredAndCountedAsTheServerCounted() {
        JsonNode metrics = runAndCheck("completions", "completions", "/v1/completions");
        // Prompts from the model's tokenizer.json, as the server counts them (a byte-level
        // vocabulary can leave a prompt 1-3 tokens longer).
        assertThat(metrics.get("min_input_len").asInt()).isEqualTo(IN);
        assertThat(metrics.get("max_input_len").asInt()).isLessThanOrEqualTo(IN + 3);
    }

    @Test
    void chatThroughAServiceIsAllAnsweredAndCountedAsTheServerCounted() {
        JsonNode metrics = runAndCheck("chat", "chat", "/v1/chat/completions");
        // The chat template adds its own tokens to the message's.
        assertThat(metrics.get("min_input_len").asInt()).isGreaterThan(IN);
    }

    private JsonNode runAndCheck(String name, String api, String path) {
        tap.clear();
        int logFrom = server.logText().length();
        client.resource(run(name, api)).create();
        BenchmarkRun done =
                Runs.awaitSucceeded(client, NAMESPACE, name, Duration.ofMinutes(10), () -> {});
        assertThat(done.getStatus().condition(ConditionTypes.TARGET_READY))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
        // No /metrics on this server: said in the condition, and the run still succeeds.
        var collected =
                done.getStatus().condition(ConditionTypes.SERVER_METRICS_COLLECTED).orElseThrow();
        assertThat(collected.getStatus()).isEqualTo("False");
        assertThat(collected.getReason()).isEqualTo("ScrapesFailed");
        assertThat(collected.getMessage()).contains("HTTP 404");
        assertThat(tap.exchanges(e -> e.path().equals("/metrics")))
                .as("the operator's scrapes at the slice's address")
                .isNotEmpty()
                .allSatisfy(e -> assertThat(e.status()).isEqualTo(404));

        JsonNode metrics = done.getStatus().getProfiles().get(0).get("metrics");
        UsageTap.Totals answered = tap.totals(UsageTap.post(path));
        List<UsageTap.Exchange> exchanges = tap.exchanges(UsageTap.post(path));
        List<AccessLine> logged =
                TransformersServe.accessLines(server.logText().substring(logFrom)).stream()
                        .filter(l -> l.method().equals("POST"))
                        .toList();
        System.out.printf(
                Locale.ROOT,
                "[transformers-it] operator %s %d/%d x%d at 2 req/s: %d sent, %d ok; server"
                        + " answered %d x 2xx of %d (log: %d POST lines); output tokens client %d,"
                        + " server usage %d; prompt tokens client %d, server usage %d; achieved"
                        + " %.2f req/s, output %.1f tok/s; TTFT p50 %.0f p99 %.0f ms; ITL p50 %.0f"
                        + " ms; E2E p50 %.0f ms; %s: %s%n",
                api,
                IN,
                OUT,
                PROMPTS,
                metrics.path("requests_sent").asInt(),
                metrics.path("completed").asInt(),
                answered.ok(),
                answered.exchanges(),
                logged.size(),
                metrics.path("total_output_token").asLong(),
                answered.completionTokens(),
                metrics.path("total_input_tokens").asLong(),
                answered.promptTokens(),
                metrics.path("achieved_rate").asDouble(),
                metrics.path("total_output_token").asDouble()
                        / metrics.path("benchmark_time").asDouble(),
                metrics.path("median_ttft_ms").asDouble(),
                metrics.path("p99_ttft_ms").asDouble(),
                metrics.path("median_itl_ms").asDouble(),
                metrics.path("median_e2el_ms").asDouble(),
                collected.getReason(),
                collected.getMessage());
        // No request refused: what the runner pod sent was answered 2xx, by the tap's and the
        // server's own account.
        assertThat(metrics.get("requests_sent").asInt()).isEqualTo(PROMPTS);
        assertThat(metrics.get("completed").asInt()).isEqualTo(PROMPTS);
        assertThat(metrics.get("failures").asInt()).isZero();
        assertThat(answered.exchanges()).isEqualTo(PROMPTS);
        assertThat(exchanges)
                .allSatisfy(
                        e -> {
                            assertThat(e.status()).as(e.bodyStart()).isEqualTo(200);
                            assertThat(e.streamed()).isTrue();
                            assertThat(e.endedWithDone()).isFalse();
                            assertThat(e.completionTokens()).isEqualTo(OUT);
                        });
        assertThat(logged).hasSize(PROMPTS).allSatisfy(l -> assertThat(l.status()).isEqualTo(200));
        // Token counts: the profile's totals are the sums of the server's usage.
        assertThat(metrics.get("output_token_source").asText()).isEqualTo("usage");
        assertThat(metrics.get("input_token_source").asText()).isEqualTo("usage");
        assertThat(metrics.get("total_output_token").asLong())
                .isEqualTo(answered.completionTokens())
                .isEqualTo((long) PROMPTS * OUT);
        assertThat(metrics.get("total_input_tokens").asLong()).isEqualTo(answered.promptTokens());
        assertThat(metrics.get("count_ttft_ms").asInt()).isEqualTo(PROMPTS);
        return metrics;
    }
}
