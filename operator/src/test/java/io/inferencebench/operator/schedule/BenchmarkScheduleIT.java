package io.inferencebench.operator.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BaselineSpec;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.BenchmarkSchedule;
import io.inferencebench.crds.v1alpha1.BenchmarkScheduleStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.RunComparison;
import io.inferencebench.operator.OperatorTestCluster;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The schedule reconciler, run in-process by the Java Operator SDK against a real kube-apiserver +
 * etcd, with an every-minute cron and a clock the test moves: each fire time is reached by moving
 * the clock and touching a run (what the BenchmarkRun controller does as a run progresses), not by
 * waiting. The test plays the BenchmarkRun controller by writing the runs' status.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BenchmarkScheduleIT {

    /** The system clock moved by an offset the test sets. */
    static final class MovableClock extends Clock {
        private volatile Duration offset = Duration.ZERO;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.now().plus(offset);
        }

        void jumpTo(Instant fakeNow) {
            offset = Duration.between(Instant.now(), fakeNow);
        }
    }

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final MovableClock clock = new MovableClock();

    /** Closed after the last test (JUnit closes the fields it marks). */
    @AutoClose private OperatorTestCluster cluster;

    private KubernetesClient client;
    private String namespace;

    @BeforeAll
    void startApiServerAndOperator() {
        // Reads the schedule with futureField below, as the operator does.
        cluster = OperatorTestCluster.startReadingNewerFields();
        client = cluster.client();
        List<CustomResourceDefinition> crds = OperatorTestCluster.allCrds(client);
        for (CustomResourceDefinition crd : crds) {
            if (crd.getSpec().getNames().getKind().equals(BenchmarkSchedule.KIND)) {
                OperatorTestCluster.withFutureSpecField(crd);
            }
        }
        OperatorTestCluster.installAndAwaitEstablished(client, crds);
        // The operator's client reads as the Quarkus one does (NewerFields customizes its mapper).
        KubernetesClient operatorClient = cluster.newClientReadingNewerFields();
        cluster.startOperator(
                operatorClient, new BenchmarkScheduleReconciler(operatorClient, clock, meters));
    }

    @BeforeEach
    void freshNamespace() {
        namespace = cluster.createNamespace("sched-");
    }

    /** The next whole minute after both the real and the moved clock. */
    private Instant nextMinute() {
        Instant later = clock.instant().isAfter(Instant.now()) ? clock.instant() : Instant.now();
        return later.truncatedTo(ChronoUnit.MINUTES).plus(Duration.ofMinutes(1));
    }

    private void createSchedule(String name, String extraSpec) {
        String yaml =
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkSchedule
                metadata: {name: %s}
                spec:
                %s
                  template:
                    target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                    load: {requestRates: [5], numPrompts: 20}
                """
                        .formatted(name, extraSpec);
        client.genericKubernetesResources(
                        BenchmarkRun.GROUP + "/" + BenchmarkRun.VERSION, BenchmarkSchedule.KIND)
                .inNamespace(namespace)
                .resource(
                        client.getKubernetesSerialization()
                                .unmarshal(yaml, GenericKubernetesResource.class))
                .create();
    }

    /**
     * Creates the schedule one second into the next whole minute on the test's clock; returns that
     * minute, the first run's scheduled time.
     */
    private Instant createScheduleAtNextMinute(String name, String extraSpec) {
        Instant t1 = nextMinute();
        clock.jumpTo(t1.plusSeconds(1));
        createSchedule(name, extraSpec);
        return t1;
    }

    private BenchmarkSchedule schedule(String name) {
        return client.resources(BenchmarkSchedule.class)
                .inNamespace(namespace)
                .withName(name)
                .get();
    }

    private BenchmarkScheduleStatus awaitStatus(
            String name, Predicate<BenchmarkScheduleStatus> predicate) {
        return cluster.awaitStatus(BenchmarkSchedule.class, namespace, name, predicate);
    }

    private BenchmarkRun run(String name) {
        return cluster.run(namespace, name);
    }

    private BenchmarkRun awaitRun(String name) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> run(name) != null);
        return run(name);
    }

    private void awaitGone(String name) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> run(name) == null);
    }

    private List<String> runNames() {
        return client
                .resources(BenchmarkRun.class)
                .inNamespace(namespace)
                .list()
                .getItems()
                .stream()
                .map(r -> r.getMetadata().getName())
                .sorted()
                .toList();
    }

    /** Writes a run's status as the BenchmarkRun controller would. */
    private void setStatus(String name, Phase phase, String regressed, String worstMetric) {
        BenchmarkRun run = run(name);
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(phase);
        status.setMessage(phase.wireName() + " at " + Instant.now());
        if (regressed != null) {
            RunComparison comparison = new RunComparison();
            BaselineSpec baseline = run.getSpec().getBaseline();
            comparison.setBaseline(
                    baseline.getRunNames() == null
                            ? "run/" + baseline.getRunName()
                            : "runs/" + String.join(",", baseline.getRunNames()));
            comparison.setVerdict(
                    switch (regressed) {
                        case "True" -> RunComparison.REGRESSION;
                        case "False" -> RunComparison.NO_SIGNIFICANT_CHANGE;
                        default -> RunComparison.INCONCLUSIVE;
                    });
            comparison.setWorstMetric(worstMetric);
            status.setComparison(comparison);
            status.setConditions(
                    List.of(
                            new ConditionBuilder()
                                    .withType(ConditionTypes.REGRESSED)
                                    .withStatus(regressed)
                                    .withReason(comparison.getVerdict())
                                    .withMessage(worstMetric)
                                    .withLastTransitionTime(Instant.now().toString())
                                    .build()));
        }
        run.setStatus(status);
        client.resources(BenchmarkRun.class).inNamespace(namespace).resource(run).updateStatus();
    }

    private List<Event> events(String reason) {
        return client.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> reason.equals(e.getReason()))
                .toList();
    }

    private double counter(String schedule) {
        Counter counter =
                meters.find(ScheduleMetrics.REGRESSIONS)
                        .tags("namespace", namespace, "schedule", schedule)
                        .counter();
        return counter == null ? 0 : counter.count();
    }

    private double gauge(String schedule) {
        Gauge gauge =
                meters.find(ScheduleMetrics.LAST_VERDICT)
                        .tags("namespace", namespace, "schedule", schedule)
                        .gauge();
        return gauge == null ? Double.NaN : gauge.value();
    }

    @Test
    void runsFollowTheScheduleWithBaselinesForbidSkipsHistoryIsPrunedAndRegressionsAreReported() {
        // futureField: not in the operator's model (a newer CRD), the schedule is still served.
        Instant t1 =
                createScheduleAtNextMinute(
                        "nightly",
                        """
                  schedule: "* * * * *"
                  historyLimit: 2
                  baseline: {policy: previousSucceeded}
                  futureField: from-a-newer-crd
                """);
        String run1 = ScheduledRun.name("nightly", t1);
        BenchmarkRun first = awaitRun(run1);
        BenchmarkSchedule owner = schedule("nightly");
        assertThat(first.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(
                        o -> {
                            assertThat(o.getUid()).isEqualTo(owner.getMetadata().getUid());
                            assertThat(o.getController()).isTrue();
                        });
        assertThat(first.getSpec().getBaseline()).as("nothing succeeded yet").isNull();
        assertThat(first.getSpec().getLoad().getNumPrompts()).isEqualTo(20);
        BenchmarkScheduleStatus status =
                awaitStatus("nightly", s -> run1.equals(s.getLastRun()) && s.getActive() != null);
        assertThat(status.getLastScheduleTime()).isEqualTo(t1.toString());
        assertThat(Instant.parse(status.getNextScheduleTime())).isEqualTo(t1.plusSeconds(60));
        assertThat(status.getActive()).containsExactly(run1);
        assertThat(status.condition(ConditionTypes.SCHEDULE_VALID))
                .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));

        // Forbid: the next fire time comes while run1 still runs.
        Instant t2 = t1.plusSeconds(60);
        clock.jumpTo(t2.plusSeconds(1));
        setStatus(run1, Phase.RUNNING, null, null);
        awaitStatus("nightly", s -> t2.toString().equals(s.getLastScheduleTime()));
        assertThat(runNames()).containsExactly(run1);
        assertThat(events("Skipped"))
                .singleElement()
                .satisfies(e -> assertThat(e.getMessage()).contains(run1, "Forbid"));

        // run1 succeeds; the next run is compared with it.
        Instant t3 = t2.plusSeconds(60);
        clock.jumpTo(t3.plusSeconds(1));
        setStatus(run1, Phase.SUCCEEDED, null, null);
        String run3 = ScheduledRun.name("nightly", t3);
        assertThat(awaitRun(run3).getSpec().getBaseline().getRunName()).isEqualTo(run1);
        status = awaitStatus("nightly", s -> run1.equals(s.getLastFinishedRun()));
        assertThat(status.getLastVerdict()).isEqualTo(ScheduleVerdict.NO_BASELINE);

        // run3 does not regress; run4 is created and run1 (oldest finished) pruned: limit 2.
        Instant t4 = t3.plusSeconds(60);
        clock.jumpTo(t4.plusSeconds(1));
        setStatus(run3, Phase.SUCCEEDED, "False", "stage 1 ttft_ms p99 +1.0 %");
        String run4 = ScheduledRun.name("nightly", t4);
        assertThat(awaitRun(run4).getSpec().getBaseline().getRunName()).isEqualTo(run3);
        awaitGone(run1);
        assertThat(runNames()).containsExactlyInAnyOrder(run3, run4);
        awaitStatus("nightly", s -> RunComparison.NO_SIGNIFICANT_CHANGE.equals(s.getLastVerdict()));
        await().atMost(Duration.ofSeconds(30)).until(() -> gauge("nightly") == 0.0);

        // run4 regresses: condition, Warning Event, metrics.
        setStatus(run4, Phase.SUCCEEDED, "True", "stage 1 ttft_ms p99 +25.0 %");
        status = awaitStatus("nightly", s -> RunComparison.REGRESSION.equals(s.getLastVerdict()));
        assertThat(status.condition(ConditionTypes.REGRESSING))
                .hasValueSatisfying(
                        c -> {
                            assertThat(c.getStatus()).isEqualTo("True");
                            assertThat(c.getMessage())
                                    .contains(run4, "run/" + run3, "ttft_ms p99 +25.0 %");
                        });
        await().atMost(Duration.ofSeconds(30)).until(() -> events("Regressed").size() == 1);
        assertThat(events("Regressed").getFirst().getType()).isEqualTo("Warning");
        assertThat(counter("nightly")).isEqualTo(1.0);
        await().atMost(Duration.ofSeconds(30)).until(() -> gauge("nightly") == 1.0);

        // The next run: run3 pruned now; the regression is not counted again.
        Instant t5 = t4.plusSeconds(60);
        clock.jumpTo(t5.plusSeconds(1));
        setStatus(run4, Phase.SUCCEEDED, "True", "stage 1 ttft_ms p99 +25.0 %");
        String run5 = ScheduledRun.name("nightly", t5);
        assertThat(awaitRun(run5).getSpec().getBaseline().getRunName()).isEqualTo(run4);
        awaitGone(run3);
        awaitStatus("nightly", s -> run5.equals(s.getLastRun()));
        assertThat(runNames()).containsExactlyInAnyOrder(run4, run5);
        assertThat(counter("nightly")).isEqualTo(1.0);
        assertThat(events("Regressed")).hasSize(1);
    }

    /**
     * {@code noiseFloorRuns: 3}: each run is compared with the one before until three have
     * succeeded, then with the last three at once; while it runs, all three are kept beyond the
     * history limit; an inconclusive verdict leaves Regressing Unknown.
     */
    @Test
    void aNoiseFloorScheduleComparesWithItsLastSucceededRunsOnceThreeHaveSucceeded() {
        Instant t1 =
                createScheduleAtNextMinute(
                        "floor",
                        """
                  schedule: "* * * * *"
                  historyLimit: 3
                  baseline: {policy: previousSucceeded, noiseFloorRuns: 3}
                """);
        String run1 = ScheduledRun.name("floor", t1);
        assertThat(awaitRun(run1).getSpec().getBaseline()).isNull();
        // Each step: the clock moves to the next fire time, then a run's status changes, which
        // wakes the schedule.
        String run2 = nextRun("floor", t1, 1);
        setStatus(run1, Phase.SUCCEEDED, null, null);
        assertThat(awaitRun(run2).getSpec().getBaseline()).isEqualTo(BaselineSpec.run(run1));
        String run3 = nextRun("floor", t1, 2);
        setStatus(run2, Phase.SUCCEEDED, "False", "stage 1 ttft_ms p50 +0.5 %");
        assertThat(awaitRun(run3).getSpec().getBaseline())
                .as("two succeeded: too few for a noise floor")
                .isEqualTo(BaselineSpec.run(run2));
        String run4 = nextRun("floor", t1, 3);
        setStatus(run3, Phase.SUCCEEDED, "False", "stage 1 ttft_ms p50 -0.3 %");
        assertThat(awaitRun(run4).getSpec().getBaseline())
                .isEqualTo(BaselineSpec.runs(List.of(run3, run2, run1)));
        // Four runs over a limit of three, yet the oldest is part of run4's noise floor.
        awaitStatus("floor", s -> run4.equals(s.getLastRun()));
        assertThat(runNames()).containsExactlyInAnyOrder(run1, run2, run3, run4);

        setStatus(run4, Phase.SUCCEEDED, "Unknown", "stage 1 ttft_ms p50 +1.0 % (not significant)");
        BenchmarkScheduleStatus status =
                awaitStatus("floor", s -> RunComparison.INCONCLUSIVE.equals(s.getLastVerdict()));
        assertThat(status.condition(ConditionTypes.REGRESSING))
                .hasValueSatisfying(
                        c -> {
                            assertThat(c.getStatus()).isEqualTo("Unknown");
                            assertThat(c.getReason()).isEqualTo(RunComparison.INCONCLUSIVE);
                            assertThat(c.getMessage())
                                    .contains(
                                            run4
                                                    + " is inconclusive against runs/"
                                                    + run3
                                                    + ","
                                                    + run2
                                                    + ","
                                                    + run1);
                        });
        assertThat(events("Regressed")).isEmpty();
        // Compared, run4 no longer needs them: the oldest goes.
        awaitGone(run1);
        assertThat(runNames()).containsExactlyInAnyOrder(run2, run3, run4);
    }

    /** Moves the clock {@code minutes} past {@code t1} and returns the run due then. */
    private String nextRun(String schedule, Instant t1, int minutes) {
        Instant due = t1.plusSeconds(60L * minutes);
        clock.jumpTo(due.plusSeconds(1));
        return ScheduledRun.name(schedule, due);
    }

    @Test
    void replaceDeletesTheRunningRunForTheDueOne() {
        Instant t1 =
                createScheduleAtNextMinute(
                        "replacing",
                        """
                  schedule: "* * * * *"
                  concurrencyPolicy: Replace
                  baseline: {runName: release-1}
                """);
        String run1 = ScheduledRun.name("replacing", t1);
        assertThat(awaitRun(run1).getSpec().getBaseline().getRunName())
                .as("pinned baseline")
                .isEqualTo("release-1");
        Instant t2 = t1.plusSeconds(60);
        clock.jumpTo(t2.plusSeconds(1));
        setStatus(run1, Phase.RUNNING, null, null);
        String run2 = ScheduledRun.name("replacing", t2);
        awaitRun(run2);
        awaitGone(run1);
        assertThat(events("Replaced"))
                .singleElement()
                .satisfies(e -> assertThat(e.getMessage()).contains(run1, "Replace"));
        assertThat(awaitStatus("replacing", s -> run2.equals(s.getLastRun())).getActive())
                .containsExactly(run2);
    }

    @Test
    void aSuspendedScheduleCreatesNothingAndResumingDoesNotMakeUpMissedRuns() {
        Instant t1 =
                createScheduleAtNextMinute(
                        "paused",
                        """
                  schedule: "* * * * *"
                  suspend: true
                """);
        BenchmarkScheduleStatus status =
                awaitStatus("paused", s -> t1.toString().equals(s.getLastScheduleTime()));
        assertThat(status.getNextScheduleTime()).as("absent while suspended").isNull();
        assertThat(status.getLastRun()).isNull();
        assertThat(runNames()).isEmpty();

        // Resumed within the same minute: t1 stays missed.
        clock.jumpTo(t1.plusSeconds(1));
        BenchmarkSchedule paused = schedule("paused");
        paused.getSpec().setSuspend(false);
        client.resources(BenchmarkSchedule.class).inNamespace(namespace).resource(paused).update();
        status = awaitStatus("paused", s -> s.getNextScheduleTime() != null);
        assertThat(Instant.parse(status.getNextScheduleTime())).isEqualTo(t1.plusSeconds(60));
        assertThat(runNames()).doesNotContain(ScheduledRun.name("paused", t1));

        // The next fire time runs as usual (reached here by moving the clock and editing the spec).
        Instant t2 = t1.plusSeconds(60);
        clock.jumpTo(t2.plusSeconds(1));
        paused = schedule("paused");
        paused.getSpec().setHistoryLimit(3);
        client.resources(BenchmarkSchedule.class).inNamespace(namespace).resource(paused).update();
        awaitRun(ScheduledRun.name("paused", t2));
        assertThat(runNames()).doesNotContain(ScheduledRun.name("paused", t1));
    }

    /**
     * A zone the API server admits (the CRD checks its shape) but java.time does not know: what
     * only the operator can decide. Nothing is scheduled while it stands, though a fire time has
     * passed; named correctly, the schedule runs.
     */
    @Test
    void anUnknownTimeZoneIsAConditionAndAWarningEventAndCreatesNoRunUntilItIsCorrected() {
        Instant t1 =
                createScheduleAtNextMinute(
                        "on-mars",
                        """
                  schedule: "* * * * *"
                  timeZone: Mars/Olympus_Mons
                """);
        BenchmarkScheduleStatus status =
                awaitStatus("on-mars", s -> s.condition(ConditionTypes.SCHEDULE_VALID).isPresent());
        assertThat(status.condition(ConditionTypes.SCHEDULE_VALID))
                .hasValueSatisfying(
                        c -> {
                            assertThat(c.getStatus()).isEqualTo("False");
                            assertThat(c.getReason()).isEqualTo(CronSchedule.UNKNOWN_TIME_ZONE);
                            assertThat(c.getMessage())
                                    .startsWith(
                                            "spec.timeZone: 'Mars/Olympus_Mons' is not a time"
                                                    + " zone of the IANA database")
                                    .contains("nothing is scheduled");
                        });
        assertThat(status.getNextScheduleTime()).isNull();
        await().atMost(Duration.ofSeconds(30))
                .until(() -> !events(CronSchedule.UNKNOWN_TIME_ZONE).isEmpty());
        Event event = events(CronSchedule.UNKNOWN_TIME_ZONE).getFirst();
        assertThat(event.getType()).isEqualTo("Warning");
        assertThat(event.getMessage()).startsWith("spec.timeZone: 'Mars/Olympus_Mons'");
        assertThat(event.getInvolvedObject().getName()).isEqualTo("on-mars");
        assertThat(runNames()).as("a fire time has passed, yet nothing is scheduled").isEmpty();

        BenchmarkSchedule corrected = schedule("on-mars");
        corrected.getSpec().setTimeZone("UTC");
        client.resources(BenchmarkSchedule.class)
                .inNamespace(namespace)
                .resource(corrected)
                .update();
        awaitRun(ScheduledRun.name("on-mars", t1));
        assertThat(
                        awaitStatus(
                                        "on-mars",
                                        s ->
                                                s.condition(ConditionTypes.SCHEDULE_VALID)
                                                        .map(c -> "True".equals(c.getStatus()))
                                                        .orElse(false))
                                .condition(ConditionTypes.SCHEDULE_VALID))
                .hasValueSatisfying(c -> assertThat(c.getMessage()).contains("in UTC"));
        assertThat(events(CronSchedule.UNKNOWN_TIME_ZONE)).hasSize(1);
    }
}
