package io.inferencebench.operator;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.LiveStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * The operator's run metrics on {@code /q/metrics}, read at scrape time from the BenchmarkRuns in
 * the controller's informer cache (what the reconciler last wrote to status):
 *
 * <ul>
 *   <li>{@code inferencebench_runs{phase}}: runs per {@code status.phase} (a run without status
 *       counts as Pending); every phase is always present.
 *   <li>per unfinished run ({@code namespace}, {@code name} labels): {@code
 *       inferencebench_run_stage} (1-based current stage, 0 before the start barrier), {@code
 *       inferencebench_run_stages} (stages in the spec), {@code inferencebench_run_live_rps}
 *       ({@code status.live.achievedRate}, 0 outside a stage), {@code
 *       inferencebench_run_live_requested_rps} ({@code status.live.requestRate}) and {@code
 *       inferencebench_run_live_ttft_p50_seconds} ({@code status.live.ttftP50Ms} / 1000). A value
 *       that status does not have is NaN.
 * </ul>
 *
 * <p>Which runs have per-run series is refreshed after every reconcile and every {@link
 * #SWEEP_SECONDS} seconds (a deleted or finished run's series disappear then). Standby replicas
 * (leader election) fill their informer caches too, so every replica reports the same values.
 */
public final class RunMetrics implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(RunMetrics.class);

    static final String RUNS = "inferencebench.runs";
    static final String STAGE = "inferencebench.run.stage";
    static final String STAGES = "inferencebench.run.stages";
    static final String LIVE_RPS = "inferencebench.run.live.rps";
    static final String LIVE_REQUESTED_RPS = "inferencebench.run.live.requested.rps";
    static final String LIVE_TTFT_P50 = "inferencebench.run.live.ttft.p50.seconds";

    static final long SWEEP_SECONDS = 5;

    private volatile Supplier<Stream<BenchmarkRun>> runs = Stream::empty;
    private final MultiGauge stage;
    private final MultiGauge stages;
    private final MultiGauge liveRps;
    private final MultiGauge requestedRps;
    private final MultiGauge ttftP50;
    private final ScheduledExecutorService sweeper;

    public RunMetrics(MeterRegistry registry) {
        for (Phase phase : Phase.values()) {
            Gauge.builder(RUNS, this, m -> m.count(phase))
                    .tag("phase", phase.wireName())
                    .description("BenchmarkRuns by status.phase")
                    .register(registry);
        }
        stage =
                MultiGauge.builder(STAGE)
                        .description("1-based current stage of an unfinished run (0: not started)")
                        .register(registry);
        stages =
                MultiGauge.builder(STAGES)
                        .description("Number of load stages of an unfinished run")
                        .register(registry);
        liveRps =
                MultiGauge.builder(LIVE_RPS)
                        .description(
                                "Achieved request rate of the current stage, all runner pods,"
                                        + " requests/s")
                        .register(registry);
        requestedRps =
                MultiGauge.builder(LIVE_REQUESTED_RPS)
                        .description("Requested rate of the current stage, requests/s")
                        .register(registry);
        ttftP50 =
                MultiGauge.builder(LIVE_TTFT_P50)
                        .description("Median time to first token of the current stage, seconds")
                        .register(registry);
        sweeper =
                Executors.newSingleThreadScheduledExecutor(
                        r -> {
                            Thread t = new Thread(r, "inferencebench-run-metrics");
                            t.setDaemon(true);
                            return t;
                        });
        sweeper.scheduleWithFixedDelay(
                this::refresh, SWEEP_SECONDS, SWEEP_SECONDS, TimeUnit.SECONDS);
    }

    /**
     * Reads runs from here from now on (the controller's primary cache, which may not be started
     * yet: until then there are no runs).
     *
     * @param source the runs, listed anew on every call
     */
    public void bind(Supplier<Stream<BenchmarkRun>> source) {
        this.runs =
                () -> {
                    try {
                        return source.get();
                    } catch (RuntimeException e) {
                        // The informers are not started yet.
                        return Stream.empty();
                    }
                };
    }

    private double count(Phase phase) {
        return runs.get().filter(r -> phase(r) == phase).count();
    }

    private static Phase phase(BenchmarkRun run) {
        BenchmarkRunStatus status = run.getStatus();
        return status == null || status.getPhase() == null ? Phase.PENDING : status.getPhase();
    }

    /**
     * Makes the per-run series match the unfinished runs now in the cache. Never throws: metrics
     * must not fail a reconcile (the next sweep tries again).
     */
    public void refresh() {
        try {
            update();
        } catch (RuntimeException e) {
            LOG.debugf(e, "run metrics not refreshed");
        }
    }

    private synchronized void update() {
        List<MultiGauge.Row<?>> stageRows = new ArrayList<>();
        List<MultiGauge.Row<?>> stagesRows = new ArrayList<>();
        List<MultiGauge.Row<?>> rpsRows = new ArrayList<>();
        List<MultiGauge.Row<?>> requestedRows = new ArrayList<>();
        List<MultiGauge.Row<?>> ttftRows = new ArrayList<>();
        runs.get()
                .filter(r -> !phase(r).isTerminal())
                .forEach(
                        run -> {
                            String namespace = run.getMetadata().getNamespace();
                            String name = run.getMetadata().getName();
                            Tags tags = Tags.of("namespace", namespace, "name", name);
                            stageRows.add(row(tags, namespace, name, RunMetrics::currentStage));
                            stagesRows.add(row(tags, namespace, name, RunMetrics::stageCount));
                            rpsRows.add(
                                    row(
                                            tags,
                                            namespace,
                                            name,
                                            r ->
                                                    live(r).map(LiveStatus::getAchievedRate)
                                                            .orElse(0.0)));
                            requestedRows.add(
                                    row(
                                            tags,
                                            namespace,
                                            name,
                                            r ->
                                                    live(r).map(LiveStatus::getRequestRate)
                                                            .orElse(null)));
                            ttftRows.add(
                                    row(
                                            tags,
                                            namespace,
                                            name,
                                            r ->
                                                    live(r).map(LiveStatus::getTtftP50Ms)
                                                            .map(ms -> ms / 1000)
                                                            .orElse(null)));
                        });
        stage.register(stageRows, true);
        stages.register(stagesRows, true);
        liveRps.register(rpsRows, true);
        requestedRps.register(requestedRows, true);
        ttftP50.register(ttftRows, true);
    }

    private MultiGauge.Row<?> row(
            Tags tags, String namespace, String name, Function<BenchmarkRun, Number> value) {
        return MultiGauge.Row.of(
                tags,
                () -> {
                    Optional<BenchmarkRun> run =
                            runs.get().filter(r -> is(r, namespace, name)).findFirst();
                    Number n = run.map(value).orElse(null);
                    return n == null ? Double.NaN : n;
                });
    }

    private static boolean is(HasMetadata r, String namespace, String name) {
        return name.equals(r.getMetadata().getName())
                && namespace.equals(r.getMetadata().getNamespace());
    }

    private static Number currentStage(BenchmarkRun run) {
        BenchmarkRunStatus status = run.getStatus();
        if (status == null || status.getProgress() == null) {
            return 0;
        }
        Integer current = status.getProgress().getCurrentStage();
        return current == null ? 0 : current;
    }

    private static Number stageCount(BenchmarkRun run) {
        BenchmarkRunStatus status = run.getStatus();
        if (status != null && status.getProgress() != null) {
            Integer total = status.getProgress().getStages();
            if (total != null) {
                return total;
            }
        }
        try {
            return CapacityProgress.stages(run, run.getStatus()).size();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static Optional<LiveStatus> live(BenchmarkRun run) {
        return Optional.ofNullable(run.getStatus()).map(BenchmarkRunStatus::getLive);
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
    }
}
