package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The operator-wide cap on runs past Pending ({@value #ENV}): every runner pod is a JVM, and a
 * small node given a hundred of them at once completes none. Runs whose target is ready wait in
 * Pending and are let through oldest first (creation time, then namespace/name).
 *
 * <p>Reconciles of different runs are concurrent and the informer cache shows a status patch only
 * some time after it was sent, so counting active runs in the cache alone would let two runs take
 * the last slot. Admission is one synchronized step that also counts the runs it admitted whose new
 * phase the cache does not show yet, and the runs it queued whose Queued status the cache does not
 * show yet. A run counts as ready when its TargetReady condition is True, when this step queued it,
 * or, for {@link #UNCHECKED_GRACE} after its creation, when its target was not looked at yet.
 */
public final class RunAdmission {

    /** The environment variable users set (the chart's {@code maxActiveRuns}). */
    public static final String ENV = "INFERENCEBENCH_MAX_ACTIVE_RUNS";

    /** The configuration property the environment variable maps to. */
    public static final String PROPERTY = "inferencebench.max-active-runs";

    private static final Set<Phase> ACTIVE =
            Set.of(Phase.INITIALIZING, Phase.RUNNING, Phase.AGGREGATING);

    private static final Comparator<Candidate> FIFO =
            Comparator.comparing(Candidate::created)
                    .thenComparing(Candidate::namespace)
                    .thenComparing(Candidate::name);

    /**
     * How long a new run whose target was not looked at yet counts as ready: runs applied together
     * are reconciled concurrently, and without this a younger run whose probe answered first would
     * overtake an older one. Bounded, so that a run whose reconciles keep failing does not hold up
     * the queue.
     */
    static final Duration UNCHECKED_GRACE = Duration.ofSeconds(30);

    private final int maxActiveRuns;

    /** By uid: admitted here, still Pending in the cache. */
    private final Map<String, Candidate> admitted = new HashMap<>();

    /** By uid: queued here with a ready target, maybe not shown so in the cache yet. */
    private final Map<String, Candidate> waiting = new HashMap<>();

    /**
     * @param maxActiveRuns at most this many runs past Pending; 0 for no limit
     */
    public RunAdmission(int maxActiveRuns) {
        if (maxActiveRuns < 0) {
            throw new IllegalArgumentException(problem(Integer.toString(maxActiveRuns)));
        }
        this.maxActiveRuns = maxActiveRuns;
    }

    /**
     * The cap from {@value #PROPERTY} ({@value #ENV}); unset means no limit.
     *
     * @throws IllegalArgumentException naming the variable and what it accepts, for a bad value
     */
    public static RunAdmission fromConfig() {
        Optional<String> raw = ConfigProvider.getConfig().getOptionalValue(PROPERTY, String.class);
        if (raw.isEmpty()) {
            return new RunAdmission(0);
        }
        String problem = problem(raw.get());
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return new RunAdmission(Integer.parseInt(raw.get().strip()));
    }

    /**
     * Why {@code raw} is not a cap, or {@code null} when it is one.
     *
     * @param raw the configured text
     */
    static String problem(String raw) {
        String value = raw == null ? "" : raw.strip();
        boolean valid;
        try {
            valid = Integer.parseInt(value) >= 0;
        } catch (NumberFormatException e) {
            valid = false;
        }
        return valid
                ? null
                : ENV
                        + " ("
                        + PROPERTY
                        + ") must be 0 (no limit) or a positive whole number of BenchmarkRuns"
                        + " past Pending at a time, got '"
                        + raw
                        + "'";
    }

    /** The cap; 0 for no limit. */
    public int maxActiveRuns() {
        return maxActiveRuns;
    }

    /** Whether a cap is set at all. */
    public boolean limited() {
        return maxActiveRuns > 0;
    }

    /**
     * A run as admission sees it.
     *
     * @param uid metadata.uid
     * @param namespace metadata.namespace
     * @param name metadata.name
     * @param created metadata.creationTimestamp
     * @param phase status.phase ({@link Phase#PENDING} without a status)
     * @param targetChecked condition TargetReady is there (True or not)
     * @param targetReady condition TargetReady is True
     * @param deleting metadata.deletionTimestamp is set
     */
    public record Candidate(
            String uid,
            String namespace,
            String name,
            Instant created,
            Phase phase,
            boolean targetChecked,
            boolean targetReady,
            boolean deleting) {

        /** The run as its metadata and status say. */
        public static Candidate of(BenchmarkRun run) {
            var metadata = run.getMetadata();
            var status = run.getStatus();
            Phase phase =
                    status == null || status.getPhase() == null ? Phase.PENDING : status.getPhase();
            var targetReady =
                    status == null
                            ? Optional.<String>empty()
                            : status.condition(ConditionTypes.TARGET_READY)
                                    .map(c -> String.valueOf(c.getStatus()));
            return new Candidate(
                    metadata.getUid(),
                    metadata.getNamespace() == null ? "" : metadata.getNamespace(),
                    metadata.getName(),
                    metadata.getCreationTimestamp() == null
                            ? Instant.EPOCH
                            : Instant.parse(metadata.getCreationTimestamp()),
                    phase,
                    targetReady.isPresent(),
                    targetReady.map("True"::equals).orElse(false),
                    metadata.getDeletionTimestamp() != null);
        }
    }

    /** What admission decided for a Pending run whose target is ready. */
    public sealed interface Decision permits Admitted, Queued {}

    /**
     * The run may start.
     *
     * @param active runs past Pending besides this one
     * @param max the cap, 0 for none
     */
    public record Admitted(int active, int max) implements Decision {

        /** For the Queued=False condition. */
        public String message() {
            return "admitted as active run "
                    + (active + 1)
                    + " of at most "
                    + max
                    + " ("
                    + ENV
                    + "="
                    + max
                    + ")";
        }
    }

    /**
     * The run waits in Pending.
     *
     * @param active runs past Pending (admitted ones the cache does not show yet included)
     * @param max the cap
     * @param position 1-based place among the waiting runs; 1 is admitted next
     * @param waiting how many runs wait, this one included
     */
    public record Queued(int active, int max, int position, int waiting) implements Decision {

        /** The status message and condition message. */
        public String message() {
            return "queued: "
                    + active
                    + " of "
                    + max
                    + " active runs ("
                    + ENV
                    + "="
                    + max
                    + "); position "
                    + position
                    + " of "
                    + waiting;
        }
    }

    /**
     * Admits {@code run} (Pending, its references and target just found ready) or queues it.
     * Idempotent: a run admitted before whose new phase did not reach the cache (its status patch
     * failed, say) is admitted again.
     *
     * @param run the run being reconciled, as read from the API server
     * @param cached every run in the informer cache (all watched namespaces)
     * @param now the reconcile instant
     * @return the decision
     */
    public synchronized Decision admit(Candidate run, Collection<Candidate> cached, Instant now) {
        if (maxActiveRuns == 0) {
            return new Admitted(0, 0);
        }
        Map<String, Candidate> byUid = new HashMap<>();
        for (Candidate c : cached) {
            byUid.put(c.uid(), c);
        }
        // The cache shows them now (or they are gone): it counts them from here on.
        admitted.keySet().removeIf(uid -> !pendingIn(byUid, uid));
        waiting.keySet().removeIf(uid -> !pendingIn(byUid, uid) || admitted.containsKey(uid));
        if (admitted.containsKey(run.uid())) {
            return new Admitted(activeOther(run, cached), maxActiveRuns);
        }
        int active = activeOther(run, cached);
        Map<String, Candidate> queue = new HashMap<>(waiting);
        for (Candidate c : cached) {
            boolean mayBeReady =
                    c.targetReady()
                            || (!c.targetChecked()
                                    && now.isBefore(c.created().plus(UNCHECKED_GRACE)));
            if (c.phase() == Phase.PENDING
                    && mayBeReady
                    && !c.deleting()
                    && !admitted.containsKey(c.uid())) {
                queue.putIfAbsent(c.uid(), c);
            }
        }
        queue.put(run.uid(), run);
        long ahead =
                queue.values().stream()
                        .filter(c -> !c.uid().equals(run.uid()) && FIFO.compare(c, run) < 0)
                        .count();
        if (active + ahead < maxActiveRuns) {
            waiting.remove(run.uid());
            admitted.put(run.uid(), run);
            return new Admitted(active, maxActiveRuns);
        }
        waiting.put(run.uid(), run);
        return new Queued(active, maxActiveRuns, (int) ahead + 1, queue.size());
    }

    /**
     * Takes {@code uid} out of the queue: its target is not ready any more, or it failed or was
     * cancelled while waiting.
     */
    public synchronized void leave(String uid) {
        waiting.remove(uid);
    }

    /**
     * Gives back an admission whose status patch did not happen (the run is still Pending in the
     * API server), so the slot is not held by a run that did not start.
     */
    public synchronized void release(String uid) {
        admitted.remove(uid);
    }

    private static boolean pendingIn(Map<String, Candidate> cached, String uid) {
        Candidate c = cached.get(uid);
        return c != null && c.phase() == Phase.PENDING && !c.deleting();
    }

    private int activeOther(Candidate run, Collection<Candidate> cached) {
        int active = 0;
        for (Candidate c : cached) {
            if (!c.uid().equals(run.uid()) && ACTIVE.contains(c.phase()) && !c.deleting()) {
                active++;
            }
        }
        for (String uid : admitted.keySet()) {
            if (!uid.equals(run.uid())) {
                active++;
            }
        }
        return active;
    }
}
