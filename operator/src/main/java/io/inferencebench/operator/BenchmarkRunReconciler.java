package io.inferencebench.operator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.LiveStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.RunProgress;
import io.inferencebench.crds.v1alpha1.RunSummary;
import io.inferencebench.crds.v1alpha1.SpecValidation;
import io.inferencebench.crds.v1alpha1.StageResult;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.workorder.ProgressReport;
import io.inferencebench.operator.baseline.BaselineComparison;
import io.inferencebench.operator.baseline.BaselineProfiles;
import io.inferencebench.operator.dependent.ControlConfigMapDependent;
import io.inferencebench.operator.dependent.Launched;
import io.inferencebench.operator.dependent.RunnerJobDependent;
import io.inferencebench.operator.dependent.RunnerWorkOrderDependent;
import io.inferencebench.operator.environment.EnvironmentFingerprint;
import io.inferencebench.operator.run.KubernetesRunCluster;
import io.inferencebench.operator.run.Requeue;
import io.inferencebench.operator.run.RunCluster;
import io.inferencebench.operator.run.RunTurn;
import io.inferencebench.profile.lpg.LoadVerdict;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * The BenchmarkRun lifecycle: validate, wait for the target, launch runners (the workflow's
 * dependents), open the start and per-stage barriers, follow progress, assemble profiles. Status is
 * built only through {@link StatusAggregator}; user mistakes become conditions and Warning Events,
 * exceptions are left for transient API errors (retried with backoff).
 */
@ControllerConfiguration(name = "benchmarkrun")
@Workflow(
        explicitInvocation = true,
        dependents = {
            @Dependent(
                    name = "work-order",
                    type = RunnerWorkOrderDependent.class,
                    reconcilePrecondition = Launched.class),
            @Dependent(
                    name = "control",
                    type = ControlConfigMapDependent.class,
                    reconcilePrecondition = Launched.class),
            @Dependent(
                    name = "runner-job",
                    type = RunnerJobDependent.class,
                    dependsOn = {"work-order", "control"},
                    reconcilePrecondition = Launched.class)
        })
public class BenchmarkRunReconciler implements Reconciler<BenchmarkRun> {

    private static final Logger LOG = Logger.getLogger(BenchmarkRunReconciler.class);

    /** Name of the event source of runner part ConfigMaps. */
    public static final String PARTS = "parts";

    /** Time between opening a barrier and the instant runners start, so all see it in time. */
    static final Duration BARRIER_LEAD = Duration.ofSeconds(2);

    /**
     * Lead of the first stage's barrier: the server-metric scraping of the run starts with it, and
     * an operator pod that has not scraped yet (cold HTTP client, endpoint lookup) on a busy node
     * took over a second for its first answer; the start scrape must be answered before the barrier
     * to stand for it. The runners are ready and idle meanwhile.
     */
    static final Duration FIRST_BARRIER_LEAD = Duration.ofSeconds(5);

    /** Regressed reason of a run that did not succeed. */
    static final String NOT_COMPARED = "NotCompared";

    /** The Queued condition's True reason, and the reason of the Event a queued run gets. */
    static final String QUEUED_REASON = "Queued";

    private final KubernetesClient client;
    private final Clock clock;
    private final RunCluster cluster;
    private final ServerMetricsScraper scraper;
    private final StageWindows windows;
    private final RunMetrics metrics;
    private final RunAdmission admission;

    /**
     * @param client the operator's client
     * @param clock the wall clock ({@link ReconcilerBeans#clock}); tests may fix it
     * @param registry where the run metrics go
     * @param admission the active-run cap ({@link ReconcilerBeans#runAdmission}, from {@value
     *     RunAdmission#ENV})
     */
    @Inject
    public BenchmarkRunReconciler(
            KubernetesClient client, Clock clock, MeterRegistry registry, RunAdmission admission) {
        this.client = client;
        this.clock = clock;
        this.cluster = new KubernetesRunCluster(client, new EventRecorder(client));
        this.scraper = new ServerMetricsScraper(client);
        this.windows = scraper;
        this.metrics = new RunMetrics(registry);
        this.admission = admission;
        if (admission.limited()) {
            LOG.infof(
                    "at most %d BenchmarkRuns past Pending at a time (%s)",
                    admission.maxActiveRuns(), RunAdmission.ENV);
        }
    }

    /** Stops the server-metrics scraping threads (their checkpoints stay for a successor). */
    @jakarta.annotation.PreDestroy
    public void close() {
        scraper.close();
        metrics.close();
    }

    @Override
    public List<EventSource<?, BenchmarkRun>> prepareEventSources(
            EventSourceContext<BenchmarkRun> context) {
        var cache = context.getPrimaryCache();
        metrics.bind(cache::list);
        var parts =
                InformerEventSourceConfiguration.from(ConfigMap.class, BenchmarkRun.class)
                        .withName(PARTS)
                        .withLabelSelector(Labels.PART_INDEX)
                        .withSecondaryToPrimaryMapper(
                                Mappers.fromOwnerReferences(BenchmarkRun.class))
                        .build();
        return List.of(new InformerEventSource<>(parts, context));
    }

