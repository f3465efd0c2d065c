package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.testkit.TempDirCheck;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * The packaged operator (Quarkus + QOSDK wiring, config, metrics, health) against a real API
 * server. It leaves nothing in java.io.tmpdir: Quarkus makes no (world-writable) vertx-cache there.
 */
@TempDirCheck("vertx-cache")
@QuarkusTest
@QuarkusTestResource(value = ApiServerResource.class, restrictToAnnotatedClass = true)
class QuarkusOperatorIT {

    @TestHTTPResource("/q/metrics")
    URL metrics;

    @TestHTTPResource("/q/health/ready")
    URL ready;

    @TestHTTPResource("/q/health/live")
    URL live;

    @TestHTTPResource("/q/health/started")
    URL started;

    @Test
    void operatorLaunchesRunnersAndServesMetricsAndHealth() throws Exception {
        KubernetesClient client = ApiServerResource.fixture.client();
        String ns = "quarkus-it";
        OperatorTestCluster.createNamespace(client, ns);
        OperatorTestCluster.createRunnerServiceAccount(client, ns);
        OperatorTestCluster.createService(client, ns, "vllm", 8000);
        client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(ns)
                .resource(
                        new EndpointSliceBuilder()
                                .withNewMetadata()
                                .withName("vllm-1")
                                .addToLabels(Labels.ENDPOINT_SLICE_SERVICE, "vllm")
                                .endMetadata()
                                .withAddressType("IPv4")
                                .addNewEndpoint()
                                .withAddresses("10.9.9.9")
                                .endEndpoint()
                                .build())
                .create();
        BenchmarkRun run =
                client.getKubernetesSerialization()
                        .unmarshal(
                                """
                                apiVersion: inferencebench.io/v1alpha1
                                kind: BenchmarkRun
                                metadata: {name: quarkus-run}
                                spec:
                                  target: {service: {name: vllm, port: 8000}}
                                  load: {requestRates: [1], numPrompts: 5}
                                  runner: {image: "example/runner:1"}
                                """,
                                BenchmarkRun.class);
        client.resources(BenchmarkRun.class).inNamespace(ns).resource(run).create();

        var job =
                await().atMost(Duration.ofSeconds(60))
                        .until(
                                () ->
                                        client.batch()
                                                .v1()
                                                .jobs()
                                                .inNamespace(ns)
                                                .withName("quarkus-run-runner")
                                                .get(),
                                Objects::nonNull);
        assertThat(job.getSpec().getTemplate().getSpec().getContainers().getFirst().getImage())
                .isEqualTo("example/runner:1");
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () ->
                                client.resources(BenchmarkRun.class)
                                                .inNamespace(ns)
                                                .withName("quarkus-run")
                                                .get()
                                                .getStatus()
                                                .getPhase()
                                        == Phase.INITIALIZING);

        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> metricsPage =
                http.send(
                        HttpRequest.newBuilder(URI.create(metrics.toString())).build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(metricsPage.statusCode()).isEqualTo(200);
        assertThat(metricsPage.body()).contains("jvm_memory_used_bytes").contains("operator_sdk");
        // The run metrics the chart's Grafana dashboard reads (RunMetrics).
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () -> {
                            String page = get(http, metrics).body();
                            assertThat(page)
                                    .containsPattern(
                                            "(?m)^inferencebench_runs\\{phase=\"Initializing\",?\\}"
                                                    + " 1\\.0$")
                                    .containsPattern(
                                            "(?m)^inferencebench_runs\\{phase=\"Succeeded\",?\\}"
                                                    + " 0\\.0$")
                                    .containsPattern(
                                            "(?m)^inferencebench_run_stage\\{name=\"quarkus-run\","
                                                    + "namespace=\"quarkus-it\",?\\} 0\\.0$")
                                    .containsPattern(
                                            "(?m)^inferencebench_run_stages\\{name=\"quarkus-run\","
                                                    + "namespace=\"quarkus-it\",?\\} 1\\.0$")
                                    .containsPattern(
                                            "(?m)^inferencebench_run_live_rps\\{name=\"quarkus-run\","
                                                    + "namespace=\"quarkus-it\",?\\} 0\\.0$")
                                    .contains("inferencebench_run_live_ttft_p50_seconds")
                                    .contains("inferencebench_run_live_requested_rps");
                        });
        HttpResponse<String> health =
                http.send(
                        HttpRequest.newBuilder(URI.create(ready.toString())).build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        // The chart's liveness and startup probes.
        assertThat(get(http, live).statusCode()).isEqualTo(200);
        assertThat(get(http, started).statusCode()).isEqualTo(200);
    }

    @jakarta.inject.Inject KubernetesClient operatorClient;

    @Test
    void scheduleControllerIsWiredAndTheOperatorReadsFieldsNewerThanItsModel() throws Exception {
        // NewerFields customizes the Quarkus client: what its informers read with.
        BenchmarkRun newer =
                operatorClient
                        .getKubernetesSerialization()
                        .unmarshal(
                                """
                                apiVersion: inferencebench.io/v1alpha1
                                kind: BenchmarkRun
                                metadata: {name: newer}
                                spec:
                                  target: {url: "http://x:1", futureTargetField: 1}
                                  load: {requestRates: [1], numPrompts: 5, futureLoadField: 2}
                                status: {phase: Running, futureStatusField: 3}
                                """,
                                BenchmarkRun.class);
        assertThat(newer.getStatus().getPhase()).isEqualTo(Phase.RUNNING);

        KubernetesClient client = ApiServerResource.fixture.client();
        String ns = "quarkus-schedule";
        OperatorTestCluster.createNamespace(client, ns);
        io.inferencebench.crds.v1alpha1.BenchmarkSchedule schedule =
                client.getKubernetesSerialization()
                        .unmarshal(
                                """
                                apiVersion: inferencebench.io/v1alpha1
                                kind: BenchmarkSchedule
                                metadata: {name: q-nightly}
                                spec:
                                  schedule: "0 3 * * *"
                                  template:
                                    target: {url: "http://x:1"}
                                    load: {requestRates: [1], numPrompts: 5}
                                """,
                                io.inferencebench.crds.v1alpha1.BenchmarkSchedule.class);
        client.resources(io.inferencebench.crds.v1alpha1.BenchmarkSchedule.class)
                .inNamespace(ns)
                .resource(schedule)
                .create();
        var status =
                await().atMost(Duration.ofSeconds(60))
                        .until(
                                () ->
                                        client.resources(
                                                        io.inferencebench.crds.v1alpha1
                                                                .BenchmarkSchedule.class)
                                                .inNamespace(ns)
                                                .withName("q-nightly")
                                                .get()
                                                .getStatus(),
                                s -> s != null && s.getNextScheduleTime() != null);
        assertThat(java.time.Instant.parse(status.getNextScheduleTime()).toString())
                .endsWith("T03:00:00Z");
        HttpClient http = HttpClient.newHttpClient();
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () ->
                                assertThat(get(http, metrics).body())
                                        .containsPattern(
                                                "(?m)^inferencebench_schedule_last_verdict\\{"
                                                        + "namespace=\"quarkus-schedule\","
                                                        + "schedule=\"q-nightly\",?\\} NaN$"));
    }

    private static HttpResponse<String> get(HttpClient http, URL url) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(url.toString())).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
