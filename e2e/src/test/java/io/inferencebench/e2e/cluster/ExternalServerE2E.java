package io.inferencebench.e2e.cluster;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.e2e.HttpGet;
import io.inferencebench.e2e.SimulatorDeployment;
import io.inferencebench.testkit.ModelSim;
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
 * A model server outside the cluster: the simulator runs on this host, bound to the address the
 * pods reach, behind a Service without a selector and an EndpointSlice naming that address ({@link
 * HostService}). The chart's operator checks the target through the slice, its runner pod loads the
 * server through the ClusterIP, and the operator scrapes the server's {@code /metrics} at the
 * slice's address: what {@code OperatorVllmIT} does with a real vLLM, here with a server every
 * machine can run.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ExternalServerE2E {

    static final String NAMESPACE = "cl-external";
    static final String MODEL = "tiny-model";
    static final int PROMPTS = 16;
    static final int WARMUP = 3;

    private static ChartCluster cluster;
    private static KubernetesClient client;
    private static Process simulator;
    private static String simulatorUrl;
    private static final Path LOG_DIR = Path.of("target", "external-server-e2e").toAbsolutePath();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @BeforeAll
    static void startClusterAndServer() throws Exception {
        Path binary = ModelSim.binary();
        Files.createDirectories(LOG_DIR);
        cluster = ChartCluster.start(List.of(NAMESPACE), LOG_DIR.resolve("cluster-logs"));
        client = cluster.client;
        String host = cluster.cluster.hostAddress();
        int port = HostService.freePort(host);
        simulatorUrl = "http://" + host + ":" + port;
        simulator =
                new ProcessBuilder(
                                argv(
                                        "%s --model %s --host %s --port %s --time-to-first-token 20ms"
                                                + " --inter-token-latency 5ms --force-dummy-tokenizer",
                                        binary, MODEL, host, Integer.toString(port)))
                        .redirectErrorStream(true)
                        .redirectOutput(LOG_DIR.resolve("model-sim.log").toFile())
                        .start();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        await().atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(
                        () ->
                                http.send(
                                                        HttpRequest.newBuilder(
                                                                        URI.create(
                                                                                simulatorUrl
                                                                                        + "/metrics"))
                                                                .build(),
                                                        HttpResponse.BodyHandlers.discarding())
                                                .statusCode()
                                        == 200);
    }

    @AfterAll
    static void stop() throws Exception {
        if (simulator != null) {
            simulator.destroy();
            simulator.waitFor(10, TimeUnit.SECONDS);
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void aServerOutsideTheClusterBehindASelectorlessServiceIsBenchmarkedAndScraped()
            throws Exception {
        URI url = URI.create(simulatorUrl);
        HostService.expose(client, NAMESPACE, "external", 8000, url.getHost(), url.getPort());
        Runs.create(
                client,
                NAMESPACE,
                RunYaml.named("external")
                        .target("external", MODEL)
                        .load("4", PROMPTS, WARMUP)
                        .metricsEverySecond("")
                        .yaml());
        BenchmarkRun done =
                Runs.awaitSucceeded(
                        client,
                        NAMESPACE,
                        "external",
                        Duration.ofMinutes(5),
                        () -> assertThat(simulator.isAlive()).as("model-sim on the host").isTrue());
        assertThat(done.getStatus().condition(ConditionTypes.TARGET_READY))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
        var collected =
                done.getStatus().condition(ConditionTypes.SERVER_METRICS_COLLECTED).orElseThrow();
        JsonNode metrics = done.getStatus().getProfiles().get(0).get("metrics");
        System.out.printf(
                "[external] ServerMetricsCollected %s %s: %s%n[external] coverage %s, replicas %s%n",
                collected.getStatus(),
                collected.getReason(),
                collected.getMessage(),
                metrics.get("server_metrics_coverage"),
                metrics.path("server_metrics_by_replica").properties().stream()
                        .map(java.util.Map.Entry::getKey)
                        .toList());
        assertThat(collected.getStatus()).isEqualTo("True");
        assertThat(metrics.get("completed").asLong()).isEqualTo(PROMPTS);
        long sent = metrics.get("requests_sent").asLong();
        // The server's own count: every request the runner sent in the stage, plus its warm-up.
        assertThat(SimulatorDeployment.requestSuccesses(get(simulatorUrl + "/metrics")))
                .isEqualTo((double) sent + WARMUP);
        // ... and the operator's window increase at the slice's address: the stage's requests.
        assertThat(
                        Double.parseDouble(
                                metrics.at("/server_metrics/vllm:request_success_total/Increase")
                                        .asText()))
                .isEqualTo((double) sent);
        assertThat(metrics.at("/server_metrics_coverage/replicas").asInt()).isEqualTo(1);
        assertThat(metrics.get("server_metrics_by_replica").size()).isEqualTo(1);
    }

    private String get(String url) throws Exception {
        HttpResponse<String> r = HttpGet.get(http, url);
        assertThat(r.statusCode()).as("GET %s", url).isEqualTo(200);
        return r.body();
    }
}