    @Override
    public UpdateControl<BenchmarkRun> reconcile(BenchmarkRun run, Context<BenchmarkRun> context) {
        // Decisions such as a barrier's start instant must build on the status the previous
        // reconcile wrote; the informer cache may not have seen that patch yet.
        BenchmarkRun latest =
                client.resources(BenchmarkRun.class)
                        .inNamespace(run.getMetadata().getNamespace())
                        .withName(run.getMetadata().getName())
                        .get();
        if (latest == null) {
            return UpdateControl.noUpdate();
        }
        run.setSpec(latest.getSpec());
        run.getMetadata().setGeneration(latest.getMetadata().getGeneration());
        run.setStatus(latest.getStatus());
        // The status patch is optimistic-locked on the version the decisions were built from,
        // not on the informer's older copy (which made every patch after a fresh read conflict).
        run.getMetadata().setResourceVersion(latest.getMetadata().getResourceVersion());
        Instant now = clock.instant();
        StatusAggregator status =
                new StatusAggregator(run.getStatus(), run.getMetadata().getGeneration(), now);
        Phase before = run.getStatus() == null ? null : run.getStatus().getPhase();
        RunTurn turn =
                new RunTurn(
                        run,
                        status,
                        now,
                        () -> parts(run, context),
                        () -> context.getSecondaryResource(Job.class),
                        () -> context.getPrimaryCache().list());
        Duration requeue = step(turn);
        if (requeue == Requeue.DELETED) {
            return UpdateControl.noUpdate();
        }
        if (status.phase().isTerminal() && turn.conditionTrue(ConditionTypes.QUEUED)) {
            // cancelled, or failed on its references or target, while it waited for a slot
            admission.leave(run.getMetadata().getUid());
            status.condition(
                    ConditionTypes.QUEUED,
                    false,
                    "NotAdmitted",
                    "the run ended (" + status.phase().wireName() + ") before it was let through");
        }
        if (status.phase().isTerminal() && run.getSpec().getBaseline() != null) {
            requeue = Requeue.sooner(requeue, compareWithBaseline(turn));
        }
        BenchmarkRunStatus built = status.build();
        Phase after = built.getPhase();
        if (after != before) {
            boolean bad = after == Phase.FAILED;
            cluster.event(
                    run,
                    bad ? EventRecorder.WARNING : EventRecorder.NORMAL,
                    after.wireName(),
                    built.getMessage() == null ? after.wireName() : built.getMessage());
            LOG.infof(
                    "%s/%s: %s -> %s: %s",
                    run.getMetadata().getNamespace(),
                    run.getMetadata().getName(),
                    before,
                    after,
                    built.getMessage());
        }
        Integer ttl = run.getSpec().getTtlSecondsAfterFinished();
        if (after.isTerminal()) {
            windows.forget(run, before != after);
        }
        if (requeue == null && after.isTerminal() && before != after && ttl != null) {
            requeue = Duration.ofSeconds(ttl).plus(Requeue.AFTER_EXPIRY);
        }
        boolean changed = status.changed();
        // The dependents follow the status decided just now (launch, barriers, cleanup, output),
        // in this same reconcile rather than one event later.
        run.setStatus(built);
        context.managedWorkflowAndDependentResourceContext().reconcileManagedWorkflow();
        metrics.refresh();
        UpdateControl<BenchmarkRun> control =
                changed ? UpdateControl.patchStatus(run) : UpdateControl.noUpdate();
        return requeue == null ? control : control.rescheduleAfter(requeue);
    }

