package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.e2e.HttpGet;
import io.inferencebench.e2e.PodYaml;
import io.inferencebench.e2e.SimulatorDeployment;
import io.inferencebench.e2e.operator.AuthCheckProxy;
import io.inferencebench.e2e.programs.RunnerRbacProbe;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The operator scenarios on the real node with the product as users install it ({@link
 * ChartCluster}: the Helm chart's operator Deployment, the runner and model-sim images in
 * containerd): a sweep with two runner pods in a Pod Security {@code restricted} namespace, the API
 * key from a Secret, cancel, runner-pod loss and operator restart. Every namespace enforces {@code
 * restricted}; a Service without ready endpoints is reported and starts no runner. Latencies are
 * compared with what the simulator itself observed (its /metrics histograms, scraped by the
 * operator over the stage window), request counts with what it counted.
 *
 * <p>Needs root and {@code make images}; part of the E2E tier of {@code make test} ({@code make
 * e2e-node} runs the real-node classes alone). The process-node {@code OperatorE2E} scenarios live
 * here now.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class OperatorClusterE2E {

    static final String MODEL = "tiny-model";
    static final int SIM_TTFT_MS = 20;
    static final int SIM_ITL_MS = 5;
    static final int WARMUP_REQUESTS = 5;
    static final String NS_SWEEP = "cl-sweep";
    static final String NS_KEY = "cl-apikey";
    static final String NS_CANCEL = "cl-cancel";
    static final String NS_LOSS = "cl-podloss";
    static final String NS_RESTART = "cl-restart";
    static final String NS_NO_ENDPOINTS = "cl-noendpoints";
    static final String NS_SEARCH = "cl-search";
    static final String NS_RBAC = "cl-rbac";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Closed after the last test (null when it never started: JUnit then only logs that). */
    @AutoClose private static ChartCluster cluster;

    private static KubernetesClient client;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

    @BeforeAll
    static void startCluster() {
        cluster =
                ChartCluster.start(
                        List.of(
                                NS_SWEEP,
                                NS_KEY,
                                NS_CANCEL,
                                NS_LOSS,
                                NS_RESTART,
                                NS_NO_ENDPOINTS,
                                NS_SEARCH,
                                NS_RBAC),
                        Path.of("target/cluster-e2e-logs").toAbsolutePath());
        client = cluster.client;
    }

    // ---------------------------------------------------------------- scenarios

    @Test
    @Order(1)
    void sweepWithTwoRunnerPodsInARestrictedNamespaceMatchesWhatTheSimulatorObserved()
            throws Exception {
        // the namespace really enforces restricted: a plain pod is refused
        try {
            client.pods()
                    .inNamespace(NS_SWEEP)
                    .resource(
                            new PodBuilder()
                                    .withNewMetadata()
                                    .withName("plain")
                                    .endMetadata()
                                    .withNewSpec()
                                    .addNewContainer()
                                    .withName("main")
                                    .withImage(cluster.reference("runner"))
                                    .endContainer()
                                    .endSpec()
                                    .build())
                    .create();
            throw new AssertionError("a non-restricted pod was admitted in " + NS_SWEEP);
        } catch (KubernetesClientException e) {
            assertThat(e.getCode()).isEqualTo(403);
            assertThat(e.getMessage()).contains("restricted");
        }
        deploySimulator(NS_SWEEP, "sim");
        int numPrompts = 16;
        // with an SLO, so that every column of `kubectl get br -o wide` has a value
        createRun(
                NS_SWEEP,
                sweep("sweep", "sim", "4, 8", numPrompts, 2, "", "OnSuccess")
                        .replace(
                                "\n  runner:\n",
                                "\n  slo: {ttft: 2s, minAttainment: 0.5}\n  runner:\n"));

        BenchmarkRun done = awaitPhase(NS_SWEEP, "sweep", Duration.ofMinutes(5), Phase.SUCCEEDED);
        var status = done.getStatus();
        assertThat(status.condition(ConditionTypes.COMPLETED))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
        assertThat(status.getModel()).isEqualTo(MODEL);
        assertThat(status.getResults()).hasSize(2);
        assertThat(status.getProfiles()).hasSize(2);
        for (int stage = 1; stage <= 2; stage++) {
            long sent = sumOfParts(NS_SWEEP, "sweep", 2, stage, "sent");
            assertThat(sent).isEqualTo(numPrompts);
            JsonNode profile = status.getProfiles().get(stage - 1);
            assertMatchesWhatTheSimulatorObserved(profile, numPrompts);
            assertThat(profile.get("metrics").get("runner_count").asInt()).isEqualTo(2);
            StageSummary result = status.getResults().get(stage - 1);
            assertThat(result.getSent()).isEqualTo(sent);
            assertThat(result.getCompleted()).isEqualTo(sent);
            assertThat(result.getStatistics()).isEqualTo("merged");
            // every pod's part carried its samples through the API server: the merge is exact
            assertThat(profile.at("/metrics/statistics_mode").asText()).isEqualTo("exact");
        }
        assertThat(status.getResults().get(0).getRequestRate()).isEqualTo(4.0);
        assertThat(status.getResults().get(1).getRequestRate()).isEqualTo(8.0);
        assertSimulatorServedWarmUpsAndTwoStages(NS_SWEEP, numPrompts);

        ConfigMap output =
                client.configMaps()
                        .inNamespace(NS_SWEEP)
                        .withName(status.getProfileConfigMap())
                        .get();
        Pattern lpgName =
                Pattern.compile("vllm-(4|8)\\.0qps-" + MODEL + "-\\d{8}-\\d{6}(-stage\\d)?\\.json");
        assertThat(output.getData().keySet())
                .hasSize(2)
                .allSatisfy(key -> assertThat(key).matches(lpgName))
                .containsExactlyInAnyOrder(
                        status.getResults().get(0).getProfileKey(),
                        status.getResults().get(1).getProfileKey());

        // the runner pods ran in the restricted namespace: the Job controller's events say so
        assertThat(client.v1().events().inNamespace(NS_SWEEP).list().getItems())
                .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("SuccessfulCreate"))
                .noneSatisfy(e -> assertThat(e.getMessage()).contains("violates PodSecurity"));

        String table = cluster.kubectl("get", "br", "-n", NS_SWEEP, "-o", "wide");
        System.out.println(table);
        List<String> lines = table.lines().toList();
        assertThat(lines.get(0)).contains("NAME", "PHASE", "MODEL", "STAGE", "DONE", "TTFT P50");
        assertThat(lines.get(1)).startsWith("sweep").contains("Succeeded").contains(MODEL);
        // kubectl aligns every cell under its header's first letter: cut the row at those offsets
        Map<String, String> cells = cellsByHeader(lines.get(0), lines.get(1));
        assertThat(cells.keySet()).contains("SLO", "CAPACITY", "REPLICA SHARES", "AGE");
        cells.forEach(
                (column, value) -> {
                    if (column.equals("CAPACITY")) {
                        // filled by spec.search only; this run has fixed stages
                        assertThat(value).as("CAPACITY of a run without spec.search").isEmpty();
                    } else if (column.equals("REPLICA SHARES")) {
                        // filled only with two or more replicas scraped; this simulator has one
                        assertThat(value).as("REPLICA SHARES of a one-replica target").isEmpty();
                    } else {
                        assertThat(value).as("column %s of%n%s", column, table).isNotBlank();
                    }
                });
    }

    /** The cells of a {@code kubectl get} row by column header. */
    private static Map<String, String> cellsByHeader(String header, String row) {
        // headers are words joined by single spaces ("TTFT P50"); columns are 3 or more apart
        java.util.regex.Matcher m = Pattern.compile("\\S+(?: \\S+)*").matcher(header);
        List<Integer> starts = new ArrayList<>();
        List<String> names = new ArrayList<>();
        while (m.find()) {
            starts.add(m.start());
            names.add(m.group());
        }
        Map<String, String> cells = new java.util.LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) {
            int from = Math.min(starts.get(i), row.length());
            int to =
                    i + 1 < names.size() ? Math.min(starts.get(i + 1), row.length()) : row.length();
            cells.put(names.get(i), row.substring(from, to).strip());
        }
        return cells;
    }

    @Test
    @Order(2)
    void apiKeyFromASecretReachesTheServerAndLeaksNowhere() throws Exception {
        String ns = NS_KEY;
        deploySimulator(ns, "sim");
        String key = "sk-e2e-" + UUID.randomUUID();
        client.resource(
                        """
                        apiVersion: v1
                        kind: Secret
                        metadata: {name: model-key, namespace: %s}
                        stringData: {token: %s}
                        """
                                .formatted(ns, key))
                .create();
        deployAuthProxy(ns);
        int numPrompts = 8;
        createRun(
                ns,
                sweep(
                        "keyed",
                        "guard",
                        "4",
                        numPrompts,
                        1,
                        "    apiKeySecretRef: {name: model-key, key: token}",
                        "Never"));
        List<Pod> runnerPodsSeen =
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> runnerPods(ns, "keyed"), pods -> !pods.isEmpty());
        BenchmarkRun done = awaitPhase(ns, "keyed", Duration.ofMinutes(4), Phase.SUCCEEDED);
        assertThat(done.getStatus().getResults().get(0).getCompleted()).isEqualTo(numPrompts);
        assertThat(done.getStatus().getResults().get(0).getFailed()).isZero();

        String guardIp = clusterIp(ns, "guard");
        String counts = get("http://" + guardIp + ":8000/auth-counts").body();
        assertThat(counts)
                .as("the server saw the bearer key on every request")
                .contains("accepted=" + (numPrompts + WARMUP_REQUESTS) + " ")
                .endsWith("rejected=0");
        // and it does check: a request without the key is refused
        assertThat(get("http://" + guardIp + ":8000/v1/models").statusCode()).isEqualTo(401);

        for (Pod runnerPod : runnerPodsSeen) {
            EnvVar keyEnv =
                    runnerPod.getSpec().getContainers().get(0).getEnv().stream()
                            .filter(e -> e.getName().equals("INFERENCEBENCH_API_KEY"))
                            .findFirst()
                            .orElseThrow();
            assertThat(keyEnv.getValue()).isNull();
            assertThat(keyEnv.getValueFrom().getSecretKeyRef().getName()).isEqualTo("model-key");
        }
        var yaml = client.getKubernetesSerialization();
        assertThat(yaml.asYaml(run(ns, "keyed"))).doesNotContain(key);
        for (ConfigMap cm : client.configMaps().inNamespace(ns).list().getItems()) {
            assertThat(yaml.asYaml(cm))
                    .as("ConfigMap %s", cm.getMetadata().getName())
                    .doesNotContain(key);
        }
        assertThat(yaml.asYaml(client.v1().events().inNamespace(ns).list())).doesNotContain(key);
        assertThat(yaml.asYaml(client.v1().events().inNamespace(ChartCluster.SYSTEM).list()))
                .doesNotContain(key);
        for (Pod pod : client.pods().inNamespace(ns).list().getItems()) {
            assertThat(yaml.asYaml(pod)).doesNotContain(key);
        }
        // the container logs kubelet wrote: runner, simulator, proxy, operator
        Map<String, String> logs = cluster.containerLogs(ns);
        assertThat(logs.keySet()).anySatisfy(k -> assertThat(k).contains("keyed-runner"));
        Map<String, String> operatorLogs = cluster.containerLogs(ChartCluster.SYSTEM);
        assertThat(operatorLogs.keySet()).anySatisfy(k -> assertThat(k).contains("operator"));
        logs.putAll(operatorLogs);
        for (var log : logs.entrySet()) {
            assertThat(log.getValue()).as("log %s", log.getKey()).doesNotContain(key);
        }
    }

    @Test
    @Order(3)
    void cancelMidRunKeepsFinishedStages() throws Exception {
        String ns = NS_CANCEL;
        startThreeStagesAndAwaitTheFirst(ns, "cancelled", 1);
        client.resources(BenchmarkRun.class)
                .inNamespace(ns)
                .withName("cancelled")
                .edit(
                        r -> {
                            r.getSpec().setCancel(true);
                            return r;
                        });
        BenchmarkRun cancelled =
                awaitPhase(ns, "cancelled", Duration.ofSeconds(90), Phase.CANCELLED);
        var status = cancelled.getStatus();
        assertFinishedStagesKept(ns, status);
        await().atMost(Duration.ofSeconds(60))
                .until(
                        () ->
                                runnerPods(ns, "cancelled").stream()
                                        .noneMatch(
                                                p -> "Running".equals(p.getStatus().getPhase())));
    }

    @Test
    @Order(4)
    void runnerPodDeletedMidRunFailsTheRunAndKeepsFinishedStages() throws Exception {
        String ns = NS_LOSS;
        startThreeStagesAndAwaitTheFirst(ns, "podloss", 2);
        Pod victim =
                runnerPods(ns, "podloss").stream()
                        .filter(
                                p ->
                                        "1"
                                                .equals(
                                                        p.getMetadata()
                                                                .getAnnotations()
                                                                .get(
                                                                        "batch.kubernetes.io/job-completion-index")))
                        .findFirst()
                        .orElseThrow();
        client.pods().inNamespace(ns).resource(victim).withGracePeriod(0).delete();

        BenchmarkRun failed = awaitPhase(ns, "podloss", Duration.ofMinutes(2), Phase.FAILED);
        var status = failed.getStatus();
        System.out.println("after runner pod deletion: " + status.getMessage());
        assertThat(status.getMessage())
                .contains("runner Job podloss-runner failed")
                .contains("results of finished stages are kept");
        assertFinishedStagesKept(ns, status);
    }

    @Test
    @Order(5)
    void operatorPodDeletedMidRunIsReplacedByTheDeploymentAndTheRunCompletes() throws Exception {
        String ns = NS_RESTART;
        deploySimulator(ns, "sim");
        int numPrompts = 16;
        createRun(ns, sweep("restarted", "sim", "4, 4", numPrompts, 2, "", "OnSuccess"));
        awaitOrEnd(
                ns,
                "restarted",
                r -> r.getStatus() != null && r.getStatus().getPhase() == Phase.RUNNING);
        assertThat(phase(ns, "restarted")).isEqualTo(Phase.RUNNING);
        Pod old = cluster.awaitOperatorReady(Duration.ofSeconds(30));
        client.pods().inNamespace(ChartCluster.SYSTEM).resource(old).withGracePeriod(0).delete();
        await().atMost(Duration.ofSeconds(60))
                .until(
                        () ->
                                cluster.operatorPods().stream()
                                        .noneMatch(
                                                p ->
                                                        p.getMetadata()
                                                                .getUid()
                                                                .equals(
                                                                        old.getMetadata()
                                                                                .getUid())));
        Pod replacement = cluster.awaitOperatorReady(Duration.ofMinutes(3));
        assertThat(replacement.getMetadata().getUid()).isNotEqualTo(old.getMetadata().getUid());
        System.out.println(
                "operator pod "
                        + old.getMetadata().getName()
                        + " deleted; the Deployment started "
                        + replacement.getMetadata().getName());

        BenchmarkRun done = awaitPhase(ns, "restarted", Duration.ofMinutes(4), Phase.SUCCEEDED);
        var status = done.getStatus();
        assertThat(status.getProfiles()).hasSize(2);
        for (int stage = 1; stage <= 2; stage++) {
            assertThat(sumOfParts(ns, "restarted", 2, stage, "sent")).isEqualTo(numPrompts);
            JsonNode profile = status.getProfiles().get(stage - 1);
            JsonNode server = profile.path("metrics").path("server_metrics");
            if (server.path("vllm:time_to_first_token_seconds").has("Mean")) {
                assertMatchesWhatTheSimulatorObserved(profile, numPrompts);
            } else {
                // scrapes of the stage were lost with the old operator pod: the coverage says so
                JsonNode coverage = profile.path("metrics").path("server_metrics_coverage");
                System.out.println(
                        "stage "
                                + stage
                                + " without server histograms: "
                                + server
                                + " "
                                + coverage);
                assertThat(coverage.isMissingNode()).as("coverage of stage %d", stage).isFalse();
                assertThat(profile.path("metrics").path("completed").asLong())
                        .isEqualTo(numPrompts);
            }
        }
        assertSimulatorServedWarmUpsAndTwoStages(ns, numPrompts);
        ConfigMap output =
                client.configMaps().inNamespace(ns).withName(status.getProfileConfigMap()).get();
        assertThat(output.getData()).hasSize(2);
        // the new operator pod finished the run: completed after it started
        assertThat(java.time.Instant.parse(status.getCompletionTime()))
                .as("completion of the run vs start of the replacement operator pod")
                .isAfter(java.time.Instant.parse(replacement.getStatus().getStartTime()));
    }

    @Test
    @Order(6)
    void serviceWithoutReadyEndpointsIsReportedAndNoRunnerStarts() throws Exception {
        String ns = NS_NO_ENDPOINTS;
        apply(
                """
                apiVersion: v1
                kind: Service
                metadata: {name: sim, namespace: %s}
                spec:
                  selector: {app: nothing-selects-this}
                  ports: [{name: http, port: 8000, targetPort: 8000}]
                """
                        .formatted(ns));
        createRun(ns, sweep("unready", "sim", "4", 4, 1, "", "OnSuccess"));
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () -> {
                            BenchmarkRun run = run(ns, "unready");
                            return run.getStatus() != null
                                    && run.getStatus()
                                            .condition(ConditionTypes.TARGET_READY)
                                            .filter(c -> c.getStatus().equals("False"))
                                            .isPresent();
                        });
        var condition =
                run(ns, "unready").getStatus().condition(ConditionTypes.TARGET_READY).orElseThrow();
        assertThat(condition.getReason()).isNotBlank();
        assertThat(condition.getMessage()).contains("sim");
        // give a wrongly eager operator time to launch runners anyway
        Thread.sleep(5_000);
        assertThat(client.pods().inNamespace(ns).list().getItems()).isEmpty();
        assertThat(client.batch().v1().jobs().inNamespace(ns).list().getItems()).isEmpty();
        assertThat(Runs.ended(phase(ns, "unready"))).isFalse();
        System.out.println(
                "TargetReady=False reason="
                        + condition.getReason()
                        + " message="
                        + condition.getMessage());
    }

    // ---------------------------------------------------------------- assertions

    /**
     * The runners' numbers against the simulator's own: request and token counts exactly (the
     * operator scrapes the server at the stage's start and end barriers); latencies against the
     * server's histogram means (delta sum / delta count, exact). A client sees at least what the
     * server spent on the first token and on the whole request. The time from the first token to
     * the last and the gap between tokens are the server's plus the runner's own delays in reading
     * the stream; on this 2-core node shared with other builds those reached 1.5 times the
     * server's, so the bound is twice the server's (a wrong unit or token count is far outside).
     */
    /**
     * {@code spec.search} end to end: the operator decides every probe's rate from the merged
     * results of the one before and the runner pod runs it. The simulator serves one request at a
     * time ({@code --max-num-seqs 1}) for at least 50 ms + 7 x 10 ms, so above 1 / 0.12 s = 8.33
     * req/s its queue grows with every request; with constant arrivals and 24 prompts a probe still
     * meets "TTFT <= 150 ms for 90 %" only while request 21 waits at most 100 ms, i.e. at most 1 /
     * (0.12 - 0.1 / 21) = 8.68 req/s: no passing rate can be higher (a slower machine lowers the
     * capacity, never raises it).
     */
    @Test
    @Order(7)
    void capacitySearchProbesRatesDecidedAtRunTimeAndBracketsTheKnee() throws Exception {
        String ns = NS_SEARCH;
        // a fresh simulator: its counters start at 0 (read after the run only: right after the
        // pod is Ready, kube-proxy may not yet route the host to the ClusterIP)
        deploySimulator(ns, "sim", 50, 10, 1);
        createRun(
                ns,
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: search}
                spec:
                  target:
                    service: {name: sim, port: 8000}
                    backend: vllm
                    api: completions
                    model: %s
                    readinessTimeout: 2m
                  workload:
                    dataset:
                      type: random
                      inputTokens: {type: fixed, mean: 16}
                      outputTokens: {type: fixed, mean: 8}
                      seed: 7
                    streaming: true
                    ignoreEos: true
                  load:
                    numPrompts: 40
                    arrival: constant
                    cooldown: 1s
                    requestTimeout: 30s
                  slo: {ttft: 150ms, minAttainment: 0.9}
                  search: {minRate: 2, maxRate: 32, precision: 0.1, confirmations: 0}
                  runner:
                    parallelism: 1
                    startTimeout: 4m
                    resources:
                      requests: {cpu: 100m, memory: 256Mi}
                      limits: {memory: 768Mi}
                """
                        .formatted(MODEL));
        BenchmarkRun done = awaitPhase(ns, "search", Duration.ofMinutes(8), Phase.SUCCEEDED);
        var status = done.getStatus();
        var capacity = status.getCapacity();
        assertThat(capacity).as("status.capacity").isNotNull();
        System.out.printf(
                "[search] outcome %s, passing %s, failing %s, probes %s%n",
                capacity.getOutcome(),
                capacity.getPassingRate(),
                capacity.getFailingRate(),
                capacity.getProbes().stream()
                        .map(
                                p ->
                                        p.getRequestRate()
                                                + (p.getPassed() == null
                                                        ? " not delivered"
                                                        : p.getPassed() ? " pass" : " fail"))
                        .toList());
        assertThat(capacity.getOutcome()).isEqualTo("Found");
        double passing = capacity.getPassingRate();
        double failing = capacity.getFailingRate();
        assertThat(capacity.getMaxRequestRate()).isEqualTo(passing);
        assertThat(passing).isGreaterThanOrEqualTo(2.0).isLessThan(failing);
        assertThat(failing).as("within the precision").isLessThanOrEqualTo(passing * 1.1 + 1e-9);
        assertThat(passing).as("the simulator's own service time bounds it").isLessThan(8.68);
        // grow from minRate, every probe's verdict as the search saw it, every profile kept
        assertThat(capacity.getProbes().get(0).getRequestRate()).isEqualTo(2.0);
        ConfigMap output =
                client.configMaps().inNamespace(ns).withName(status.getProfileConfigMap()).get();
        long sent = 0;
        for (var probe : capacity.getProbes()) {
            assertThat(probe.getAttemptedRequests()).isEqualTo(40);
            JsonNode profile = JSON.readTree(output.getData().get(probe.getProfile()));
            assertThat(profile.get("metrics").get("completed").asLong()).isEqualTo(40);
            sent += profile.get("metrics").get("requests_sent").asLong();
            // every attainment carries its 95 % interval (40 of 40 good: 91.2-100 %, a pass)
            assertThat(probe.getSloAttainmentLow())
                    .isLessThanOrEqualTo(probe.getSloAttainment())
                    .isGreaterThanOrEqualTo(0.0);
            assertThat(probe.getSloAttainmentHigh())
                    .isGreaterThanOrEqualTo(probe.getSloAttainment())
                    .isLessThanOrEqualTo(1.0);
            if (probe.getPassed() == null) {
                if (probe.getLoadDelivered()) {
                    // near the knee: the attainment's interval straddles the minimum, and the
                    // search probed the rate again
                    assertThat(probe.getVerdict()).isEqualTo("Indeterminate");
                    assertThat(probe.getSloAttainmentLow()).isLessThan(0.9);
                    assertThat(probe.getSloAttainmentHigh()).isGreaterThan(0.9);
                    continue;
                }
                // the runner could not hold the rate (a loaded node): the search counted this
                // probe neither as pass nor fail, and said why
                assertThat(probe.getVerdict()).isEqualTo("LoadNotDelivered");
                continue;
            }
            assertThat(probe.getLoadDelivered()).isTrue();
            if (probe.getPassed()) {
                assertThat(probe.getSloAttainment())
                        .as("attainment of the passing probe at %s req/s", probe.getRequestRate())
                        .isGreaterThanOrEqualTo(0.9);
            }
            // a probe that failed below the passing rate would have lowered the bracket
            assertThat(probe.getPassed()).isEqualTo(probe.getRequestRate() <= passing);
        }
        // the bracket's edges are delivered probes
        assertThat(capacity.getProbes())
                .anyMatch(p -> Boolean.TRUE.equals(p.getPassed()) && p.getRequestRate() == passing)
                .anyMatch(
                        p -> Boolean.FALSE.equals(p.getPassed()) && p.getRequestRate() == failing);
        assertThat(status.getResults()).hasSize(capacity.getProbes().size());
        assertThat(capacity.getConfidence()).contains("at 95 % confidence");
        // the simulator served exactly what the probes sent (no warm-up in this run)
        assertThat(simulatorSuccesses(ns)).isEqualTo((double) sent);
        String table = cluster.kubectl("get", "br", "-n", ns);
        Map<String, String> cells =
                cellsByHeader(table.lines().toList().get(0), table.lines().toList().get(1));
        assertThat(cells.get("CAPACITY")).as("Capacity column of%n%s", table).isNotBlank();
    }

    /**
     * The runner ServiceAccount the chart installs has exactly the runner Role, as the API server
     * sees a pod using it: its own rules review lists nothing more (beyond the self-reviews every
     * authenticated user may create), what the Role allows succeeds and what it leaves out is
     * refused — here and in another namespace. The probe is {@link RunnerRbacProbe} (JDK only), run
     * by the runner image's JVM with the ServiceAccount's projected token.
     */
    @Test
    @Order(8)
    void runnerServiceAccountFromTheChartHasExactlyTheRunnerRoleFromInsideAPod() throws Exception {
        String ns = NS_RBAC;
        ConfigMapClasses probe =
                ConfigMapClasses.create(
                        client, ns, "probe-classes", RunnerRbacProbe.class, "/probe");
        apply(
                """
                apiVersion: v1
                kind: Pod
                metadata: {name: rbac-probe, namespace: %s}
                spec:
                  restartPolicy: Never
                  serviceAccountName: inferencebench-runner
                  %s
                  containers: [%s]
                  volumes: [%s]
                """
                        .formatted(
                                ns,
                                PodYaml.RESTRICTED_POD_SECURITY,
                                probe.container(
                                        "probe",
                                        cluster.reference("runner"),
                                        "",
                                        ChartCluster.SYSTEM),
                                probe.volume()));
        await().atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () -> {
                            String phase =
                                    client.pods()
                                            .inNamespace(ns)
                                            .withName("rbac-probe")
                                            .get()
                                            .getStatus()
                                            .getPhase();
                            return "Succeeded".equals(phase) || "Failed".equals(phase);
                        });
        String log = client.pods().inNamespace(ns).withName("rbac-probe").getLog();
        System.out.println("[rbac-probe]\n" + log);
        assertThat(
                        client.pods()
                                .inNamespace(ns)
                                .withName("rbac-probe")
                                .get()
                                .getStatus()
                                .getPhase())
                .as(log)
                .isEqualTo("Succeeded");
        Map<String, Integer> status = new java.util.HashMap<>();
        Map<String, String> body = new java.util.HashMap<>();
        for (String line : log.lines().toList()) {
            String[] parts = line.split(" ", 3);
            if (parts.length == 3 && parts[1].matches("\\d{3}")) {
                status.put(parts[0], Integer.parseInt(parts[1]));
                body.put(parts[0], parts[2]);
            }
        }
        // who the pod is: the chart's runner ServiceAccount, with a token bound to this pod
        assertThat(status).containsEntry("whoami", 201);
        JsonNode user = JSON.readTree(body.get("whoami")).path("status").path("userInfo");
        assertThat(user.path("username").asText())
                .isEqualTo("system:serviceaccount:" + ns + ":inferencebench-runner");
        assertThat(user.path("extra").path("authentication.kubernetes.io/pod-name").toString())
                .isEqualTo("[\"rbac-probe\"]");
        // what it may do in its namespace: exactly the Role
        assertThat(status).containsEntry("rules", 201);
        JsonNode rules = JSON.readTree(body.get("rules")).path("status");
        assertThat(rules.path("incomplete").asBoolean()).as(rules.toString()).isFalse();
        java.util.Set<String> granted = new java.util.TreeSet<>();
        for (JsonNode rule : rules.path("resourceRules")) {
            assertThat(rule.path("resourceNames").size()).as(rule.toString()).isZero();
            for (JsonNode group : rule.path("apiGroups")) {
                for (JsonNode resource : rule.path("resources")) {
                    // every authenticated user may create its own access, rules and user
                    // reviews (system:basic-user)
                    boolean selfReview =
                            resource.asText().startsWith("selfsubject")
                                    && List.of("authorization.k8s.io", "authentication.k8s.io")
                                            .contains(group.asText());
                    for (JsonNode verb : rule.path("verbs")) {
                        if (!(selfReview && verb.asText().equals("create"))) {
                            granted.add(
                                    group.asText() + "/" + resource.asText() + ":" + verb.asText());
                        }
                    }
                }
            }
        }
        assertThat(granted)
                .as("rules of the runner ServiceAccount in %s: %s", ns, rules)
                .containsExactlyInAnyOrder(
                        "/configmaps:create",
                        "/configmaps:get",
                        "/configmaps:list",
                        "/configmaps:patch",
                        "/configmaps:update",
                        "/configmaps:watch",
                        "inferencebench.io/benchmarkruns:get");
        // and the API server acts on them
        assertThat(status)
                .containsEntry("list-configmaps", 200)
                .containsEntry("create-configmap", 201)
                .containsEntry("delete-configmap", 403)
                .containsEntry("list-secrets", 403)
                .containsEntry("list-pods", 403)
                .containsEntry("list-jobs", 403)
                .containsEntry("list-benchmarkruns", 403)
                .containsEntry("list-configmaps-elsewhere", 403)
                .containsEntry("create-configmap-elsewhere", 403);
        assertThat(client.configMaps().inNamespace(ns).withName("probe").get())
                .as("the dry-run create stored nothing")
                .isNull();
    }

    /**
     * Deleting a finished run removes what is left of it through the cluster's garbage collector
     * (owner references): after the sweep ({@code cleanupPolicy: OnSuccess}, so the operator has
     * already removed the runner Job, work order and control ConfigMap) its part ConfigMaps and the
     * profile ConfigMap (no {@code spec.output.retain}); the simulator it did not own stays.
     */
    @Test
    @Order(9)
    void deletingARunGarbageCollectsEverythingItOwns() {
        String ns = NS_SWEEP;
        BenchmarkRun run = run(ns, "sweep");
        assertThat(run).as("the sweep run of scenario 1").isNotNull();
        String uid = run.getMetadata().getUid();
        java.util.function.Supplier<List<String>> owned =
                () -> {
                    List<String> names = new ArrayList<>();
                    for (ConfigMap cm : client.configMaps().inNamespace(ns).list().getItems()) {
                        if (cm.getMetadata().getOwnerReferences().stream()
                                .anyMatch(o -> o.getUid().equals(uid))) {
                            names.add("ConfigMap/" + cm.getMetadata().getName());
                        }
                    }
                    for (var job : client.batch().v1().jobs().inNamespace(ns).list().getItems()) {
                        if (job.getMetadata().getOwnerReferences().stream()
                                .anyMatch(o -> o.getUid().equals(uid))) {
                            names.add("Job/" + job.getMetadata().getName());
                        }
                    }
                    return names;
                };
        List<String> before = owned.get();
        System.out.println("owned by the sweep run before its deletion: " + before);
        assertThat(before)
                .contains(
                        "ConfigMap/" + run.getStatus().getProfileConfigMap(),
                        "ConfigMap/" + ResourceNames.part("sweep", 0),
                        "ConfigMap/" + ResourceNames.part("sweep", 1));
        client.resources(BenchmarkRun.class).inNamespace(ns).withName("sweep").delete();
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(250))
                .until(() -> run(ns, "sweep") == null && owned.get().isEmpty());
        assertThat(runnerPods(ns, "sweep")).isEmpty();
        // the simulator, which the run did not own, is still there
        assertThat(client.apps().deployments().inNamespace(ns).withName("sim").get()).isNotNull();
    }

    @Test
    @Order(10)
    void aRunnerPodWithATinyCpuLimitDidNotDeliverItsLoadAndTheRunSaysWhy() {
        // A 100m limit is a tenth of a core under a CFS quota the kubelet enforces; 1,000 req/s
        // needs several times that. The simulator of scenario 3 (applied again: idempotent).
        String ns = NS_CANCEL;
        deploySimulator(ns, "sim");
        String yaml =
                sweep("starved", "sim", "1000", 2000, 1, "", "OnSuccess")
                        .replace("limits: {memory: 768Mi}", "limits: {cpu: 100m, memory: 768Mi}");
        assertThat(yaml).contains("limits: {cpu: 100m");
        createRun(ns, yaml);
        BenchmarkRun done = awaitPhase(ns, "starved", Duration.ofMinutes(6), Phase.SUCCEEDED);
        var stage = done.getStatus().getResults().get(0);
        System.out.println(
                "starved runner: achieved "
                        + stage.getAchievedRate()
                        + " req/s, LoadDelivered "
                        + stage.getLoadDelivered()
                        + " ("
                        + stage.getLoadDeliveredReason()
                        + ")");
        assertThat(stage.getLoadDelivered()).isFalse();
        assertThat(stage.getLoadDeliveredReason()).isEqualTo("RunnerSaturated");
        var delivered = done.getStatus().condition(ConditionTypes.LOAD_DELIVERED).orElseThrow();
        System.out.println("LoadDelivered: " + delivered.getMessage());
        assertThat(delivered.getStatus()).isEqualTo("False");
        assertThat(delivered.getReason()).isEqualTo("RunnerSaturated");
        // The quota, not the rounded-up CPU count the JVM sees, is what the runner may use;
        // which rule fires first (its quota used up, throttled, or waiting behind other
        // processes on a busy node) depends on the node.
        assertThat(delivered.getMessage())
                .containsPattern("^stage 1: (the runner|runner 0) ran out of its 0\\.10 CPU: ")
                .containsPattern("used \\d+ % of it|throttled it|waited [0-9.]+ s for a CPU");
    }

    private static void assertMatchesWhatTheSimulatorObserved(JsonNode profile, long requests) {
        JsonNode metrics = profile.get("metrics");
        assertThat(metrics).as("LPG metrics of %s", profile).isNotNull();
        JsonNode server = metrics.get("server_metrics");
        assertThat(server).as("server_metrics in %s", metrics).isNotNull();
        double serverTtft = number(server.get("vllm:time_to_first_token_seconds"), "Mean") * 1000;
        double serverItl = number(server.get("vllm:inter_token_latency_seconds"), "Mean") * 1000;
        double serverE2e = number(server.get("vllm:e2e_request_latency_seconds"), "Mean") * 1000;
        double ttft = metrics.get("avg_ttft_ms").asDouble();
        double e2e = metrics.get("avg_e2el_ms").asDouble();
        double itl = metrics.get("avg_itl_ms").asDouble();
        System.out.printf(
                "stage %s at %s req/s: runners sent %s; TTFT mean %.2f ms (server %.2f), ITL mean"
                        + " %.2f ms (server %.2f), E2E mean %.2f ms (server %.2f), first to last"
                        + " token %.2f ms (server %.2f); coverage %s%n",
                metrics.path("stage_index").asText(),
                metrics.path("request_rate").asText(),
                metrics.path("requests_sent").asText(),
                ttft,
                serverTtft,
                itl,
                serverItl,
                e2e,
                serverE2e,
                e2e - ttft,
                serverE2e - serverTtft,
                metrics.path("server_metrics_coverage"));
        assertThat(metrics.get("requests_sent").asLong()).isEqualTo(requests);
        assertThat(metrics.get("completed").asLong()).isEqualTo(requests);
        assertThat(metrics.get("failures").asLong()).isZero();
        assertThat(number(server.get("vllm:request_success_total"), "Increase"))
                .as("requests the simulator served in the stage window")
                .isEqualTo((double) requests);
        assertThat(number(server.get("vllm:generation_tokens_total"), "Increase"))
                .isEqualTo(metrics.get("total_output_token").asDouble());
        assertThat(number(server.get("vllm:time_to_first_token_seconds"), "Count"))
                .isEqualTo((double) requests);
        // the simulator applied its flags (so the comparisons below compare real latencies)
        assertThat(serverTtft).isGreaterThanOrEqualTo(SIM_TTFT_MS);
        assertThat(ttft).as("runner TTFT mean vs the server's").isGreaterThanOrEqualTo(serverTtft);
        assertThat(e2e).as("runner E2E mean vs the server's").isGreaterThanOrEqualTo(serverE2e);
        double serverDecode = serverE2e - serverTtft;
        assertThat(e2e - ttft)
                .as("first to last token, runner vs server")
                .isBetween(0.5 * serverDecode, 2 * serverDecode);
        assertThat(itl)
                .as("runner ITL mean vs the server's")
                .isBetween(0.5 * serverItl, 2 * serverItl);
    }

    /**
     * The simulator in {@code ns} served the warm-ups (split between the runners) plus two stages
     * of {@code numPrompts}: nothing more, nothing lost.
     */
    private void assertSimulatorServedWarmUpsAndTwoStages(String ns, int numPrompts)
            throws Exception {
        assertThat(simulatorSuccesses(ns))
                .as(
                        "what the simulator served: the warm-ups (split between the runners) plus both"
                                + " stages")
                .isEqualTo((double) WARMUP_REQUESTS + 2 * numPrompts);
    }

    /** The simulator's own request counter, read by the test from its /metrics (ClusterIP). */
    private double simulatorSuccesses(String ns) throws Exception {
        return SimulatorDeployment.requestSuccesses(
                http, "http://" + clusterIp(ns, "sim") + ":8000/metrics");
    }

    private static double number(JsonNode stat, String field) {
        assertThat(stat).as("server metric with %s", field).isNotNull();
        assertThat(stat.get(field)).as("%s of %s", field, stat).isNotNull();
        return Double.parseDouble(stat.get(field).asText());
    }

    // ---------------------------------------------------------------- fixtures

    private static void deploySimulator(String ns, String name) {
        deploySimulator(ns, name, SIM_TTFT_MS, SIM_ITL_MS, 256);
    }

    private static void deploySimulator(
            String ns, String name, int ttftMs, int itlMs, int maxNumSeqs) {
        cluster.deployScenarioSimulator(ns, name, MODEL, ttftMs, itlMs, maxNumSeqs);
    }

    /**
     * {@link AuthCheckProxy} in front of the simulator: its classes from a ConfigMap, run by the
     * runner image's JVM ({@code java -cp}), the expected key from the Secret.
     */
    private static void deployAuthProxy(String ns) throws IOException {
        ConfigMapClasses guard =
                ConfigMapClasses.create(
                        client, ns, "guard-classes", AuthCheckProxy.class, "/guard");
        String env =
                ("env: [{name: UPSTREAM, value: \"http://sim.%s.svc:8000\"},"
                                + " {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}},"
                                + " {name: EXPECTED_API_KEY,"
                                + " valueFrom: {secretKeyRef: {name: model-key, key: token}}}], ")
                        .formatted(ns);
        String ports =
                "ports: [{name: http, containerPort: 8000}],"
                        + " readinessProbe: {httpGet: {path: /auth-counts, port: http},"
                        + " periodSeconds: 1}, ";
        apply(
                PodYaml.deployment(
                                ns,
                                "guard",
                                """
                                automountServiceAccountToken: false
                                %s
                                containers: [%s]
                                volumes: [%s]
                                """
                                        .formatted(
                                                PodYaml.RESTRICTED_POD_SECURITY,
                                                guard.container(
                                                        "guard",
                                                        cluster.reference("runner"),
                                                        env + ports),
                                                guard.volume()))
                        + "---\n"
                        + PodYaml.service(ns, "guard", 8000));
        awaitReadyPod(ns, "guard", Duration.ofMinutes(2));
    }

    /** Server-side applies each document of a multi-document YAML. */
    private static void apply(String yaml) {
        for (String doc : yaml.split("(?m)^---$")) {
            if (!doc.isBlank()) {
                client.resource(doc).serverSideApply();
            }
        }
    }

    private static void awaitReadyPod(String ns, String app, Duration atMost) {
        await().atMost(atMost)
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () ->
                                client
                                        .pods()
                                        .inNamespace(ns)
                                        .withLabel("app", app)
                                        .list()
                                        .getItems()
                                        .stream()
                                        .anyMatch(ChartCluster::ready));
    }

    private static void createRun(String ns, String yaml) {
        Runs.create(client, ns, yaml);
    }

    /** A streaming completions sweep against {@code service}, 16 input and 8 output tokens. */
    private static String sweep(
            String name,
            String service,
            String rates,
            int numPrompts,
            int parallelism,
            String extraTarget,
            String cleanup) {
        return RunYaml.named(name)
                .target(service, MODEL)
                .targetExtra(extraTarget)
                .load(rates, numPrompts, WARMUP_REQUESTS)
                .runner(parallelism, cleanup)
                .yaml();
    }

    private static BenchmarkRun run(String ns, String name) {
        return Runs.get(client, ns, name);
    }

    private static Phase phase(String ns, String name) {
        return Runs.phase(client, ns, name);
    }

    private static BenchmarkRun awaitPhase(
            String ns, String name, Duration atMost, Phase... phases) {
        return Runs.awaitPhase(client, ns, name, atMost, phases);
    }

    /**
     * Deploys the simulator in {@code ns} and starts run {@code name}: three stages of 12 prompts
     * at 4 req/s over {@code parallelism} runner pods; returns once the first stage has finished
     * and the run still runs (what the interruption scenarios interrupt).
     */
    private static void startThreeStagesAndAwaitTheFirst(String ns, String name, int parallelism) {
        deploySimulator(ns, "sim");
        createRun(ns, sweep(name, "sim", "4, 4, 4", 12, parallelism, "", "OnSuccess"));
        awaitOrEnd(ns, name, r -> finishedStages(r) >= 1);
        assertThat(phase(ns, name)).isEqualTo(Phase.RUNNING);
    }

    /**
     * A run of {@link #startThreeStagesAndAwaitTheFirst} ended early and kept what it finished: one
     * or two stages, each with its profile, the first matching what the simulator observed and in
     * the output ConfigMap.
     */
    private static void assertFinishedStagesKept(String ns, BenchmarkRunStatus status) {
        assertThat(status.getResults()).hasSizeBetween(1, 2);
        assertThat(status.getProfiles()).hasSameSizeAs(status.getResults());
        assertMatchesWhatTheSimulatorObserved(status.getProfiles().get(0), 12);
        ConfigMap output =
                client.configMaps().inNamespace(ns).withName(status.getProfileConfigMap()).get();
        assertThat(output.getData()).containsKey(status.getResults().get(0).getProfileKey());
    }

    private static int finishedStages(BenchmarkRun run) {
        return run == null || run.getStatus() == null || run.getStatus().getResults() == null
                ? 0
                : run.getStatus().getResults().size();
    }

    /** Waits up to 4 minutes until the run has {@code reached} a point or has ended. */
    private static void awaitOrEnd(String ns, String name, Predicate<BenchmarkRun> reached) {
        Runs.awaitOrEnd(client, ns, name, Duration.ofMinutes(4), reached);
    }

    private static List<Pod> runnerPods(String ns, String run) {
        return client.pods()
                .inNamespace(ns)
                .withLabel("job-name", ResourceNames.runner(run))
                .list()
                .getItems();
    }

    private static long sumOfParts(String ns, String run, int parallelism, int stage, String field)
            throws IOException {
        return Runs.sumOfParts(client, ns, run, parallelism, stage, field);
    }

    private static String clusterIp(String ns, String service) {
        return client.services().inNamespace(ns).withName(service).get().getSpec().getClusterIP();
    }

    private HttpResponse<String> get(String url) throws Exception {
        return HttpGet.get(http, url);
    }
}
