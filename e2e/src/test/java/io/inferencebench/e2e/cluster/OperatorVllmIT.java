package io.inferencebench.e2e.cluster;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.testkit.VllmCpu;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The operator against a real vLLM (the {@code *VllmIT} tier, {@code make test-vllm}), on the
 * cluster of the {@link TestCluster} switch with the chart-installed operator: vLLM 0.16 on the CPU
 * ({@code e2e/scripts/vllm-cpu.sh serve}: the cached venv, the project's tiny model, dummy weights)
 * runs on this host, bound to the address the pods reach ({@link TestCluster#hostAddress()}),
 * behind a Service without a selector and an EndpointSlice naming that address — how a model server
 * outside the cluster (a GPU box) is benchmarked. Runner pods load it through the Service's
 * ClusterIP; the operator pod scrapes its real {@code /metrics} at the slice's address. vLLM has no
 * image of its own here: its CPU build is an 8 GB venv.
 */
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class OperatorVllmIT {

    static final String NAMESPACE = "cl-vllm";
    static final String MODEL = "tiny-llama";
    static final int PROMPTS = 16;
    static final int IN = 64;
    static final int OUT = 16;
    static final int SERVICE_PORT = RunYaml.PORT;

    private static ChartCluster cluster;
    private static KubernetesClient client;
    private static Process vllm;
    private static String vllmUrl;
    private static final Path LOG_DIR = Path.of("target", "operator-vllm-it").toAbsolutePath();

    @BeforeAll
    static void startClusterAndVllm() throws Exception {
        VllmCpu.assumeCpuSupported();
        Path venv = VllmCpu.install();
        Files.createDirectories(LOG_DIR);
        cluster = ChartCluster.start(List.of(NAMESPACE), LOG_DIR.resolve("cluster-logs"));
        client = cluster.client;
        String host = cluster.cluster.hostAddress();
        int port = HostService.freePort(host);
        vllmUrl = "http://" + host + ":" + port;
        ProcessBuilder serve =
                new ProcessBuilder(
                                argv(
                                        "bash %s serve --host %s --port %s",
                                        VllmCpu.script().toString(), host, Integer.toString(port)))
                        .redirectErrorStream(true)
                        .redirectOutput(LOG_DIR.resolve("vllm.log").toFile());
        serve.environment().put("IB_CACHE_DIR", venv.getParent().toString());
        serve.environment().put("IB_VLLM_PYTHON", venv.resolve("bin/python").toString());
        serve.environment().put("IB_VLLM_MODEL_NAME", MODEL);
        vllm = serve.start();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        await().atMost(Duration.ofMinutes(10))
                .pollInterval(Duration.ofSeconds(1))
                .ignoreExceptions()
                .until(
                        () -> {
                            assertThat(vllm.isAlive())
                                    .as("vllm serve (log %s)", LOG_DIR.resolve("vllm.log"))
                                    .isTrue();
                            return http.send(
                                                    HttpRequest.newBuilder(
                                                                    URI.create(vllmUrl + "/health"))
                                                            .timeout(Duration.ofSeconds(3))
                                                            .build(),
                                                    HttpResponse.BodyHandlers.discarding())
                                            .statusCode()
                                    == 200;
                        });
        System.out.println("[OperatorVllmIT] vLLM healthy at " + vllmUrl);
    }

    @AfterAll
    static void stop() {
        // vLLM holds ~3 GiB and both cores under load: never leave it behind, pass or fail.
        if (vllm != null) {
            vllm.descendants().forEach(ProcessHandle::destroy);
            vllm.destroy();
            try {
                if (!vllm.waitFor(30, TimeUnit.SECONDS)) {
                    vllm.descendants().forEach(ProcessHandle::destroyForcibly);
                    vllm.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Poisson arrivals at 2 requests/s, prompts of {@link #IN} tokens asking for {@link #OUT}. */
    static String run(String name) {
        return RunYaml.named(name)
                .target("vllm", MODEL)
                .tokens(IN, OUT)
                .load("2", PROMPTS, 4)
                .poisson()
                .metricsEverySecond("")
                .timeouts("5m", "3m", "5m")
                .runnerResources(null, null, null)
                .yaml();
    }

    @Test
    void aRunAgainstVllmBehindAServiceGetsTheServersOwnMetrics() throws Exception {
        URI url = URI.create(vllmUrl);
        HostService.expose(client, NAMESPACE, "vllm", SERVICE_PORT, url.getHost(), url.getPort());
        Runs.create(client, NAMESPACE, run("vllm"));

        BenchmarkRun done =
                Runs.awaitSucceeded(
                        client,
                        NAMESPACE,
                        "vllm",
                        Duration.ofMinutes(10),
                        () -> assertThat(vllm.isAlive()).as("vllm serve").isTrue());
        assertThat(done.getStatus().condition(ConditionTypes.SERVER_METRICS_COLLECTED))
                .hasValueSatisfying(
                        c ->
                                assertThat(c.getStatus())
                                        .as("%s: %s", c.getReason(), c.getMessage())
                                        .isEqualTo("True"));

        JsonNode metrics = done.getStatus().getProfiles().get(0).get("metrics");
        JsonNode server = metrics.get("server_metrics");
        System.out.println("vLLM behind a Service: metrics = " + metrics);
        assertThat(metrics.get("completed").asInt()).isEqualTo(PROMPTS);
        assertThat(metrics.get("total_output_token").asLong()).isEqualTo((long) PROMPTS * OUT);
        // Prompts from the server's own tokenizer: exactly IN tokens each, by vLLM's count.
        assertThat(metrics.get("total_input_tokens").asLong()).isEqualTo((long) PROMPTS * IN);
        assertThat(increase(server, "vllm:request_success_total")).isEqualTo(PROMPTS);
        assertThat(increase(server, "vllm:prompt_tokens_total")).isEqualTo(PROMPTS * IN);
        assertThat(increase(server, "vllm:generation_tokens_total")).isEqualTo(PROMPTS * OUT);
        assertThat(
                        Double.parseDouble(
                                server.get("vllm:time_to_first_token_seconds")
                                        .get("Count")
                                        .asText()))
                .isEqualTo(PROMPTS);
        assertThat(server.has("vllm:kv_cache_usage_perc")).isTrue();
        assertThat(metrics.get("server_metrics_coverage").get("ratio").asDouble()).isEqualTo(1.0);
        // The client's TTFT includes the server's (arrival to first token) and the HTTP around it.
        double serverTtftMs =
                1000
                        * Double.parseDouble(
                                server.get("vllm:time_to_first_token_seconds")
                                        .get("Mean")
                                        .asText());
        assertThat(metrics.get("avg_ttft_ms").asDouble())
                .as("client TTFT mean vs the server's %.1f ms", serverTtftMs)
                .isGreaterThanOrEqualTo(serverTtftMs - 1);
    }

    private static double increase(JsonNode server, String name) {
        JsonNode m = server.get(name);
        assertThat(m).as("%s in %s", name, server).isNotNull();
        return Double.parseDouble(m.get("Increase").asText());
    }
}
