package io.inferencebench.operator.schedule;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BaselineSpec;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkSchedule;
import io.inferencebench.crds.v1alpha1.BenchmarkScheduleSpec;
import io.inferencebench.crds.v1alpha1.BenchmarkScheduleStatus;
import io.inferencebench.crds.v1alpha1.ConcurrencyPolicy;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ScheduleBaseline;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.Labels;
import io.inferencebench.operator.StatusAggregator;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.inject.Inject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * A BenchmarkSchedule's life: at each fire time create a BenchmarkRun from the template (with the
 * baseline the policy chooses), honour the concurrency policy, prune history, report the last
 * finished run's verdict, and come back at the next fire time. Time comes from an injectable {@link
 * Clock} so tests move it instead of waiting for minutes.
 */
@ControllerConfiguration(name = "benchmarkschedule")
public class BenchmarkScheduleReconciler implements Reconciler<BenchmarkSchedule> {

    private static final Logger LOG = Logger.getLogger(BenchmarkScheduleReconciler.class);

    /** Name of the event source of the schedules' runs. */
    public static final String RUNS = "scheduled-runs";

    /** Earliest requeue: a fire time reached a few milliseconds early is looked at again soon. */
    static final Duration MIN_REQUEUE = Duration.ofMillis(200);

    private final KubernetesClient client;
    private final Clock clock;
    private final EventRecorder events;
    private final ScheduleMetrics metrics;

    @Inject
    public BenchmarkScheduleReconciler(KubernetesClient client, MeterRegistry registry) {
        this(client, Clock.systemUTC(), registry);
    }

    public BenchmarkScheduleReconciler(
            KubernetesClient client, Clock clock, MeterRegistry registry) {
        this.client = client;
        this.clock = clock;
        this.events = new EventRecorder(client);
        this.metrics = new ScheduleMetrics(registry);
    }

    @Override
    public List<EventSource<?, BenchmarkSchedule>> prepareEventSources(
            EventSourceContext<BenchmarkSchedule> context) {
        metrics.bind(context.getPrimaryCache()::list);
        var runs =
                InformerEventSourceConfiguration.from(BenchmarkRun.class, BenchmarkSchedule.class)
                        .withName(RUNS)
                        .withLabelSelector(Labels.SCHEDULE)
                        .withSecondaryToPrimaryMapper(
                                Mappers.fromOwnerReferences(BenchmarkSchedule.class))
                        .build();
        return List.of(new InformerEventSource<>(runs, context));
    }

    @Override
    public UpdateControl<BenchmarkSchedule> reconcile(
            BenchmarkSchedule schedule, Context<BenchmarkSchedule> context) {
        // lastScheduleTime decides whether a run is due; it must be the one last written, which
        // the informer cache may not have seen yet.
        BenchmarkSchedule latest =
                client.resources(BenchmarkSchedule.class)
                        .inNamespace(schedule.getMetadata().getNamespace())
                        .withName(schedule.getMetadata().getName())
                        .get();
        if (latest == null) {
            return UpdateControl.noUpdate();
        }
        Instant now = clock.instant();
        BenchmarkScheduleSpec spec = latest.getSpec();
        ScheduleStatusAggregator status =
                new ScheduleStatusAggregator(
                        latest.getStatus(), latest.getMetadata().getGeneration(), now);
        List<BenchmarkRun> runs = new ArrayList<>(owned(latest, context));
        Duration requeue = null;

        CronSchedule.Parsed parsed = CronSchedule.parse(spec.getSchedule(), spec.getTimeZone());
        if (!parsed.valid()) {
            boolean news =
                    latest.getStatus() == null
                            || latest.getStatus()
                                    .condition(ConditionTypes.SCHEDULE_VALID)
                                    .map(c -> !parsed.problem().equals(c.getMessage()))
                                    .orElse(true);
            if (news) {
                events.record(latest, EventRecorder.WARNING, parsed.reason(), parsed.problem());
            }
            status.condition(
                    ConditionTypes.SCHEDULE_VALID, "False", parsed.reason(), parsed.problem());
            status.apply(s -> s.setNextScheduleTime(null));
        } else {
            CronSchedule cron = parsed.schedule();
            status.condition(
                    ConditionTypes.SCHEDULE_VALID,
                    "True",
                    "Valid",
                    "schedule '"
                            + spec.getSchedule()
                            + "' in "
                            + (spec.getTimeZone() == null ? "UTC" : spec.getTimeZone()));
            boolean suspended = Boolean.TRUE.equals(spec.getSuspend());
            if (suspended) {
                // Fire times pass unused while suspended, so resuming does not make one up.
                skipWhileSuspended(latest, cron, status, now);
            } else {
                fire(latest, cron, runs, status, now);
            }
            prune(latest, runs);
            Optional<Instant> next = cron.next(now);
            status.apply(
                    s ->
                            s.setNextScheduleTime(
                                    suspended
                                            ? null
                                            : next.map(StatusAggregator::format).orElse(null)));
            if (next.isPresent()) {
                Duration until = Duration.between(now, next.get());
                requeue = until.compareTo(MIN_REQUEUE) < 0 ? MIN_REQUEUE : until;
            }
        }
        verdict(latest, runs, status);
        status.apply(
                s ->
                        s.setActive(
                                runs.stream()
                                        .filter(r -> !finished(r))
                                        .map(r -> r.getMetadata().getName())
                                        .sorted()
                                        .toList()));
        BenchmarkScheduleStatus built = status.build();
        boolean changed = status.changed();
        latest.setStatus(built);
        metrics.refresh();
        UpdateControl<BenchmarkSchedule> control =
                changed ? UpdateControl.patchStatus(latest) : UpdateControl.noUpdate();
        return requeue == null ? control : control.rescheduleAfter(requeue);
    }

