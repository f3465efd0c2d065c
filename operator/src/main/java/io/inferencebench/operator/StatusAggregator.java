package io.inferencebench.operator;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The one place a BenchmarkRun status is built. Starts from the current status, takes the
 * conditions and fields this reconcile decided, and keeps each condition's {@code
 * lastTransitionTime} unless its status flipped, so {@code kubectl wait} and alerting see real
 * transitions only. {@link #changed()} says whether a patch is needed at all.
 */
public final class StatusAggregator {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final BenchmarkRunStatus current;
    private final BenchmarkRunStatus next;
    private final long generation;
    private final String now;
    private final Map<String, Condition> decided = new LinkedHashMap<>();

    /**
     * @param current the status as read, or {@code null} for a new run
     * @param generation the run's metadata.generation
     * @param now the reconcile instant
     */
    public StatusAggregator(BenchmarkRunStatus current, long generation, Instant now) {
        this.current = current;
        this.next = current == null ? new BenchmarkRunStatus() : copy(current);
        this.generation = generation;
        this.now = format(now);
    }

    /** RFC 3339 with second precision, as Kubernetes writes times. */
    public static String format(Instant instant) {
        return DateTimeFormatter.ISO_INSTANT.format(instant.truncatedTo(ChronoUnit.SECONDS));
    }

    private static BenchmarkRunStatus copy(BenchmarkRunStatus status) {
        return JSON.convertValue(JSON.valueToTree(status), BenchmarkRunStatus.class);
    }

    /**
     * The phase this reconcile ends in.
     *
     * @return the current phase, {@link Phase#PENDING} for a new run
     */
    public Phase phase() {
        return next.getPhase() == null ? Phase.PENDING : next.getPhase();
    }

    /**
     * Sets the phase and message.
     *
     * @param phase the phase
     * @param message a human-readable explanation
     * @return this
     */
    public StatusAggregator phase(Phase phase, String message) {
        next.setPhase(phase);
        next.setMessage(message);
        return this;
    }

    /**
     * Decides a condition.
     *
     * @param type one of {@link ConditionTypes}
     * @param status true or false
     * @param reason CamelCase reason
     * @param message details
     * @return this
     */
    public StatusAggregator condition(String type, boolean status, String reason, String message) {
        return condition(type, status ? "True" : "False", reason, message);
    }

    /**
     * Decides a condition, possibly Unknown.
     *
     * @param type one of {@link ConditionTypes}
     * @param status True, False or Unknown
     * @param reason CamelCase reason
     * @param message details
     * @return this
     */
    public StatusAggregator condition(String type, String status, String reason, String message) {
        if (!ConditionTypes.ALL.contains(type)) {
            throw new IllegalArgumentException("unknown condition type " + type);
        }
        decided.put(
                type,
                new ConditionBuilder()
                        .withType(type)
                        .withStatus(status)
                        .withReason(reason)
                        .withMessage(message == null ? "" : message)
                        .withObservedGeneration(generation)
                        .build());
        return this;
    }

    /**
     * Changes fields other than phase and conditions.
     *
     * @param change edits the status being built; must not touch conditions
     * @return this
     */
    public StatusAggregator apply(Consumer<BenchmarkRunStatus> change) {
        List<Condition> before = next.getConditions();
        change.accept(next);
        if (next.getConditions() != before) {
            throw new IllegalStateException("conditions are set through condition(...)");
        }
        return this;
    }

    /**
     * The status being built, for reading what earlier steps decided.
     *
     * @return the working copy (do not edit conditions)
     */
    public BenchmarkRunStatus view() {
        return next;
    }

    /**
     * Builds the status.
     *
     * @return the new status; conditions in {@link ConditionTypes#ALL} order
     */
    public BenchmarkRunStatus build() {
        next.setConditions(
                mergeConditions(
                        current == null ? null : current.getConditions(),
                        decided,
                        ConditionTypes.ALL,
                        now));
        next.setObservedGeneration(generation);
        if (next.getPhase() == null) {
            next.setPhase(Phase.PENDING);
        }
        return next;
    }

    /**
     * Whether the built status differs from the current one (call after {@link #build()}).
     *
     * @return {@code true} when a status patch is needed
     */
    public boolean changed() {
        return current == null || !JSON.valueToTree(current).equals(JSON.valueToTree(next));
    }

    /**
     * The conditions after a reconcile: the decided ones, each keeping its previous {@code
     * lastTransitionTime} unless its status flipped, and the undecided ones as they were.
     *
     * @param previous the conditions as read, or {@code null}
     * @param decided what this reconcile decided, by type
     * @param order all types, in report order
     * @param now RFC 3339 instant of this reconcile
     * @return the merged list, in {@code order}
     */
    public static List<Condition> mergeConditions(
            List<Condition> previous,
            Map<String, Condition> decided,
            List<String> order,
            String now) {
        Map<String, Condition> existing = new LinkedHashMap<>();
        if (previous != null) {
            previous.forEach(c -> existing.put(c.getType(), c));
        }
        List<Condition> conditions = new ArrayList<>();
        for (String type : order) {
            Condition before = existing.get(type);
            Condition wanted = decided.get(type);
            if (wanted == null) {
                if (before != null) {
                    conditions.add(before);
                }
                continue;
            }
            if (before != null && Objects.equals(before.getStatus(), wanted.getStatus())) {
                wanted.setLastTransitionTime(before.getLastTransitionTime());
            } else {
                wanted.setLastTransitionTime(now);
            }
            conditions.add(wanted);
        }
        return conditions;
    }
}
