package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.profile.lpg.StageResult;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The operator-wide cap on active runs ({@value RunAdmission#ENV}=1) on a real kube-apiserver +
 * etcd with the reconciler in-process: three runs applied at once run one after the other, oldest
 * first, the waiting ones Pending with the Queued condition and no runner resources. The test plays
 * the runner pod of whichever run is admitted, and watches every status change the API server
 * records, so "never two active" holds for every state the runs went through, not only for the
 * moments a poll happened to look.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ActiveRunCapIT {

    private static final Set<Phase> ACTIVE =
            Set.of(Phase.INITIALIZING, Phase.RUNNING, Phase.AGGREGATING);

    private static final List<String> NAMES = List.of("queue-a", "queue-b", "queue-c");

    /** Closed after the last test (JUnit closes the fields it marks). */
    @AutoClose private OperatorTestCluster cluster;

    private KubernetesClient client;
    private String namespace;

    /** Phase of every run as the watch last delivered it. */
    private final Map<String, Phase> phases = new ConcurrentHashMap<>();

    /** Highest number of runs past Pending after any watch event. */
    private volatile int mostActive;

    /** Runs in the order their first Initializing status arrived. */
    private final List<String> admissionOrder = Collections.synchronizedList(new ArrayList<>());

    /** Every Queued=True condition message seen, by run. */
    private final Map<String, List<String>> queuedMessages = new ConcurrentHashMap<>();

    /** Statuses the watch delivered that contradict the queue's contract. */
    private final List<String> violations = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll
    void startApiServerAndOperator() {
        cluster =
                OperatorTestCluster.startWithRunOperator(
                        new SimpleMeterRegistry(), new RunAdmission(1));
        client = cluster.client();
        namespace = cluster.createRunNamespace("cap-");
        cluster.createServiceWithOneEndpoint(namespace, "vllm", true);
    }

    @Test
    void threeRunsAppliedAtOnceRunOneAtATimeInCreationOrder() throws Exception {
        try (Watch watch =
                client.resources(BenchmarkRun.class)
                        .inNamespace(namespace)
                        .watch(new PhaseWatcher())) {
            Map<String, BenchmarkRun> runs = new LinkedHashMap<>();
            for (String name : NAMES) {
                runs.put(name, cluster.createRun(namespace, runYaml(name)));
            }
            List<String> played = new ArrayList<>();
            for (int i = 0; i < NAMES.size(); i++) {
                // whichever run the operator let through: the order is asserted below
                String admitted =
                        await().atMost(Duration.ofSeconds(60))
                                .pollInterval(Duration.ofMillis(200))
                                .until(() -> nextInitializing(played), java.util.Objects::nonNull);
                played.add(admitted);
                playRunnerUntilRunning(runs.get(admitted));
                // It holds the only slot until its runner is done: the others wait, queued,
                // without runner resources.
                List<String> waiting = NAMES.stream().filter(n -> !played.contains(n)).toList();
                for (int p = 0; p < waiting.size(); p++) {
                    String expected =
                            "queued: 1 of 1 active runs (INFERENCEBENCH_MAX_ACTIVE_RUNS=1);"
                                    + " position "
                                    + (p + 1)
                                    + " of "
                                    + waiting.size();
                    String name = waiting.get(p);
                    // a queued run looks again every few seconds
                    cluster.awaitRunStatus(namespace, name, s -> expected.equals(s.getMessage()));
                    assertQueuedWithoutRunners(name);
                }
                finishRunner(runs.get(admitted));
                cluster.awaitRunStatus(namespace, admitted, s -> s.getPhase() == Phase.SUCCEEDED);
            }
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> NAMES.stream().allMatch(n -> phases.get(n) == Phase.SUCCEEDED));
        }

        assertThat(violations).isEmpty();
        assertThat(mostActive).as("runs past Pending at any one time").isEqualTo(1);
        assertThat(admissionOrder).containsExactlyElementsOf(NAMES);

        // Only the two later runs waited, and every status they showed meanwhile said so.
        assertThat(queuedMessages).containsOnlyKeys("queue-b", "queue-c");
        for (String name : List.of("queue-b", "queue-c")) {
            assertThat(queuedMessages.get(name))
                    .allMatch(
                            m ->
                                    m.matches(
                                            "queued: [01] of 1 active runs"
                                                    + " \\(INFERENCEBENCH_MAX_ACTIVE_RUNS=1\\);"
                                                    + " position [1-3] of [1-3]"),
                            "a queued message");
        }

        for (String name : NAMES) {
            BenchmarkRunStatus status = cluster.run(namespace, name).getStatus();
            var queued = status.condition(ConditionTypes.QUEUED).orElseThrow();
            assertThat(queued.getStatus()).as(name).isEqualTo("False");
            assertThat(queued.getReason()).as(name).isEqualTo("Admitted");
            assertThat(queued.getMessage())
                    .as(name)
                    .isEqualTo(
                            "admitted as active run 1 of at most 1"
                                    + " (INFERENCEBENCH_MAX_ACTIVE_RUNS=1)");
            // one Normal Event when it joined the queue, not one per reconcile
            assertThat(events(name, "Queued"))
                    .as(name)
                    .hasSize(name.equals("queue-a") ? 0 : 1)
                    .allMatch(e -> "Normal".equals(e.getType()));
        }
    }

    @Test
    void aQueuedRunOutlastsItsReadinessTimeoutAndLeavesTheQueueWhenCancelled() {
        String ns = cluster.createRunNamespace("cap-cancel-");
        cluster.createServiceWithOneEndpoint(ns, "vllm", true);
        // holds the slot: nobody plays its runner, so it stays Initializing
        cluster.createRun(ns, runYaml("holder"));
        cluster.awaitRunStatus(ns, "holder", s -> s.getPhase() == Phase.INITIALIZING);
        cluster.createRun(
                ns,
                runYaml("patient")
                        .replace(
                                "model: google/gemma-7b}",
                                "model: google/gemma-7b, readinessTimeout: 2s}"));
        cluster.awaitRunStatus(ns, "patient", s -> s.condition(ConditionTypes.QUEUED).isPresent());
        // the queue is no target readiness problem: twice the timeout later it still waits
        await().pollDelay(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(5)).until(() -> true);
        BenchmarkRunStatus waiting = cluster.run(ns, "patient").getStatus();
        assertThat(waiting.getPhase()).isEqualTo(Phase.PENDING);
        assertThat(waiting.condition(ConditionTypes.QUEUED).orElseThrow().getStatus())
                .isEqualTo("True");
        assertThat(waiting.getMessage())
                .isEqualTo(
                        "queued: 1 of 1 active runs (INFERENCEBENCH_MAX_ACTIVE_RUNS=1); position 1"
                                + " of 1");

        cancel(ns, "patient");
        BenchmarkRunStatus cancelled =
                cluster.awaitRunStatus(ns, "patient", s -> s.getPhase() == Phase.CANCELLED);
        var queued = cancelled.condition(ConditionTypes.QUEUED).orElseThrow();
        assertThat(queued.getStatus()).isEqualTo("False");
        assertThat(queued.getReason()).isEqualTo("NotAdmitted");
        assertThat(queued.getMessage())
                .isEqualTo("the run ended (Cancelled) before it was let through");
        cancel(ns, "holder");
        cluster.awaitRunStatus(ns, "holder", s -> s.getPhase() == Phase.CANCELLED);
    }

    private void cancel(String ns, String name) {
        client.resources(BenchmarkRun.class)
                .inNamespace(ns)
                .withName(name)
                .edit(
                        r -> {
                            r.getSpec().setCancel(true);
                            return r;
                        });
    }

    private List<Event> events(String run, String reason) {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> run.equals(e.getInvolvedObject().getName()))
                .filter(e -> reason.equals(e.getReason()))
                .toList();
    }

    /** The first run (in {@link #NAMES} order) that is Initializing and not played yet. */
    private String nextInitializing(List<String> played) {
        for (String name : NAMES) {
            BenchmarkRun run = cluster.run(namespace, name);
            if (!played.contains(name)
                    && run.getStatus() != null
                    && run.getStatus().getPhase() == Phase.INITIALIZING) {
                return name;
            }
        }
        return null;
    }

    private void assertQueuedWithoutRunners(String name) {
        BenchmarkRunStatus status = cluster.run(namespace, name).getStatus();
        assertThat(status.getPhase()).as(name).isEqualTo(Phase.PENDING);
        var queued = status.condition(ConditionTypes.QUEUED).orElseThrow();
        assertThat(queued.getStatus()).as(name).isEqualTo("True");
        assertThat(queued.getReason()).as(name).isEqualTo("Queued");
        assertThat(status.getMessage()).as(name).isEqualTo(queued.getMessage());
        assertThat(status.condition(ConditionTypes.TARGET_READY).orElseThrow().getStatus())
                .as(name)
                .isEqualTo("True");
        assertThat(
                        client.batch()
                                .v1()
                                .jobs()
                                .inNamespace(namespace)
                                .withName(name + "-runner")
                                .get())
                .as(name + " runner Job")
                .isNull();
        assertThat(client.configMaps().inNamespace(namespace).withName(name + "-runner").get())
                .as(name + " work order")
                .isNull();
    }

    /** The one runner pod of an admitted run: it reports ready and the first barrier opens. */
    private void playRunnerUntilRunning(BenchmarkRun run) {
        String name = run.getMetadata().getName();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(
                        () ->
                                client.configMaps()
                                                .inNamespace(namespace)
                                                .withName(name + "-runner")
                                                .get()
                                        != null);
        RunParts.write(client, run, 0, Map.of(PartReport.STATE, PartReport.STATE_READY));
        cluster.awaitRunStatus(namespace, name, s -> s.getPhase() == Phase.RUNNING);
    }

    /** The runner pod finishes the run's one stage. */
    private void finishRunner(BenchmarkRun run) {
        RunParts.finishRun(client, run, 0, stageDone(run.getMetadata().getUid()));
    }

    private static Map<String, String> stageDone(String uid) {
        StageResult result =
                RunParts.completedStage(
                        1,
                        5,
                        10,
                        RunParts.epochNanos(Instant.parse("2026-12-02T12:00:00Z")),
                        1_800_000_000L,
                        2_000_000_000L);
        RunParts.recordSteadyRequests(result, 0);
        return RunParts.report(PartReport.STATE_RUNNING, 1, uid, result);
    }

    private static String runYaml(String name) {
        return """
        apiVersion: inferencebench.io/v1alpha1
        kind: BenchmarkRun
        metadata: {name: %s}
        spec:
          target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
          load: {requestRates: [5], numPrompts: 10, cooldown: 0s}
          metrics: {enabled: false}
        """
                .formatted(name);
    }

    /** Replays the API server's record of every run's status changes. */
    private final class PhaseWatcher implements Watcher<BenchmarkRun> {

        @Override
        public void eventReceived(Action action, BenchmarkRun run) {
            String name = run.getMetadata().getName();
            if (action == Action.DELETED) {
                phases.remove(name);
                return;
            }
            BenchmarkRunStatus status = run.getStatus();
            Phase phase =
                    status == null || status.getPhase() == null ? Phase.PENDING : status.getPhase();
            Phase before = phases.put(name, phase);
            if (phase == Phase.INITIALIZING && before != Phase.INITIALIZING) {
                admissionOrder.add(name);
            }
            int active = (int) phases.values().stream().filter(ACTIVE::contains).count();
            mostActive = Math.max(mostActive, active);
            if (status != null) {
                status.condition(ConditionTypes.QUEUED)
                        .filter(c -> "True".equals(c.getStatus()))
                        .ifPresent(
                                c -> {
                                    if (phase != Phase.PENDING
                                            || !c.getMessage().equals(status.getMessage())) {
                                        violations.add(
                                                name
                                                        + " Queued=True in phase "
                                                        + phase
                                                        + " with message "
                                                        + status.getMessage());
                                    }
                                    queuedMessages
                                            .computeIfAbsent(
                                                    name,
                                                    n ->
                                                            Collections.synchronizedList(
                                                                    new ArrayList<>()))
                                            .add(c.getMessage());
                                });
            }
        }

        @Override
        public void onClose(WatcherException cause) {}
    }
}
