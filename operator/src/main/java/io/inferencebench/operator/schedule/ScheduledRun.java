package io.inferencebench.operator.schedule;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.inferencebench.crds.v1alpha1.BaselineSpec;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.BenchmarkSchedule;
import io.inferencebench.operator.Labels;
import io.inferencebench.operator.StatusAggregator;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * The BenchmarkRun a schedule creates for one fire time: the template's spec, the baseline the
 * schedule chose, owned by the schedule (deleted with it), named after the fire time so that a
 * second attempt for the same time is refused by the API server instead of running twice.
 */
public final class ScheduledRun {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final DateTimeFormatter NAME_TIME =
            DateTimeFormatter.ofPattern("yyyyMMddHHmm").withZone(ZoneOffset.UTC);

    private ScheduledRun() {}

    /**
     * The run's name.
     *
     * @param schedule the schedule's name
     * @param scheduledAt the fire time
     * @return {@code <schedule>-<yyyyMMddHHmm>} (UTC)
     */
    public static String name(String schedule, Instant scheduledAt) {
        return schedule + "-" + NAME_TIME.format(scheduledAt);
    }

    /**
     * Builds the run.
     *
     * @param schedule the owner
     * @param scheduledAt the fire time
     * @param baseline what to compare with, or {@code null} (the template's own baseline, if any,
     *     then stays)
     * @return the run to create
     */
    public static BenchmarkRun desired(
            BenchmarkSchedule schedule, Instant scheduledAt, BaselineSpec baseline) {
        String name = schedule.getMetadata().getName();
        BenchmarkRunSpec spec =
                JSON.convertValue(
                        JSON.valueToTree(schedule.getSpec().getTemplate()), BenchmarkRunSpec.class);
        if (baseline != null) {
            spec.setBaseline(baseline);
        }
        BenchmarkRun run = new BenchmarkRun();
        run.setMetadata(
                new ObjectMetaBuilder()
                        .withName(name(name, scheduledAt))
                        .withNamespace(schedule.getMetadata().getNamespace())
                        .addToLabels(Labels.NAME, Labels.APP)
                        .addToLabels(Labels.MANAGED_BY, Labels.OPERATOR)
                        .addToLabels(Labels.SCHEDULE, name)
                        .addToAnnotations(Labels.SCHEDULED_AT, StatusAggregator.format(scheduledAt))
                        // No blockOwnerDeletion: it would need update on
                        // benchmarkschedules/finalizers, and nothing waits on it.
                        .withOwnerReferences(
                                new OwnerReferenceBuilder()
                                        .withApiVersion(schedule.getApiVersion())
                                        .withKind(schedule.getKind())
                                        .withName(name)
                                        .withUid(schedule.getMetadata().getUid())
                                        .withController(true)
                                        .build())
                        .build());
        run.setSpec(spec);
        return run;
    }

    /**
     * The fire time a run was created for.
     *
     * @param run a run of a schedule
     * @return the {@link Labels#SCHEDULED_AT} annotation, else the creation time
     */
    public static Instant scheduledAt(BenchmarkRun run) {
        var annotations = run.getMetadata().getAnnotations();
        String at = annotations == null ? null : annotations.get(Labels.SCHEDULED_AT);
        if (at != null) {
            try {
                return Instant.parse(at);
            } catch (RuntimeException e) {
                // A hand-edited annotation: fall back to when the run was created.
            }
        }
        return Instant.parse(run.getMetadata().getCreationTimestamp());
    }
}
