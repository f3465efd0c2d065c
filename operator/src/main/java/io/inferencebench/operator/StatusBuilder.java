package io.inferencebench.operator;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
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
 * The one place a resource's status is built, the same for every kind: starts from the status as
 * read, takes the conditions and fields this reconcile decided, and keeps each condition's {@code
 * lastTransitionTime} unless its status flipped, so {@code kubectl wait} and alerting see real
 * transitions only. {@link #changed()} says whether a patch is needed at all. A kind says where its
 * conditions and observed generation live and which condition types it has.
 *
 * @param <S> the status type
 * @param <B> the kind's builder, returned for chaining
 */
public abstract class StatusBuilder<S, B extends StatusBuilder<S, B>> {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final S current;
    private final S next;
    private final long generation;
    private final String now;
    private final String kind;
    private final List<String> types;
    private final Map<String, Condition> decided = new LinkedHashMap<>();

    /**
     * @param current the status as read, or {@code null} for a new resource
     * @param empty a new status, for a new resource
     * @param generation the resource's metadata.generation
     * @param now the reconcile instant
     * @param kind the kind, for the message about an unknown condition type
     * @param types every condition type of the kind, in report order
     */
    protected StatusBuilder(
            S current, S empty, long generation, Instant now, String kind, List<String> types) {
        this.current = current;
        this.next = current == null ? empty : copy(current);
        this.generation = generation;
        this.now = format(now);
        this.kind = kind;
        this.types = types;
    }

    @SuppressWarnings("unchecked")
    private static <S> S copy(S status) {
        return (S) JSON.convertValue(JSON.valueToTree(status), status.getClass());
    }

    /** RFC 3339 with second precision, as Kubernetes writes times. */
    public static String format(Instant instant) {
        return DateTimeFormatter.ISO_INSTANT.format(instant.truncatedTo(ChronoUnit.SECONDS));
    }

    /** The conditions of a status of this kind (may be {@code null}). */
    protected abstract List<Condition> conditionsOf(S status);

    /** Sets the conditions of a status of this kind. */
    protected abstract void setConditions(S status, List<Condition> conditions);

    /** Sets the observed generation of a status of this kind. */
    protected abstract void setObservedGeneration(S status, long generation);

    /** What a kind completes in the built status besides conditions and generation. */
    protected void complete(S status) {}

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }

    /**
     * Decides a condition.
     *
     * @param type one of the kind's condition types
     * @param status true or false
     * @param reason CamelCase reason
     * @param message details
     * @return this
     */
    public B condition(String type, boolean status, String reason, String message) {
        return condition(type, status ? "True" : "False", reason, message);
    }

    /**
     * Decides a condition, possibly Unknown.
     *
     * @param type one of the kind's condition types
     * @param status True, False or Unknown
     * @param reason CamelCase reason
     * @param message details
     * @return this
     */
    public B condition(String type, String status, String reason, String message) {
        if (!types.contains(type)) {
            throw new IllegalArgumentException("unknown " + kind + "condition type " + type);
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
        return self();
    }

    /**
     * Changes fields other than conditions.
     *
     * @param change edits the status being built; must not touch conditions
     * @return this
     */
    public B apply(Consumer<S> change) {
        List<Condition> before = conditionsOf(next);
        change.accept(next);
        if (conditionsOf(next) != before) {
            throw new IllegalStateException("conditions are set through condition(...)");
        }
        return self();
    }

    /**
     * The status being built, for reading what earlier decisions wrote.
     *
     * @return the working copy (do not edit conditions)
     */
    public S view() {
        return next;
    }

    /** The status as read, or {@code null}. */
    public S before() {
        return current;
    }

    /**
     * Builds the status.
     *
     * @return the new status; conditions in the kind's type order
     */
    public S build() {
        setConditions(
                next,
                mergeConditions(
                        current == null ? null : conditionsOf(current), decided, types, now));
        setObservedGeneration(next, generation);
        complete(next);
        return next;
    }

    /**
     * Whether the built status differs from the one read (call after {@link #build()}).
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