    /**
     * Once the run has finished: its profiles against {@code spec.baseline}'s, into {@code
     * status.comparison} and the Regressed condition. A baseline that is missing or still running
     * is looked at again later.
     *
     * @return when to look again, or {@code null}
     */
    private Duration compareWithBaseline(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        var current = status.view().condition(ConditionTypes.REGRESSED);
        boolean decided =
                current.isPresent()
                        && !(BaselineProfiles.NOT_FOUND.equals(current.get().getReason())
                                || BaselineProfiles.NOT_FINISHED.equals(current.get().getReason()));
        if (decided) {
            return null;
        }
        Phase phase = status.phase();
        List<JsonNode> profiles = status.view().getProfiles();
        if (phase != Phase.SUCCEEDED || profiles == null || profiles.isEmpty()) {
            status.condition(
                    ConditionTypes.REGRESSED,
                    "Unknown",
                    NOT_COMPARED,
                    "the run did not succeed ("
                            + phase.wireName()
                            + "); it is not compared with its baseline");
            return null;
        }
        BaselineProfiles.Result baseline = cluster.baseline(run);
        if (!baseline.available()) {
            boolean news =
                    current.map(c -> !baseline.message().equals(c.getMessage())).orElse(true);
            if (news) {
                cluster.event(run, EventRecorder.WARNING, baseline.reason(), baseline.message());
            }
            status.condition(
                    ConditionTypes.REGRESSED, "Unknown", baseline.reason(), baseline.message());
            return baseline.retry() ? Requeue.BASELINE_RETRY : null;
        }
        try {
            BaselineComparison.Outcome outcome =
                    BaselineComparison.compare(baseline.label(), baseline.profiles(), profiles);
            status.apply(s -> s.setComparison(outcome.comparison()));
            status.condition(
                    ConditionTypes.REGRESSED,
                    outcome.regressed(),
                    outcome.reason(),
                    outcome.message());
            cluster.event(
                    run,
                    outcome.regressed() ? EventRecorder.WARNING : EventRecorder.NORMAL,
                    outcome.regressed() ? "Regressed" : "Compared",
                    outcome.message());
        } catch (IllegalArgumentException e) {
            String message = "cannot compare with " + baseline.label() + ": " + e.getMessage();
            cluster.event(run, EventRecorder.WARNING, BaselineProfiles.INVALID, message);
            status.condition(
                    ConditionTypes.REGRESSED, "Unknown", BaselineProfiles.INVALID, message);
        }
        return null;
    }

    private void sampleReadyReplicas(RunTurn turn) {
        turn.status()
                .apply(
                        s ->
                                s.setEnvironment(
                                        cluster.sampleReadyReplicas(
                                                turn.run(), s.getEnvironment(), turn.now())));
    }

    private Duration step(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Phase phase = status.phase();
        if (phase.isTerminal()) {
            return finished(turn);
        }
        List<String> problems = new ArrayList<>(SpecValidation.validate(run.getSpec()));
        if (run.getSpec().getMetrics() != null
                && run.getSpec().getMetrics().getPrometheus() != null) {
            problems.addAll(
                    PrometheusSourceConfigs.validate(run.getSpec().getMetrics().getPrometheus()));
        }
        if (!problems.isEmpty()) {
            String message = String.join("; ", problems);
            cluster.event(run, EventRecorder.WARNING, "InvalidSpec", message);
            status.condition(ConditionTypes.TARGET_READY, false, "InvalidSpec", message);
            turn.finish(Phase.FAILED, "InvalidSpec", "invalid spec: " + message);
            return null;
        }
        if (Boolean.TRUE.equals(run.getSpec().getCancel())) {
            turn.finish(Phase.CANCELLED, "Cancelled", cancelMessage(status));
            return null;
        }
        return switch (phase) {
            case PENDING -> pending(turn);
            case INITIALIZING -> initializing(turn);
            case RUNNING -> running(turn);
            case AGGREGATING -> aggregating(turn);
            default -> null;
        };
    }

    private Duration pending(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Instant now = turn.now();
        Duration readinessTimeout =
                Durations.parse(run.getSpec().getTarget().getReadinessTimeout());
        boolean timedOut = now.isAfter(targetWaitStart(run, status, now).plus(readinessTimeout));
        List<String> missing = cluster.missingReferences(run);
        if (!missing.isEmpty()) {
            String message = String.join("; ", missing);
            leaveQueue(turn, message);
            status.condition(ConditionTypes.TARGET_READY, false, "MissingReference", message);
            if (timedOut) {
                turn.finish(Phase.FAILED, "MissingReference", message);
                return null;
            }
            if (!message.equals(status.view().getMessage())) {
                cluster.event(run, EventRecorder.WARNING, "MissingReference", message);
            }
            status.phase(Phase.PENDING, message);
            return Requeue.MISSING_REFERENCE;
        }
        TargetProbe.Result probe = cluster.probeTarget(run);
        if (!probe.ready()) {
            leaveQueue(turn, probe.message());
            status.condition(ConditionTypes.TARGET_READY, false, probe.reason(), probe.message());
            if (timedOut) {
                turn.finish(
                        Phase.FAILED,
                        "TargetNotReady",
                        probe.message()
                                + " after spec.target.readinessTimeout "
                                + run.getSpec().getTarget().getReadinessTimeout());
                return null;
            }
            if (!probe.message().equals(status.view().getMessage())) {
                cluster.event(run, EventRecorder.WARNING, probe.reason(), probe.message());
            }
            status.phase(Phase.PENDING, "waiting for target: " + probe.message());
            return Requeue.TARGET_NOT_READY;
        }
        List<StageSpec> stages = CapacityProgress.stages(run, status.view());
        status.condition(ConditionTypes.TARGET_READY, true, probe.reason(), probe.message());
        RunAdmission.Decision decision =
                admission.admit(
                        RunAdmission.Candidate.of(run),
                        turn.cachedRuns().map(RunAdmission.Candidate::of).toList(),
                        now);
        if (decision instanceof RunAdmission.Queued queued) {
            boolean alreadyQueued = turn.conditionTrue(ConditionTypes.QUEUED);
            status.condition(ConditionTypes.QUEUED, true, QUEUED_REASON, queued.message());
            if (!alreadyQueued) {
                cluster.event(run, EventRecorder.NORMAL, QUEUED_REASON, queued.message());
            }
            status.phase(Phase.PENDING, queued.message());
            return Requeue.QUEUED;
        }
        if (admission.limited()) {
            status.condition(
                    ConditionTypes.QUEUED,
                    false,
                    "Admitted",
                    ((RunAdmission.Admitted) decision).message());
        }
        EnvironmentStatus measured = cluster.observeEnvironment(run, now);
        status.apply(s -> s.setEnvironment(measured));
        status.condition(
                ConditionTypes.RUNNERS_READY,
                false,
                "Starting",
                "waiting for " + run.getSpec().getRunner().getParallelism() + " runner pod(s)");
        status.condition(ConditionTypes.COMPLETED, false, "InProgress", "run not finished");
        status.phase(Phase.INITIALIZING, "starting runner pods");
        status.apply(
                s -> {
                    s.setModel(run.getSpec().getTarget().getModel());
                    s.setStage("0/" + stages.size());
                    s.setProgress(progress(0, stages, 0, 0));
                });
        return Requeue.RUNNERS_STARTING;
    }

