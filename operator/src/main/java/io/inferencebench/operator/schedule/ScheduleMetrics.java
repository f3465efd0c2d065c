package io.inferencebench.operator.schedule;

import io.inferencebench.crds.v1alpha1.BenchmarkSchedule;
import io.inferencebench.crds.v1alpha1.RunComparison;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.jboss.logging.Logger;

/**
 * Schedule metrics on {@code /q/metrics} for alerting, e.g. {@code
 * inferencebench_schedule_last_verdict == 1}:
 *
 * <ul>
 *   <li>{@code inferencebench_schedule_last_verdict{namespace,schedule}}: 1 when the last finished
 *       run regressed against its baseline, 0 when it did not, NaN when it was not compared (no
 *       baseline, not succeeded, nothing finished yet).
 *   <li>{@code inferencebench_schedule_regressions_total{namespace,schedule}}: regressions this
 *       operator process saw (one per regressed run; a counter, so it restarts at 0 with the
 *       process as Prometheus counters do).
 * </ul>
 */
public final class ScheduleMetrics {

    private static final Logger LOG = Logger.getLogger(ScheduleMetrics.class);

    static final String LAST_VERDICT = "inferencebench.schedule.last.verdict";
    static final String REGRESSIONS = "inferencebench.schedule.regressions";

    private final MeterRegistry registry;
    private final MultiGauge lastVerdict;
    private volatile Supplier<Stream<BenchmarkSchedule>> schedules = Stream::empty;

    public ScheduleMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.lastVerdict =
                MultiGauge.builder(LAST_VERDICT)
                        .description(
                                "1: the schedule's last finished run regressed against its"
                                        + " baseline; 0: it did not; NaN: not compared")
                        .register(registry);
    }

    /**
     * Reads schedules from here (the controller's primary cache).
     *
     * @param source the schedules, listed anew on every call
     */
    public void bind(Supplier<Stream<BenchmarkSchedule>> source) {
        this.schedules =
                () -> {
                    try {
                        return source.get();
                    } catch (RuntimeException e) {
                        // The informers are not started yet.
                        return Stream.empty();
                    }
                };
    }

    /**
     * Counts one regression.
     *
     * @param namespace the schedule's namespace
     * @param schedule the schedule's name
     */
    public void regression(String namespace, String schedule) {
        Counter.builder(REGRESSIONS)
                .description("Runs of a schedule that regressed against their baseline")
                .tags(Tags.of("namespace", namespace, "schedule", schedule))
                .register(registry)
                .increment();
    }

    /** Makes the verdict series match the schedules in the cache; never throws. */
    public void refresh() {
        try {
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            schedules
                    .get()
                    .forEach(
                            s -> {
                                String namespace = s.getMetadata().getNamespace();
                                String name = s.getMetadata().getName();
                                rows.add(
                                        MultiGauge.Row.of(
                                                Tags.of("namespace", namespace, "schedule", name),
                                                () -> value(namespace, name)));
                            });
            lastVerdict.register(rows, true);
        } catch (RuntimeException e) {
            LOG.debugf(e, "schedule metrics not refreshed");
        }
    }

    private Number value(String namespace, String name) {
        return schedules
                .get()
                .filter(
                        s ->
                                namespace.equals(s.getMetadata().getNamespace())
                                        && name.equals(s.getMetadata().getName()))
                .findFirst()
                .map(s -> s.getStatus() == null ? null : s.getStatus().getLastVerdict())
                .map(ScheduleMetrics::encode)
                .orElse(Double.NaN);
    }

    static double encode(String verdict) {
        if (RunComparison.REGRESSION.equals(verdict)) {
            return 1;
        }
        if (RunComparison.IMPROVEMENT.equals(verdict)
                || RunComparison.NO_SIGNIFICANT_CHANGE.equals(verdict)) {
            return 0;
        }
        return Double.NaN;
    }
}
