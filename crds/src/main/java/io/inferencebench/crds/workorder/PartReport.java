package io.inferencebench.crds.workorder;

/**
 * Keys of the part ConfigMap {@code <run>-part-<index>} a runner pod writes. The pod labels it like
 * every object of the run ({@code app.kubernetes.io/instance=<run>}, component {@code runner}) and
 * sets the BenchmarkRun as owner, so the operator is notified of every change.
 */
public final class PartReport {

    /** Runner state: one of the {@code STATE_*} values. */
    public static final String STATE = "state";

    /** Dataset loaded and warm-up done; waiting at the start barrier. */
    public static final String STATE_READY = "ready";

    /** Executing stage {@link #STAGE}. */
    public static final String STATE_RUNNING = "running";

    /** All stages finished (or the run was cancelled) and results written. */
    public static final String STATE_DONE = "done";

    /** The runner gave up; {@link #ERROR} says why. */
    public static final String STATE_FAILED = "failed";

    /** 1-based stage the runner is in or last finished. */
    public static final String STAGE = "stage";

    /** Number of stages whose results this part holds. */
    public static final String STAGES_DONE = "stagesDone";

    /** Live progress JSON (completed, failed, inFlight, achievedRate, ttftP50Ms, updatedAt). */
    public static final String PROGRESS = "progress.json";

    /** Human-readable reason of a failure. */
    public static final String ERROR = "error";

    /** Run uid the part belongs to. */
    public static final String RUN_UID = "runUid";

    /** Set to {@code "true"} with state {@code done} when the pod stopped because of a cancel. */
    public static final String CANCELLED = "cancelled";

    /** The model the pod sends requests with (spec.target.model or discovered), set when ready. */
    public static final String MODEL = "model";

    private PartReport() {}

    /** Value of {@link #stageWarmedKey} when every endpoint took every prefix in time. */
    public static final String WARMED = "warmed";

    /**
     * Key of how the first runner pod warmed the endpoints before stage n ({@code
     * workload.prefixCache.state: warm}): {@value #WARMED}, or why the stage did not start warm.
     *
     * @param stage 1-based stage number
     * @return {@code stage-<n>-warmed}
     */
    public static String stageWarmedKey(int stage) {
        return "stage-" + stage + "-warmed";
    }

    /**
     * Key of a finished stage's result (the profile library's StageResult as JSON).
     *
     * @param stage 1-based stage number
     * @return {@code stage-<n>.json}
     */
    public static String stageResultKey(int stage) {
        return "stage-" + stage + ".json";
    }
}