    /**
     * When the wait for the target began, the start of {@code spec.target.readinessTimeout}: the
     * run's creation, or for a run that was in the queue (so its target was ready) the moment the
     * target stopped being ready; time spent waiting for a slot alone never counts.
     */
    private static Instant targetWaitStart(BenchmarkRun run, StatusAggregator status, Instant now) {
        Instant created = Instant.parse(run.getMetadata().getCreationTimestamp());
        if (status.view().condition(ConditionTypes.QUEUED).isEmpty()) {
            return created;
        }
        Instant since =
                status.view()
                        .condition(ConditionTypes.TARGET_READY)
                        .map(
                                c ->
                                        "True".equals(c.getStatus())
                                                ? now
                                                : Instant.parse(c.getLastTransitionTime()))
                        .orElse(created);
        return since.isAfter(created) ? since : created;
    }

    /** A queued run whose target or references stopped being ready no longer holds a place. */
    private void leaveQueue(RunTurn turn, String why) {
        admission.leave(turn.run().getMetadata().getUid());
        if (turn.conditionTrue(ConditionTypes.QUEUED)) {
            turn.status()
                    .condition(
                            ConditionTypes.QUEUED,
                            false,
                            "TargetNotReady",
                            "left the queue until the target is ready again: " + why);
        }
    }

    private Duration initializing(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Instant now = turn.now();
        int parallelism = run.getSpec().getRunner().getParallelism();
        if (runnerFailure(turn)) {
            return null;
        }
        sampleReadyReplicas(turn);
        Parts parts = turn.parts();
        if (parts.allReady(parallelism)) {
            Instant start = clock.instant().plus(FIRST_BARRIER_LEAD);
            status.condition(
                    ConditionTypes.RUNNERS_READY,
                    true,
                    "AllReady",
                    parallelism + " runner pod(s) ready at the start barrier");
            status.phase(Phase.RUNNING, "stage 1 starts at " + StatusAggregator.format(start));
            // Scraping starts now, before the barrier, not at the first Running reconcile.
            windows.track(run);
            windows.windowStarts(run, Instant.parse(StatusAggregator.format(start)).toEpochMilli());
            if (CapacityProgress.searching(run)) {
                // The first probe's rate, published with the first barrier.
                var capacity =
                        CapacityProgress.status(
                                run, List.of(), CapacityProgress.next(run, List.of()));
                status.apply(s -> s.setCapacity(capacity));
            }
            List<StageSpec> stages = CapacityProgress.stages(run, status.view());
            // Without spec.target.model the pods discovered it; the status (MODEL column) and the
            // profiles name what they found.
            String discovered =
                    parts.all().stream()
                            .map(Parts.Part::model)
                            .flatMap(java.util.Optional::stream)
                            .findFirst()
                            .orElse(null);
            status.apply(
                    s -> {
                        if ((s.getModel() == null || s.getModel().isBlank())
                                && discovered != null) {
                            s.setModel(discovered);
                        }
                        s.setStartTime(StatusAggregator.format(start));
                        s.setStageStartTimes(List.of(StatusAggregator.format(start)));
                        s.setStage("1/" + stages.size());
                        s.setProgress(progress(1, stages, 0, 0));
                    });
            return Requeue.PROGRESS_REFRESH;
        }
        // Since admission: RunnersReady is first decided then (TargetReady can be True much
        // earlier, while the run waited in the queue).
        Instant initializingSince =
                status.view()
                        .condition(ConditionTypes.RUNNERS_READY)
                        .map(c -> Instant.parse(c.getLastTransitionTime()))
                        .orElse(now);
        Duration startTimeout = Durations.parse(run.getSpec().getRunner().getStartTimeout());
        long ready = parts.all().stream().filter(p -> !p.state().isEmpty()).count();
        if (now.isAfter(initializingSince.plus(startTimeout))) {
            String message =
                    ready
                            + " of "
                            + parallelism
                            + " runner pod(s) ready after spec.runner.startTimeout "
                            + run.getSpec().getRunner().getStartTimeout();
            status.condition(ConditionTypes.RUNNERS_READY, false, "StartTimeout", message);
            turn.finish(Phase.FAILED, "RunnersNotReady", message);
            return null;
        }
        status.condition(
                ConditionTypes.RUNNERS_READY,
                false,
                "Starting",
                ready + " of " + parallelism + " runner pod(s) ready");
        return Requeue.RUNNERS_STARTING;
    }

