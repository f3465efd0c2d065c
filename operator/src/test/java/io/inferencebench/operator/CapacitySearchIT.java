package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.CapacityStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.profile.lpg.StageResult;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@code spec.search} on a real kube-apiserver + etcd with the reconciler in-process: the test
 * plays the one runner pod, reading each stage's rate and barrier from the control ConfigMap as a
 * runner in search mode does, and writing stage results whose SLO attainment depends on the rate (a
 * knee at {@link #KNEE} req/s). The rates are decided by the operator from the merged results.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CapacitySearchIT {

    /** Highest rate the simulated server serves within the SLO. */
    private static final double KNEE = 13.7;

    private static final int REQUESTS = 40;

    /** Closed after the last test (JUnit closes the fields it marks). */
    @AutoClose private OperatorTestCluster cluster;

    private KubernetesClient client;

    @BeforeAll
    void startApiServerAndOperator() {
        cluster =
                OperatorTestCluster.startWithRunOperator(
                        new SimpleMeterRegistry(), RunAdmission.fromConfig());
        client = cluster.client();
    }

    @Test
    void probesAreDecidedAtRunTimeAndTwoSearchesAgree() throws Exception {
        String namespace = cluster.createRunNamespace("search-");
        cluster.createServiceWithOneEndpoint(namespace, "vllm", true);
        CapacityStatus first = search(namespace, "search-a");
        CapacityStatus second = search(namespace, "search-b");
        assertThat(second.getPassingRate()).isEqualTo(first.getPassingRate());
        assertThat(second.getFailingRate()).isEqualTo(first.getFailingRate());
        assertThat(second.getProbes())
                .extracting(CapacityStatus.Probe::getRequestRate)
                .containsExactlyElementsOf(
                        first.getProbes().stream()
                                .map(CapacityStatus.Probe::getRequestRate)
                                .toList());
    }

    private CapacityStatus search(String namespace, String name) throws Exception {
        BenchmarkRun run =
                cluster.createRun(
                        namespace,
                        """
                        apiVersion: inferencebench.io/v1alpha1
                        kind: BenchmarkRun
                        metadata: {name: %s}
                        spec:
                          target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                          load: {numPrompts: %d, cooldown: 0s}
                          slo: {ttft: 500ms, minAttainment: 0.9}
                          search: {minRate: 2, maxRate: 64, precision: 0.05}
                          metrics: {enabled: false}
                        """
                                .formatted(name, REQUESTS));
        String uid = run.getMetadata().getUid();
        cluster.awaitRunStatus(namespace, name, s -> s.getPhase() == Phase.INITIALIZING);
        ConfigMap order =
                client.configMaps().inNamespace(namespace).withName(name + "-runner").get();
        assertThat(order.getData()).containsKey(RunnerWorkOrder.KEY);
        RunParts.write(client, run, 0, Map.of(PartReport.STATE, PartReport.STATE_READY));

        Map<String, String> part = new LinkedHashMap<>();
        List<Double> ran = new ArrayList<>();
        for (int stage = 1; ; stage++) {
            int n = stage;
            // a runner in search mode: wait for this stage's barrier and rate, or the end (the
            // `stages` key; or the control ConfigMap already cleaned up after the run succeeded,
            // which a fast operator does before a slow poll sees the key)
            Map<String, String> control =
                    await().atMost(Duration.ofSeconds(60))
                            .until(
                                    () -> controlData(namespace, name),
                                    d ->
                                            d.containsKey(RunnerWorkOrder.STAGES_KEY)
                                                    || (d.containsKey(
                                                                    RunnerWorkOrder.stageStartKey(
                                                                            n))
                                                            && d.containsKey(
                                                                    RunnerWorkOrder.stageRateKey(
                                                                            n)))
                                                    || (d.isEmpty() && succeeded(namespace, name)));
            if (control.isEmpty()) {
                break;
            }
            if (control.containsKey(RunnerWorkOrder.STAGES_KEY)) {
                assertThat(Integer.parseInt(control.get(RunnerWorkOrder.STAGES_KEY)))
                        .isEqualTo(stage - 1);
                break;
            }
            assertThat(stage).as("probes").isLessThanOrEqualTo(20);
            double rate = Double.parseDouble(control.get(RunnerWorkOrder.stageRateKey(stage)));
            ran.add(rate);
            part.putAll(stageDone(stage, rate, uid));
            part.put(PartReport.STATE, PartReport.STATE_RUNNING);
            RunParts.write(client, run, 0, part);
            // the next rate is published only after this stage's results were merged
            int done = stage;
            cluster.awaitRunStatus(
                    namespace, name, s -> s.getResults() != null && s.getResults().size() == done);
        }
        part.put(PartReport.STATE, PartReport.STATE_DONE);
        RunParts.write(client, run, 0, part);
        BenchmarkRunStatus status =
                cluster.awaitRunStatus(namespace, name, s -> s.getPhase() == Phase.SUCCEEDED);

        CapacityStatus capacity = status.getCapacity();
        assertThat(capacity.getOutcome()).isEqualTo("Found");
        assertThat(capacity.getPassingRate()).isLessThanOrEqualTo(KNEE);
        assertThat(capacity.getFailingRate()).isGreaterThan(KNEE);
        assertThat(capacity.getFailingRate() / capacity.getPassingRate() - 1)
                .isLessThanOrEqualTo(0.05);
        assertThat(capacity.getMaxRequestRate()).isEqualTo(capacity.getPassingRate());
        assertThat(capacity.getPrecision()).isEqualTo(0.05);
        assertThat(capacity.getSlo().getTtft()).isEqualTo("500ms");
        assertThat(capacity.getDisplay())
                .isEqualTo(
                        io.inferencebench.profile.search.CapacitySearch.fmt(
                                        capacity.getPassingRate())
                                + " req/s");
        // geometric growth from the min rate until the knee, then bisection
        assertThat(ran.subList(0, 4)).containsExactly(2.0, 4.0, 8.0, 16.0);
        assertThat(capacity.getProbes())
                .extracting(CapacityStatus.Probe::getRequestRate)
                .containsExactlyElementsOf(ran);
        assertThat(status.getResults()).hasSize(ran.size());
        ConfigMap profiles =
                client.configMaps()
                        .inNamespace(namespace)
                        .withName(status.getProfileConfigMap())
                        .get();
        for (CapacityStatus.Probe p : capacity.getProbes()) {
            assertThat(p.getPassed()).isEqualTo(p.getRequestRate() <= KNEE);
            assertThat(p.getLoadDelivered()).isTrue();
            assertThat(p.getAttemptedRequests()).isEqualTo(REQUESTS);
            assertThat(profiles.getData()).containsKey(p.getProfile());
        }
        assertThat(capacity.getProbes())
                .extracting(CapacityStatus.Probe::getProfile)
                .doesNotHaveDuplicates();
        assertThat(status.getStage()).isEqualTo(ran.size() + "/" + ran.size());
        assertThat(ResourceNames.control(name)).isEqualTo(name + "-control");
        return capacity;
    }

    private boolean succeeded(String namespace, String name) {
        BenchmarkRun run =
                client.resources(BenchmarkRun.class).inNamespace(namespace).withName(name).get();
        return run != null
                && run.getStatus() != null
                && run.getStatus().getPhase() == Phase.SUCCEEDED;
    }

    private Map<String, String> controlData(String namespace, String name) {
        ConfigMap control =
                client.configMaps().inNamespace(namespace).withName(name + "-control").get();
        return control == null || control.getData() == null ? Map.of() : control.getData();
    }

    /** Stage {@code stage} at {@code rate}: every request good below the knee, a quarter above. */
    private static Map<String, String> stageDone(int stage, double rate, String uid) {
        long dispatchNanos = Math.round((REQUESTS - 1) / rate * 1e9);
        StageResult result =
                RunParts.completedStage(
                        stage,
                        rate,
                        REQUESTS,
                        RunParts.epochNanos(
                                Instant.parse("2026-11-29T12:00:00Z").plusSeconds(stage * 60L)),
                        dispatchNanos,
                        dispatchNanos + 500_000_000L);
        RunParts.recordSteadyRequests(result, 0);
        result.goodputRequests = rate <= KNEE ? REQUESTS : REQUESTS / 4;
        return RunParts.report(PartReport.STATE_RUNNING, stage, uid, result);
    }
}