    private void fire(
            BenchmarkSchedule schedule,
            CronSchedule cron,
            List<BenchmarkRun> runs,
            ScheduleStatusAggregator status,
            Instant now) {
        BenchmarkScheduleStatus before = status.view();
        Instant since =
                before.getLastScheduleTime() != null
                        ? Instant.parse(before.getLastScheduleTime())
                        : Instant.parse(schedule.getMetadata().getCreationTimestamp());
        Optional<Instant> due = cron.due(since, now);
        if (due.isEmpty()) {
            return;
        }
        Instant at = due.get();
        String name = ScheduledRun.name(schedule.getMetadata().getName(), at);
        List<BenchmarkRun> active = runs.stream().filter(r -> !finished(r)).toList();
        if (!active.isEmpty()
                && spec(schedule).getConcurrencyPolicy() != ConcurrencyPolicy.REPLACE) {
            String running =
                    String.join(", ", active.stream().map(r -> r.getMetadata().getName()).toList());
            events.record(
                    schedule,
                    EventRecorder.NORMAL,
                    "Skipped",
                    "run due at "
                            + StatusAggregator.format(at)
                            + " skipped: "
                            + running
                            + " still running (concurrencyPolicy Forbid)");
            status.apply(s -> s.setLastScheduleTime(StatusAggregator.format(at)));
            return;
        }
        for (BenchmarkRun replaced : active) {
            client.resource(replaced).delete();
            runs.remove(replaced);
            events.record(
                    schedule,
                    EventRecorder.NORMAL,
                    "Replaced",
                    "deleted running "
                            + replaced.getMetadata().getName()
                            + " for the run due at "
                            + StatusAggregator.format(at)
                            + " (concurrencyPolicy Replace)");
        }
        BenchmarkRun run =
                ScheduledRun.desired(
                        schedule,
                        at,
                        ScheduleBaselineChoice.choose(spec(schedule).getBaseline(), runs));
        try {
            BenchmarkRun created = client.resource(run).create();
            runs.add(created);
            events.record(schedule, EventRecorder.NORMAL, "Created", "created run " + name);
            LOG.infof(
                    "%s/%s: created %s for %s",
                    schedule.getMetadata().getNamespace(),
                    schedule.getMetadata().getName(),
                    name,
                    StatusAggregator.format(at));
        } catch (KubernetesClientException e) {
            if (e.getCode() != 409) {
                throw e;
            }
            // Created by an earlier attempt whose status patch was lost: the name is the time.
        }
        status.apply(
                s -> {
                    s.setLastRun(name);
                    s.setLastScheduleTime(StatusAggregator.format(at));
                });
    }

    private static void skipWhileSuspended(
            BenchmarkSchedule schedule,
            CronSchedule cron,
            ScheduleStatusAggregator status,
            Instant now) {
        String last = status.view().getLastScheduleTime();
        Instant since =
                last != null
                        ? Instant.parse(last)
                        : Instant.parse(schedule.getMetadata().getCreationTimestamp());
        cron.due(since, now)
                .ifPresent(
                        at ->
                                status.apply(
                                        s -> s.setLastScheduleTime(StatusAggregator.format(at))));
    }