    private Duration running(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Instant now = turn.now();
        if (runnerFailure(turn) || deadlineExceeded(turn)) {
            return null;
        }
        sampleReadyReplicas(turn);
        int parallelism = run.getSpec().getRunner().getParallelism();
        List<StageSpec> stages = CapacityProgress.stages(run, status.view());
        windows.track(run);
        Parts parts = turn.parts();
        List<String> starts = new ArrayList<>(status.view().getStageStartTimes());
        int current = starts.size();
        windows.windowStarts(run, Instant.parse(starts.get(current - 1)).toEpochMilli());
        live(status, parts, current, stages, now);
        if (parts.finishedStage(current) >= parallelism) {
            boolean assembled =
                    status.view().getResults() != null
                            && status.view().getResults().stream()
                                    .anyMatch(r -> r.getStage() == current);
            if (!assembled) {
                // A Prometheus source is read only once its first sample at or after the stage
                // end exists; reconcile again then rather than wait here.
                Duration due = windows.reportDueIn(run, current, now.toEpochMilli());
                if (due.isPositive()) {
                    return due;
                }
            }
            assembleStage(turn, current);
            long completed = 0;
            long failed = 0;
            for (StageResult r : turn.results()) {
                completed += r.getCompleted() == null ? 0 : r.getCompleted();
                failed += r.getFailed() == null ? 0 : r.getFailed();
            }
            RunProgress finished = progress(current, stages, completed, failed);
            status.apply(s -> s.setProgress(finished));
            if (CapacityProgress.searching(run)) {
                // The next probe's rate follows from the merged results of the probes so far.
                List<StageResult> probed = turn.results();
                probed.sort(java.util.Comparator.comparingInt(StageResult::getStage));
                var step = CapacityProgress.next(run, probed);
                var capacity = CapacityProgress.status(run, probed, step);
                status.apply(s -> s.setCapacity(capacity));
                if (step.done()) {
                    status.phase(
                            Phase.AGGREGATING,
                            "search finished after "
                                    + probed.size()
                                    + " probe(s): "
                                    + step.result().message()
                                    + "; writing profiles");
                    return Requeue.SOON;
                }
            } else if (current == stages.size()) {
                status.phase(Phase.AGGREGATING, "all stages finished; writing profiles");
                return Requeue.SOON;
            }
            List<StageSpec> planned = CapacityProgress.stages(run, status.view());
            // From the clock, not the reconcile's start: assembling the stage (its end scrape,
            // the profile) took a while on a busy node, and a barrier set from the older instant
            // could already be near or past, leaving no time for its start scrape.
            Instant next =
                    clock.instant()
                            .plus(run.getSpec().getLoad().cooldownValue())
                            .plus(BARRIER_LEAD);
            starts.add(StatusAggregator.format(next));
            windows.windowStarts(run, Instant.parse(starts.getLast()).toEpochMilli());
            int nextStage = current + 1;
            status.phase(
                    Phase.RUNNING,
                    "stage " + nextStage + " starts at " + StatusAggregator.format(next));
            status.apply(
                    s -> {
                        s.setStageStartTimes(List.copyOf(starts));
                        s.setStage(nextStage + "/" + planned.size());
                    });
            return Requeue.PROGRESS_REFRESH;
        }
        return Requeue.PROGRESS_REFRESH;
    }

    /**
     * The run's reason: TooManyFailures when any stage had them (the gate a pipeline reads most
     * often), else the first undelivered stage's reason.
     */
    private static String undeliveredReason(List<StageResult> undelivered) {
        List<String> reasons =
                undelivered.stream()
                        .map(
                                r ->
                                        r.getLoadDeliveredReason() == null
                                                ? LoadVerdict.RATE_NOT_ACHIEVED
                                                : r.getLoadDeliveredReason())
                        .toList();
        if (reasons.contains(LoadVerdict.TOO_MANY_FAILURES)) {
            return LoadVerdict.TOO_MANY_FAILURES;
        }
        return reasons.isEmpty() ? LoadVerdict.RATE_NOT_ACHIEVED : reasons.get(0);
    }

