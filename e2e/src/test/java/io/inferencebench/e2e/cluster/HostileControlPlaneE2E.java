package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.e2e.SimulatorDeployment;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A hostile control plane on the real node, with the product as users install it ({@link
 * ChartCluster}: the chart's operator Deployment, scaled to two replicas that compete for the
 * leader-election Lease with short timings from the chart's {@code leaderElection.*} values). Each
 * scenario runs a 2-stage sweep with two runner pods, 12 prompts per stage, and injects one fault
 * mid-stage:
 *
 * <ol>
 *   <li>the leader's container process is SIGKILLed (containerd task kill): the other replica takes
 *       the Lease, no earlier than the dead leader's last renewal plus the lease duration as the
 *       API server stored them, and completes the run;
 *   <li>kube-apiserver is stopped and started again (same flags, port, certificates, etcd):
 *       kubelet, runners and operator reconnect and the run completes;
 *   <li>etcd is frozen (SIGSTOP) for 5 s and resumed.
 * </ol>
 *
 * <p>Every run must succeed with exact counts: the runners' parts, and the simulator's own {@code
 * vllm:request_success_total} (read by the test) against the warm-ups plus both stages; a stage's
 * server-metric increase is either exactly the stage's requests or left out with the reason in its
 * coverage errors, never a smaller number. A stage whose scrapes were lost to the fault shows it in
 * its coverage, and {@code ServerMetricsCollected} follows the lowest coverage.
 *
 * <p>Needs root and {@code make images}; {@code make e2e-node} runs it (not in {@code make test}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HostileControlPlaneE2E {

    static final String MODEL = "tiny-model";
    static final int PROMPTS = 12;
    static final int WARMUP_REQUESTS = 2;
    static final String LEASE = "inferencebench-operator-lease";

    /**
     * Short enough that a takeover happens within a stage or two; the renew deadline stays above
     * the API server's restart time on this busy node, so the leader survives scenarios 2 and 3.
     */
    static final int LEASE_SECONDS = 15;

    static final int RENEW_DEADLINE_SECONDS = 12;

    static final List<String> CHART_VALUES =
            List.of(
                    "leaderElection.leaseDuration=" + LEASE_SECONDS + "s",
                    "leaderElection.renewDeadline=" + RENEW_DEADLINE_SECONDS + "s",
                    "leaderElection.retryPeriod=2s");

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Closed after the last test (null when it never started: JUnit then only logs that). */
    @AutoClose private static ChartCluster cluster;

    private static KubernetesClient client;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

    @BeforeAll
    static void startCluster() {
        // the faults are injected into the node's own processes (containerd task, kube-apiserver,
        // etcd), which only the real node exposes
        org.junit.jupiter.api.Assumptions.assumeTrue(
                "node".equals(System.getProperty(TestCluster.PROPERTY, "node")),
                "HostileControlPlaneE2E runs on the real node only");
        cluster =
                ChartCluster.start(
                        List.of("hc-kill", "hc-apiserver", "hc-etcd"),
                        Path.of("target/hostile-control-plane-logs").toAbsolutePath(),
                        CHART_VALUES);
        client = cluster.client;
        // a standby next to the leader
        client.apps()
                .deployments()
                .inNamespace(ChartCluster.SYSTEM)
                .withName(ChartCluster.OPERATOR)
                .scale(2);
        await().atMost(Duration.ofMinutes(3))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> runningOperatorPods().size() == 2 && leaderPod() != null);
        Lease lease = lease();
        System.out.printf(
                "[hostile] two operator pods %s; Lease held by %s (duration %d s, transitions %d)%n",
                runningOperatorPods().stream().map(p -> p.getMetadata().getName()).toList(),
                lease.getSpec().getHolderIdentity(),
                lease.getSpec().getLeaseDurationSeconds(),
                lease.getSpec().getLeaseTransitions());
        assertThat(lease.getSpec().getLeaseDurationSeconds())
                .as("the chart's leaderElection.leaseDuration reached the Lease")
                .isEqualTo(LEASE_SECONDS);
    }

    // ---------------------------------------------------------------- scenarios

    @Test
    @Order(1)
    void theLeaderKilledMidStageIsReplacedByTheStandbyAfterTheLeaseAndTheRunCompletes()
            throws Exception {
        String ns = "hc-kill";
        Instant barrier = startRunAndAwaitCheckpoint(ns, "killed");

        Pod leader = leaderPod();
        Lease before = lease();
        String deadHolder = before.getSpec().getHolderIdentity();
        String containerId = operatorContainerId(leader);
        var killed =
                cluster.node.ctr(
                        List.of("-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", containerId),
                        Duration.ofSeconds(20));
        Instant killedAt = Instant.now();
        assertThat(killed.ok()).as("ctr tasks kill: %s", killed.output()).isTrue();
        assertThat(phase(ns, "killed")).as("killed mid-run").isEqualTo(Phase.RUNNING);

        // The Lease as the API server stores it. Until the takeover every read shows the dead
        // holder's newest renewal (nothing else writes the record), so the last one read before
        // the holder changed is its last renewal.
        var lastRenewal =
                new java.util.concurrent.atomic.AtomicReference<Instant>(
                        before.getSpec().getRenewTime().toInstant());
        Lease taken =
                await().atMost(Duration.ofSeconds(LEASE_SECONDS + 90))
                        .pollInterval(Duration.ofMillis(250))
                        .until(
                                () -> {
                                    Lease l = lease();
                                    if (deadHolder.equals(l.getSpec().getHolderIdentity())) {
                                        lastRenewal.set(l.getSpec().getRenewTime().toInstant());
                                    }
                                    return l;
                                },
                                l -> !deadHolder.equals(l.getSpec().getHolderIdentity()));
        Instant acquired = taken.getSpec().getAcquireTime().toInstant();
        System.out.printf(
                "[hostile] SIGKILL of %s (%s) at %s; Lease last renewed by it at %s, taken by %s"
                        + " at %s (%d ms after renewal + %d s), transitions %d -> %d%n",
                leader.getMetadata().getName(),
                deadHolder,
                killedAt,
                lastRenewal.get(),
                taken.getSpec().getHolderIdentity(),
                acquired,
                Duration.between(lastRenewal.get().plusSeconds(LEASE_SECONDS), acquired).toMillis(),
                LEASE_SECONDS,
                before.getSpec().getLeaseTransitions(),
                taken.getSpec().getLeaseTransitions());
        assertThat(acquired)
                .as("the new leader took the Lease no earlier than the last renewal + lease")
                .isAfterOrEqualTo(lastRenewal.get().plusSeconds(LEASE_SECONDS));
        assertThat(lastRenewal.get())
                .as("the dead leader renewed nothing after it was killed")
                .isBefore(killedAt.plusSeconds(1));
        assertThat(taken.getSpec().getLeaseTransitions())
                .isEqualTo(before.getSpec().getLeaseTransitions() + 1);
        assertThat(taken.getSpec().getHolderIdentity())
                .as("the new holder is an operator process of one of the Deployment's pods")
                .satisfies(
                        h ->
                                assertThat(
                                                cluster.operatorPods().stream()
                                                        .map(p -> p.getMetadata().getName())
                                                        .anyMatch(n -> h.startsWith(n + "_")))
                                        .isTrue());

        BenchmarkRun done = awaitPhase(ns, "killed", Duration.ofMinutes(4), Phase.SUCCEEDED);
        assertExactCounts(ns, "killed", done);
        assertThat(Instant.parse(done.getStatus().getCompletionTime()))
                .as("the new leader finished the run")
                .isAfterOrEqualTo(acquired.minusSeconds(1));
        // the stage that ran without a leader lost scrapes, and says so
        int stageOfKill = stageRunningAt(done, killedAt);
        assertThat(stageOfKill).as("the kill fell inside a stage").isPositive();
        assertLostScrapesShow(done, stageOfKill);
    }

    @Test
    @Order(2)
    void aKubeApiServerRestartedMidStageLosesNothing() throws Exception {
        String ns = "hc-apiserver";
        Instant barrier = startRunAndAwaitCheckpoint(ns, "restarted");
        var leaseBefore = lease().getSpec();
        String leaderBefore = leaseBefore.getHolderIdentity();

        Instant stoppedAt = Instant.now();
        Duration down = cluster.node.controlPlane().restartApiServer();
        System.out.printf(
                "[hostile] kube-apiserver restarted at %s: %d ms until /readyz answered again%n",
                stoppedAt, down.toMillis());

        BenchmarkRun done = awaitPhase(ns, "restarted", Duration.ofMinutes(4), Phase.SUCCEEDED);
        assertExactCounts(ns, "restarted", done);
        assertThat(stageRunningAt(done, stoppedAt))
                .as("the restart fell inside a stage (as the runners recorded it)")
                .isPositive();
        var leaseAfter = lease().getSpec();
        System.out.printf(
                "[hostile] Lease holder before the restart %s, after %s; transitions %d -> %d%n",
                leaderBefore,
                leaseAfter.getHolderIdentity(),
                leaseBefore.getLeaseTransitions(),
                leaseAfter.getLeaseTransitions());
        if (down.toMillis() < RENEW_DEADLINE_SECONDS * 1000L / 2) {
            // away for less than half the renew deadline: the leader's retries span it
            assertThat(leaseAfter.getHolderIdentity())
                    .as(
                            "the leader renewed across a %d ms outage (renew deadline %d s)",
                            down.toMillis(), RENEW_DEADLINE_SECONDS)
                    .isEqualTo(leaderBefore);
        } else if (!leaderBefore.equals(leaseAfter.getHolderIdentity())) {
            // the outage plus the time since the last renewal reached the renew deadline (a
            // loaded machine restarts the API server slowly): the leader stepped down and a
            // replica took over, and the run above still completed with exact counts
            assertThat(leaseAfter.getLeaseTransitions())
                    .isGreaterThan(leaseBefore.getLeaseTransitions());
        }
        // a leader that stepped down exits and its container restarts: both replicas run again
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> runningOperatorPods().size() == 2);
        // rounds during the outage either waited for the API server (the client retries) or were
        // lost; whichever it was, the condition follows the coverage the profiles report
        assertConditionFollowsCoverage(done, stageRunningAt(done, stoppedAt));
    }

    @Test
    @Order(3)
    void etcdFrozenForFiveSecondsMidStageLosesNothing() throws Exception {
        String ns = "hc-etcd";
        Instant barrier = startRunAndAwaitCheckpoint(ns, "frozen");
        String leaderBefore = lease().getSpec().getHolderIdentity();

        Instant pausedAt = Instant.now();
        cluster.node.controlPlane().pauseEtcd();
        try {
            Thread.sleep(5_000);
        } finally {
            cluster.node.controlPlane().resumeEtcd();
        }
        System.out.printf("[hostile] etcd frozen from %s for 5 s%n", pausedAt);

        BenchmarkRun done = awaitPhase(ns, "frozen", Duration.ofMinutes(4), Phase.SUCCEEDED);
        assertExactCounts(ns, "frozen", done);
        assertThat(stageRunningAt(done, pausedAt))
                .as("the pause fell inside a stage (as the runners recorded it)")
                .isPositive();
        assertThat(lease().getSpec().getHolderIdentity()).isEqualTo(leaderBefore);
        assertConditionFollowsCoverage(done, stageRunningAt(done, pausedAt));
    }

    // ---------------------------------------------------------------- assertions

    /**
     * Counts against the runners' parts and the simulator's own counter: every prompt of both
     * stages sent and completed, the simulator served exactly the warm-ups plus both stages, and a
     * stage's server-side increase is exact or absent with its reason.
     */
    private void assertExactCounts(String ns, String run, BenchmarkRun done) throws Exception {
        var status = done.getStatus();
        assertThat(status.getResults()).hasSize(2);
        assertThat(status.getProfiles()).hasSize(2);
        for (int stage = 1; stage <= 2; stage++) {
            assertThat(sumOfParts(ns, run, stage, "sent")).isEqualTo(PROMPTS);
            var result = status.getResults().get(stage - 1);
            assertThat(result.getSent()).isEqualTo(PROMPTS);
            assertThat(result.getCompleted()).isEqualTo(PROMPTS);
            assertThat(result.getFailed()).isZero();
            JsonNode metrics = status.getProfiles().get(stage - 1).path("metrics");
            JsonNode coverage = metrics.path("server_metrics_coverage");
            JsonNode success = metrics.path("server_metrics").path("vllm:request_success_total");
            System.out.printf(
                    "[hostile] %s stage %d: sent %d, completed %d; server increase %s; coverage %s%n",
                    run,
                    stage,
                    result.getSent(),
                    result.getCompleted(),
                    success.path("Increase").asText("(left out)"),
                    coverage);
            assertThat(coverage.isMissingNode()).as("coverage of stage %d", stage).isFalse();
            if (success.has("Increase")) {
                assertThat(Double.parseDouble(success.get("Increase").asText()))
                        .as("requests the simulator served in stage %d's window", stage)
                        .isEqualTo((double) PROMPTS);
            } else {
                assertThat(coverage.path("errors").toString())
                        .as("why stage %d has no increases", stage)
                        .contains("left out");
            }
        }
        assertThat(simulatorSuccesses(ns))
                .as("what the simulator served: the warm-ups plus both stages")
                .isEqualTo((double) WARMUP_REQUESTS + 2 * PROMPTS);
    }

    /**
     * A stage whose rounds the fault cost shows it: coverage below 1, and the condition follows the
     * lowest stage coverage (False naming that stage below 80 %).
     */
    private static void assertLostScrapesShow(BenchmarkRun done, int stage) {
        double ratio =
                done.getStatus()
                        .getProfiles()
                        .get(stage - 1)
                        .path("metrics")
                        .path("server_metrics_coverage")
                        .path("ratio")
                        .asDouble();
        assertThat(ratio).as("coverage of stage %d, which lost scrapes", stage).isLessThan(1.0);
        assertConditionFollowsCoverage(done, stage);
    }

    /**
     * {@code ServerMetricsCollected} follows the lowest stage coverage: False with reason {@code
     * LowCoverage} naming that stage below 80 %, else False with {@code IncreasesLeftOut} when a
     * stage's increases were left out, else True.
     */
    private static void assertConditionFollowsCoverage(BenchmarkRun done, int stage) {
        JsonNode coverage =
                done.getStatus()
                        .getProfiles()
                        .get(stage - 1)
                        .path("metrics")
                        .path("server_metrics_coverage");
        var condition =
                done.getStatus().condition(ConditionTypes.SERVER_METRICS_COLLECTED).orElseThrow();
        System.out.printf(
                "[hostile] stage %d coverage %s; ServerMetricsCollected %s %s: %s%n",
                stage,
                coverage,
                condition.getStatus(),
                condition.getReason(),
                condition.getMessage());
        double ratio = coverage.path("ratio").asDouble();
        double lowest = 1;
        boolean leftOut = false;
        for (JsonNode p : done.getStatus().getProfiles()) {
            JsonNode c = p.path("metrics").path("server_metrics_coverage");
            lowest = Math.min(lowest, c.path("ratio").asDouble());
            leftOut |= c.path("increases_left_out").size() > 0;
        }
        if (lowest < 0.8) {
            assertThat(condition.getStatus()).isEqualTo("False");
            assertThat(condition.getReason()).isEqualTo("LowCoverage");
            assertThat(condition.getMessage()).contains("stage ");
            if (ratio == lowest) {
                assertThat(condition.getMessage()).contains("stage " + stage + " only");
            }
        } else if (leftOut) {
            assertThat(condition.getStatus()).isEqualTo("False");
            assertThat(condition.getReason()).isEqualTo("IncreasesLeftOut");
        } else {
            assertThat(condition.getStatus()).isEqualTo("True");
        }
    }

    /** The stage (1-based) whose runner-recorded start and end enclose {@code at}, else 0. */
    private static int stageRunningAt(BenchmarkRun done, Instant at) {
        var results = done.getStatus().getResults();
        for (var r : results) {
            if (r.getStartTime() != null
                    && r.getEndTime() != null
                    && !at.isBefore(Instant.parse(r.getStartTime()))
                    && !at.isAfter(Instant.parse(r.getEndTime()))) {
                return r.getStage();
            }
        }
        System.out.printf(
                "[hostile] %s is outside every stage: %s%n",
                at, results.stream().map(r -> r.getStartTime() + ".." + r.getEndTime()).toList());
        return 0;
    }

    // ---------------------------------------------------------------- Lease and pods

    private static Lease lease() {
        return client.leases().inNamespace(ChartCluster.SYSTEM).withName(LEASE).get();
    }

    /** The operator pod whose process holds the Lease (holder = pod name + "_" + suffix). */
    private static Pod leaderPod() {
        Lease lease = lease();
        if (lease == null
                || lease.getSpec() == null
                || lease.getSpec().getHolderIdentity() == null) {
            return null;
        }
        String holder = lease.getSpec().getHolderIdentity();
        return runningOperatorPods().stream()
                .filter(p -> holder.startsWith(p.getMetadata().getName() + "_"))
                .findFirst()
                .orElse(null);
    }

    private static List<Pod> runningOperatorPods() {
        return cluster.operatorPods().stream()
                .filter(
                        p ->
                                p.getStatus() != null
                                        && p.getStatus().getContainerStatuses() != null
                                        && p.getStatus().getContainerStatuses().stream()
                                                .anyMatch(
                                                        c ->
                                                                c.getState() != null
                                                                        && c.getState().getRunning()
                                                                                != null))
                .toList();
    }

    private static String operatorContainerId(Pod pod) {
        ContainerStatus status =
                pod.getStatus().getContainerStatuses().stream()
                        .filter(c -> c.getName().equals("operator"))
                        .findFirst()
                        .orElseThrow();
        String id = status.getContainerID();
        assertThat(id)
                .as("container ID of %s", pod.getMetadata().getName())
                .startsWith("containerd://");
        return id.substring("containerd://".length());
    }

    // ---------------------------------------------------------------- run helpers

    /**
     * Whether the run's server-metrics checkpoint holds a successful scrape stamped at {@code at}
     * (the stage's start barrier), decoded as the operator stores it (gzip'd JSON).
     */
    private static boolean checkpointHoldsScrapeAt(String ns, String run, Instant at)
            throws IOException {
        ConfigMap cm =
                client.configMaps()
                        .inNamespace(ns)
                        .withName(ResourceNames.serverMetrics(run))
                        .get();
        if (cm == null || cm.getBinaryData() == null) {
            return false;
        }
        String data = cm.getBinaryData().get("scrapes.json.gz");
        if (data == null) {
            return false;
        }
        try (var in =
                new GZIPInputStream(new ByteArrayInputStream(Base64.getDecoder().decode(data)))) {
            for (JsonNode s : JSON.readTree(in).path("scrapes")) {
                if (s.path("t").asLong() == at.toEpochMilli() && !s.hasNonNull("e")) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Deploys the simulator in {@code ns}, creates run {@code name} and waits until its first stage
     * has started and the window's start scrape is checkpointed (so the next leader has the stage's
     * baseline): the moment each fault strikes. Returns the stage's start barrier.
     */
    private static Instant startRunAndAwaitCheckpoint(String ns, String name) {
        deploySimulator(ns);
        createRun(ns, name);
        Instant barrier = awaitStageStart(ns, name, 1);
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> checkpointHoldsScrapeAt(ns, name, barrier));
        return barrier;
    }

    private static Instant awaitStageStart(String ns, String run, int stage) {
        Runs.awaitOrEnd(
                client,
                ns,
                run,
                Duration.ofMinutes(4),
                r ->
                        r.getStatus() != null
                                && r.getStatus().getStageStartTimes() != null
                                && r.getStatus().getStageStartTimes().size() >= stage);
        assertThat(phase(ns, run)).isEqualTo(Phase.RUNNING);
        Instant barrier =
                Instant.parse(run(ns, run).getStatus().getStageStartTimes().get(stage - 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> Instant.now().isAfter(barrier));
        return barrier;
    }

    /** The simulator as Deployment and Service {@code sim:8000}, 20 ms TTFT, 5 ms ITL. */
    private static void deploySimulator(String ns) {
        cluster.deployScenarioSimulator(ns, "sim", MODEL, 20, 5, 256);
    }

    /**
     * Two stages of 12 prompts at 1 request/s (two runner pods at 0.5 each: a 12 s stage), the
     * target's metrics scraped every second.
     */
    private static void createRun(String ns, String name) {
        Runs.create(
                client,
                ns,
                RunYaml.named(name)
                        .target("sim", MODEL)
                        .load("1, 1", PROMPTS, WARMUP_REQUESTS)
                        .metricsEverySecond("")
                        .runner(2, "OnSuccess")
                        .yaml());
    }

    private static BenchmarkRun run(String ns, String name) {
        return Runs.get(client, ns, name);
    }

    private static Phase phase(String ns, String name) {
        return Runs.phase(client, ns, name);
    }

    /** Waits for the run to end (a fault may make it fail) and asserts it ended {@code wanted}. */
    private static BenchmarkRun awaitPhase(String ns, String name, Duration atMost, Phase wanted) {
        return Runs.awaitPhase(client, ns, name, atMost, wanted);
    }

    private static long sumOfParts(String ns, String run, int stage, String field)
            throws IOException {
        return Runs.sumOfParts(client, ns, run, 2, stage, field);
    }

    /** The simulator's own request counter, read by the test from its /metrics (ClusterIP). */
    private double simulatorSuccesses(String ns) throws Exception {
        String ip =
                client.services().inNamespace(ns).withName("sim").get().getSpec().getClusterIP();
        return SimulatorDeployment.requestSuccesses(http, "http://" + ip + ":8000/metrics");
    }
}