    private void prune(BenchmarkSchedule schedule, List<BenchmarkRun> runs) {
        List<ScheduleHistory.Entry> entries =
                runs.stream()
                        .map(
                                r ->
                                        new ScheduleHistory.Entry(
                                                r.getMetadata().getName(),
                                                ScheduledRun.scheduledAt(r),
                                                finished(r),
                                                baselineRuns(r)))
                        .toList();
        ScheduleBaseline policy = spec(schedule).getBaseline();
        Set<String> pinned =
                policy == null || policy.getRunName() == null
                        ? Set.of()
                        : Set.of(policy.getRunName());
        List<String> delete =
                ScheduleHistory.prune(entries, spec(schedule).historyLimitValue(), pinned);
        for (String name : delete) {
            runs.stream()
                    .filter(r -> name.equals(r.getMetadata().getName()))
                    .findFirst()
                    .ifPresent(
                            r -> {
                                client.resource(r).delete();
                                runs.remove(r);
                            });
        }
    }

    /** The runs a run's {@code spec.baseline} names (one, several, or none). */
    private static java.util.Set<String> baselineRuns(BenchmarkRun run) {
        BaselineSpec baseline = run.getSpec() == null ? null : run.getSpec().getBaseline();
        if (baseline == null) {
            return java.util.Set.of();
        }
        if (baseline.getRunNames() != null) {
            return java.util.Set.copyOf(baseline.getRunNames());
        }
        return baseline.getRunName() == null
                ? java.util.Set.of()
                : java.util.Set.of(baseline.getRunName());
    }

    private void verdict(
            BenchmarkSchedule schedule, List<BenchmarkRun> runs, ScheduleStatusAggregator status) {
        Optional<BenchmarkRun> lastFinished =
                runs.stream()
                        .filter(BenchmarkScheduleReconciler::finished)
                        .max(
                                Comparator.comparing(ScheduledRun::scheduledAt)
                                        .thenComparing(r -> r.getMetadata().getName()));
        if (lastFinished.isEmpty()) {
            if (status.view().getLastFinishedRun() == null) {
                status.condition(
                        ConditionTypes.REGRESSING,
                        "Unknown",
                        ScheduleVerdict.NO_FINISHED_RUN,
                        "no run of this schedule has finished yet");
            }
            return;
        }
        ScheduleVerdict verdict = ScheduleVerdict.of(lastFinished.get());
        BenchmarkScheduleStatus before = status.before();
        boolean alreadyReported =
                before != null
                        && verdict.run().equals(before.getLastFinishedRun())
                        && verdict.verdict().equals(before.getLastVerdict());
        if (verdict.regressed() && !alreadyReported) {
            events.record(schedule, EventRecorder.WARNING, "Regressed", verdict.message());
            metrics.regression(
                    schedule.getMetadata().getNamespace(), schedule.getMetadata().getName());
        }
        status.condition(
                ConditionTypes.REGRESSING,
                verdict.regressingStatus(),
                verdict.reason(),
                verdict.message());
        status.apply(
                s -> {
                    s.setLastFinishedRun(verdict.run());
                    s.setLastVerdict(verdict.verdict());
                });
    }

    private static List<BenchmarkRun> owned(
            BenchmarkSchedule schedule, Context<BenchmarkSchedule> context) {
        String uid = schedule.getMetadata().getUid();
        return context.getSecondaryResources(BenchmarkRun.class).stream()
                .filter(
                        r ->
                                r.getMetadata().getOwnerReferences() != null
                                        && r.getMetadata().getOwnerReferences().stream()
                                                .anyMatch(o -> uid.equals(o.getUid())))
                .filter(r -> r.getMetadata().getDeletionTimestamp() == null)
                .toList();
    }

    private static BenchmarkScheduleSpec spec(BenchmarkSchedule schedule) {
        return schedule.getSpec();
    }

    private static Phase phase(BenchmarkRun run) {
        return run.getStatus() == null || run.getStatus().getPhase() == null
                ? Phase.PENDING
                : run.getStatus().getPhase();
    }

    private static boolean finished(BenchmarkRun run) {
        return phase(run).isTerminal();
    }

    @Override
    public ErrorStatusUpdateControl<BenchmarkSchedule> updateErrorStatus(
            BenchmarkSchedule schedule, Context<BenchmarkSchedule> context, Exception e) {
        LOG.warnf(
                e,
                "%s/%s: reconcile failed (will retry)",
                schedule.getMetadata().getNamespace(),
                schedule.getMetadata().getName());
        return ErrorStatusUpdateControl.noStatusUpdate();
    }
}