    private Duration aggregating(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        List<StageResult> results = status.view().getResults();
        boolean delivered =
                results != null
                        && results.stream()
                                .allMatch(r -> Boolean.TRUE.equals(r.getLoadDelivered()));
        List<StageResult> undelivered =
                results == null
                        ? List.of()
                        : results.stream()
                                .filter(r -> !Boolean.TRUE.equals(r.getLoadDelivered()))
                                .toList();
        String reason = delivered ? LoadVerdict.DELIVERED : undeliveredReason(undelivered);
        String message =
                delivered
                        ? "every stage achieved its requested load"
                        : undelivered.stream()
                                        .map(
                                                r ->
                                                        "stage "
                                                                + r.getStage()
                                                                + ": "
                                                                + (r.getLoadDeliveredMessage()
                                                                                == null
                                                                        ? "load not delivered"
                                                                        : r
                                                                                .getLoadDeliveredMessage()))
                                        .collect(java.util.stream.Collectors.joining("; "))
                                + "; results are not a valid measurement of the requested load";
        status.condition(ConditionTypes.LOAD_DELIVERED, delivered, reason, message);
        if (run.getSpec().getSlo() != null && results != null) {
            boolean met = results.stream().allMatch(r -> Boolean.TRUE.equals(r.getSloMet()));
            status.condition(
                    ConditionTypes.SLO_MET,
                    met,
                    met ? "Met" : "Missed",
                    met ? "every stage met spec.slo" : "some stage missed spec.slo");
            status.apply(s -> summary(s).setSlo(met ? "Met" : "Missed"));
        }
        serverMetricsCondition(turn, results == null ? 0 : results.size());
        turn.finish(
                Phase.SUCCEEDED,
                "Succeeded",
                (results == null ? 0 : results.size())
                        + " stage profile(s) written to ConfigMap "
                        + (status.view().getProfileConfigMaps() == null
                                ? ResourceNames.profile(run)
                                : String.join(", ", status.view().getProfileConfigMaps())));
        return null;
    }

    private void serverMetricsCondition(RunTurn turn, int stages) {
        ServerMetricsCondition.Decision decision =
                ServerMetricsCondition.decide(turn.spec().getMetrics(), profiles(turn), stages);
        turn.status()
                .condition(
                        ConditionTypes.SERVER_METRICS_COLLECTED,
                        decision.status(),
                        decision.reason(),
                        decision.message());
    }

