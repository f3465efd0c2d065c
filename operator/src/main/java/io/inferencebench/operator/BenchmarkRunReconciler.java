package io.inferencebench.operator;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.operator.dependent.ControlConfigMapDependent;
import io.inferencebench.operator.dependent.Launched;
import io.inferencebench.operator.dependent.RunnerJobDependent;
import io.inferencebench.operator.dependent.RunnerWorkOrderDependent;
import io.inferencebench.operator.metrics.ServerMetricsScraper;
import io.inferencebench.operator.run.AggregatingStep;
import io.inferencebench.operator.run.FinishedStep;
import io.inferencebench.operator.run.InitializingStep;
import io.inferencebench.operator.run.KubernetesRunCluster;
import io.inferencebench.operator.run.PendingStep;
import io.inferencebench.operator.run.PhaseEvents;
import io.inferencebench.operator.run.Requeue;
import io.inferencebench.operator.run.RunCluster;
import io.inferencebench.operator.run.RunGuards;
import io.inferencebench.operator.run.RunQueue;
import io.inferencebench.operator.run.RunTurn;
import io.inferencebench.operator.run.RunningStep;
import io.inferencebench.operator.run.SearchStep;
import io.inferencebench.operator.run.StageAssembly;
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
import java.util.List;
import org.jboss.logging.Logger;

/**
 * The BenchmarkRun controller: wiring, and one reconcile that reads the run fresh, hands it to the
 * step of its phase ({@code operator/run/}: Pending, Initializing, Running, Aggregating, Finished),
 * lets the runner resources (the workflow's dependents) follow the status decided, and patches that
 * status once. Status is built only through {@link StatusAggregator}; user mistakes become
 * conditions and Warning Events, exceptions are left for transient API errors (retried with
 * backoff). docs/architecture.md, "The run's life as steps", says where a new feature goes.
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

    private final KubernetesClient client;
    private final Clock clock;
    private final ServerMetricsScraper scraper;
    private final RunMetrics metrics;
    private final RunAdmission admission;
    private final RunGuards guards;
    private final PendingStep pending;
    private final InitializingStep initializing;
    private final RunningStep running;
    private final AggregatingStep aggregating;
    private final FinishedStep finished;
    private final PhaseEvents phaseEvents;

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
        RunCluster cluster = new KubernetesRunCluster(client, new EventRecorder(client));
        this.scraper = new ServerMetricsScraper(client);
        this.metrics = new RunMetrics(registry);
        this.admission = admission;
        RunQueue queue = new RunQueue(admission, cluster);
        StageAssembly assembly = new StageAssembly(cluster, scraper, clock);
        this.guards = new RunGuards(cluster);
        this.pending = new PendingStep(cluster, queue);
        SearchStep search = new SearchStep();
        this.initializing = new InitializingStep(cluster, scraper, guards, search, clock);
        this.running = new RunningStep(cluster, scraper, guards, assembly, search, clock);
        this.aggregating = new AggregatingStep(assembly);
        this.finished = new FinishedStep(cluster, scraper, queue);
        this.phaseEvents = new PhaseEvents(cluster);
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
                        .withLabelSelector(Labels.PART_CONFIGMAPS_SELECTOR)
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
        if (status.phase().isTerminal()) {
            requeue = finished.ended(turn, before, requeue);
        }
        BenchmarkRunStatus built = status.build();
        phaseEvents.announce(run, before, built);
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

    /** The phase's step; before any step of a run that has not ended, the guards. */
    private Duration step(RunTurn turn) {
        Phase phase = turn.status().phase();
        if (phase.isTerminal()) {
            return finished.step(turn);
        }
        if (guards.stopsRun(turn)) {
            return null;
        }
        return switch (phase) {
            case PENDING -> pending.step(turn);
            case INITIALIZING -> initializing.step(turn);
            case RUNNING -> running.step(turn);
            case AGGREGATING -> aggregating.step(turn);
            default -> null;
        };
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