    private void assembleStage(RunTurn turn, int stage) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        List<io.inferencebench.profile.lpg.StageResult> stageParts = new ArrayList<>();
        for (Parts.Part part : turn.parts().all()) {
            part.stageResult(stage).map(ProfileAssembly::parse).ifPresent(stageParts::add);
        }
        if (stageParts.isEmpty()) {
            return;
        }
        List<StageResult> results = turn.results();
        if (results.stream().anyMatch(r -> r.getStage() == stage)) {
            return;
        }
        Set<String> keys = ProfileAssembly.keys(results);
        String start = status.view().getStageStartTimes().get(stage - 1);
        String model = status.view().getModel() != null ? status.view().getModel() : "model";
        long startMillis = Instant.parse(start).toEpochMilli();
        // the runners' first request of the stage: a window baseline answered after it is late
        Long firstRequestMillis =
                stageParts.stream()
                        .mapToLong(p -> p.firstDispatchEpochNanos)
                        .filter(n -> n > 0)
                        .min()
                        .stream()
                        .mapToObj(n -> n / 1_000_000L)
                        .findFirst()
                        .orElse(null);
        ServerMetricsReport serverMetrics =
                windows.report(
                        run,
                        stage,
                        startMillis,
                        clock.instant().toEpochMilli(),
                        firstRequestMillis);
        if (serverMetrics != null
                && serverMetrics.coverage() != null
                && serverMetrics.coverage().succeeded() == 0) {
            boolean prometheus = run.getSpec().getMetrics().getPrometheus() != null;
            List<String> errors = serverMetrics.coverage().errors();
            cluster.event(
                    run,
                    EventRecorder.WARNING,
                    prometheus
                            ? ServerMetricsCondition.PROMETHEUS_QUERY_FAILED
                            : ServerMetricsCondition.SCRAPES_FAILED,
                    "no server metrics for stage "
                            + stage
                            + (prometheus ? " from Prometheus" : "")
                            + (errors.isEmpty() ? "" : ": " + errors.getFirst())
                            + "; the run continues without them");
        }
        ProfileAssembly.Assembled assembled =
                ProfileAssembly.assemble(
                        run, stage, stageParts, model, keys, Instant.parse(start), serverMetrics);
        if (assembled.profile() instanceof ObjectNode document) {
            EnvironmentFingerprint.annotate(
                    document,
                    status.view().getEnvironment(),
                    Instant.parse(start),
                    clock.instant());
        }
        OutputConfigMaps.Stored stored =
                cluster.storeProfile(
                        run,
                        status.view().getProfiles(),
                        status.view().getProfileConfigMaps(),
                        results,
                        assembled.result().getProfileKey(),
                        assembled.profile());
        results.add(assembled.result());
        List<JsonNode> profiles = stored.statusProfiles();
        List<String> configMaps = stored.configMaps();
        status.condition(ConditionTypes.RESULTS_STORED, true, stored.reason(), stored.message());
        status.apply(
                s -> {
                    s.setResults(results);
                    s.setProfiles(profiles);
                    s.setProfileConfigMap(configMaps.getFirst());
                    s.setProfileConfigMaps(configMaps);
                    RunSummary summary = summary(s);
                    StageResult r = assembled.result();
                    summary.setRps(
                            r.getThroughput() == null
                                    ? null
                                    : String.format(Locale.ROOT, "%.2f", r.getThroughput()));
                    summary.setTtftP50(
                            r.getTtftMs() == null ? null : millis(r.getTtftMs().getP50()));
                    summary.setLatencyP99(
                            r.getLatencyMs() == null ? null : millis(r.getLatencyMs().getP99()));
                });
    }

    /** Every stage's profile document, from status or, when status has none, the ConfigMaps. */
    private List<JsonNode> profiles(RunTurn turn) {
        return cluster.profiles(
                turn.run(),
                turn.status().view().getProfiles(),
                turn.status().view().getProfileConfigMaps(),
                turn.results());
    }

    private static RunSummary summary(BenchmarkRunStatus status) {
        if (status.getSummary() == null) {
            status.setSummary(new RunSummary());
        }
        return status.getSummary();
    }

    /** Formats milliseconds for kubectl: {@code 112ms}, {@code 1.84s}. */
    static String millis(Double ms) {
        if (ms == null) {
            return null;
        }
        return ms < 1000
                ? String.format(Locale.ROOT, "%.0fms", ms)
                : String.format(Locale.ROOT, "%.2fs", ms / 1000);
    }

    private void live(
            StatusAggregator status, Parts parts, int stage, List<StageSpec> stages, Instant now) {
        long completed = 0;
        long failed = 0;
        long inFlight = 0;
        double rate = 0;
        double ttftSum = 0;
        int ttftCount = 0;
        int reporting = 0;
        for (Parts.Part part : parts.all()) {
            ProgressReport p = part.progress();
            if (p == null || p.stage() != stage) {
                continue;
            }
            reporting++;
            completed += p.completed();
            failed += p.failed();
            inFlight += p.inFlight();
            rate += p.achievedRate();
            if (p.ttftP50Ms() != null) {
                ttftSum += p.ttftP50Ms();
                ttftCount++;
            }
        }
        long doneBefore = 0;
        long failedBefore = 0;
        if (status.view().getResults() != null) {
            for (StageResult r : status.view().getResults()) {
                doneBefore += r.getCompleted() == null ? 0 : r.getCompleted();
                failedBefore += r.getFailed() == null ? 0 : r.getFailed();
            }
        }
        LiveStatus live = new LiveStatus();
        live.setUpdatedAt(StatusAggregator.format(now));
        live.setStage(stage);
        live.setRunnersReporting(reporting);
        live.setCompleted(completed);
        live.setFailed(failed);
        live.setInFlight(inFlight);
        live.setRequestRate(stages.get(stage - 1).getRequestRate());
        live.setAchievedRate(rate);
        live.setTtftP50Ms(ttftCount == 0 ? null : ttftSum / ttftCount);
        long allCompleted = doneBefore + completed;
        long allFailed = failedBefore + failed;
        status.apply(
                s -> {
                    s.setLive(live);
                    s.setProgress(progress(stage, stages, allCompleted, allFailed));
                    if (live.getTtftP50Ms() != null) {
                        summary(s).setTtftP50(millis(live.getTtftP50Ms()));
                    }
                    summary(s).setRps(String.format(Locale.ROOT, "%.2f", live.getAchievedRate()));
                });
    }

    static RunProgress progress(int stage, List<StageSpec> stages, long completed, long failed) {
        RunProgress progress = new RunProgress();
        progress.setCurrentStage(stage);
        progress.setStages(stages.size());
        progress.setCompleted(completed);
        progress.setFailed(failed);
        Long total = 0L;
        for (StageSpec s : stages) {
            if (s.getNumPrompts() == null) {
                total = null;
                break;
            }
            total += s.getNumPrompts();
        }
        progress.setTotal(total);
        progress.setDone(completed + "/" + (total == null ? "?" : total.toString()));
        return progress;
    }

    private boolean runnerFailure(RunTurn turn) {
        var failedPart = turn.parts().failed();
        if (failedPart.isPresent()) {
            String message =
                    "runner pod "
                            + failedPart.get().index()
                            + " failed: "
                            + (failedPart.get().error() == null
                                    ? "no reason given"
                                    : failedPart.get().error());
            turn.finish(Phase.FAILED, "RunnerFailed", message);
            return true;
        }
        Job job = turn.runnerJob().orElse(null);
        if (job != null && job.getStatus() != null) {
            Integer failed = job.getStatus().getFailed();
            boolean jobFailed =
                    (failed != null && failed > 0)
                            || (job.getStatus().getConditions() != null
                                    && job.getStatus().getConditions().stream()
                                            .anyMatch(
                                                    c ->
                                                            "Failed".equals(c.getType())
                                                                    && "True"
                                                                            .equals(
                                                                                    c
                                                                                            .getStatus())));
            if (jobFailed) {
                String message =
                        "runner Job "
                                + job.getMetadata().getName()
                                + " failed"
                                + (failed != null ? " (" + failed + " pod(s) failed)" : "")
                                + "; results of finished stages are kept";
                turn.finish(Phase.FAILED, "RunnerFailed", message);
                return true;
            }
        }
        return false;
    }

    private boolean deadlineExceeded(RunTurn turn) {
        String timeout = turn.spec().getTimeout();
        String startTime = turn.status().view().getStartTime();
        if (timeout == null || startTime == null) {
            return false;
        }
        if (turn.now().isAfter(Instant.parse(startTime).plus(Durations.parse(timeout)))) {
            turn.finish(
                    Phase.FAILED,
                    "DeadlineExceeded",
                    "spec.timeout " + timeout + " exceeded; results of finished stages are kept");
            return true;
        }
        return false;
    }

    private Duration finished(RunTurn turn) {
        BenchmarkRun run = turn.run();
        StatusAggregator status = turn.status();
        Instant now = turn.now();
        Integer ttl = run.getSpec().getTtlSecondsAfterFinished();
        String completion = status.view().getCompletionTime();
        if (ttl == null || completion == null) {
            return null;
        }
        Instant expiry = Instant.parse(completion).plusSeconds(ttl);
        if (!now.isBefore(expiry)) {
            LOG.infof(
                    "%s/%s: deleting after ttlSecondsAfterFinished=%d",
                    run.getMetadata().getNamespace(), run.getMetadata().getName(), ttl);
            cluster.delete(run);
            return Requeue.DELETED;
        }
        return Duration.between(now, expiry).plus(Requeue.AFTER_EXPIRY);
    }

    private static String cancelMessage(StatusAggregator status) {
        int finished = status.view().getResults() == null ? 0 : status.view().getResults().size();
        return "cancelled by spec.cancel; " + finished + " finished stage profile(s) kept";
    }

    private Parts parts(BenchmarkRun run, Context<BenchmarkRun> context) {
        var source = context.eventSourceRetriever().getEventSourceFor(ConfigMap.class, PARTS);
        return Parts.from(source.getSecondaryResources(run), run.getMetadata().getUid());
    }

    @Override
    public ErrorStatusUpdateControl<BenchmarkRun> updateErrorStatus(
            BenchmarkRun run, Context<BenchmarkRun> context, Exception e) {
        LOG.warnf(
                e,
                "%s/%s: reconcile failed (will retry)",
                run.getMetadata().getNamespace(),
                run.getMetadata().getName());
        releaseUnstartedAdmission(run);
        return ErrorStatusUpdateControl.noStatusUpdate();
    }

    /**
     * A reconcile that admitted the run and then failed (its status patch among others) left it
     * Pending: the slot goes back, or a run that never started would hold it until its next
     * successful reconcile. When the API server cannot say, the slot stays taken; holding one too
     * many is the safe side.
     */
    private void releaseUnstartedAdmission(BenchmarkRun run) {
        if (!admission.limited()) {
            return;
        }
        try {
            BenchmarkRun latest =
                    client.resources(BenchmarkRun.class)
                            .inNamespace(run.getMetadata().getNamespace())
                            .withName(run.getMetadata().getName())
                            .get();
            boolean pending =
                    latest == null
                            || latest.getStatus() == null
                            || latest.getStatus().getPhase() == null
                            || latest.getStatus().getPhase() == Phase.PENDING;
            if (pending) {
                admission.release(run.getMetadata().getUid());
            }
        } catch (KubernetesClientException readFailed) {
            LOG.debugf(
                    readFailed,
                    "%s/%s: cannot tell whether the run started; its admission stays",
                    run.getMetadata().getNamespace(),
                    run.getMetadata().getName());
        }
    }
}
