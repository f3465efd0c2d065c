package io.inferencebench.crds.v1alpha1;

import java.util.List;

/** The condition types a BenchmarkRun reports in {@code status.conditions}. */
public final class ConditionTypes {

    /** The target Service has ready endpoints (or the URL answers) and the spec resolved. */
    public static final String TARGET_READY = "TargetReady";

    /**
     * Only with the operator's INFERENCEBENCH_MAX_ACTIVE_RUNS cap: True (reason {@code Queued})
     * while the run, its target ready, waits in Pending for a slot, the message naming the active
     * runs, the cap and the run's position; False (reason {@code Admitted}) once it was let
     * through, (reason {@code TargetNotReady}) when it left the queue because its target stopped
     * being ready, or (reason {@code NotAdmitted}) when it ended (cancelled, failed) while queued.
     */
    public static final String QUEUED = "Queued";

    /** Every runner pod is ready at the start barrier. */
    public static final String RUNNERS_READY = "RunnersReady";

    /** The run finished (any terminal phase); the reason says how. */
    public static final String COMPLETED = "Completed";

    /**
     * Server metrics were collected for every stage window (scraped, or read from {@code
     * spec.metrics.prometheus}) with at least 80 % of the expected scrapes. When False the reason
     * is {@code LowCoverage}, {@code ScrapesFailed}, {@code PrometheusQueryFailed} or {@code
     * Disabled}; it never fails the run.
     */
    public static final String SERVER_METRICS_COLLECTED = "ServerMetricsCollected";

    /**
     * The runners delivered the requested load: achieved rate within 5 % of target and schedule lag
     * within bounds. When False the results are not a valid measurement of the target rate.
     */
    public static final String LOAD_DELIVERED = "LoadDelivered";

    /**
     * The replicas behind the target served even shares of every stage, by their own request
     * counters: False naming the replicas and their counts when a stage's busiest served more than
     * 1.25x the least busy (at 100 or more requests per replica) or one served nothing; Unknown
     * when no stage had enough requests to judge. Only present when a stage was scraped on two or
     * more replicas.
     */
    public static final String LOAD_BALANCED = "LoadBalanced";

    /**
     * With {@code spec.workload.prefixCache}: True when every stage started from the declared state
     * on every ready endpoint and the replicas' own prefix-cache counters agree; False naming the
     * stages and endpoints that were not reset, or the replicas whose counters show cached prompts
     * a cold cache could not hold; Unknown when the resets were acknowledged but the servers expose
     * no prefix-cache counters to check them by.
     */
    public static final String CACHE_STATE_VERIFIED = "CacheStateVerified";

    /** Every stage met {@code spec.slo}; only present when an SLO is set. */
    public static final String SLO_MET = "SloMet";

    /**
     * With {@code spec.baseline}: True when some stage got significantly worse than the baseline
     * (the message names the worst metric), False when none did, Unknown while the baseline is
     * missing, unfinished or the comparison could not be made, and Unknown with reason Inconclusive
     * when, across repeats, the noise could hide a change of a threshold (the reason says which).
     * {@code kubectl wait --for=condition=Regressed=false} gates a pipeline on it.
     */
    public static final String REGRESSED = "Regressed";

    /**
     * Where the profiles are kept: reason {@code InStatus} (status.profiles and the output
     * ConfigMaps) or {@code ConfigMapsOnly} (too large for status: status keeps the per-stage
     * summaries and keys, the message names the ConfigMaps).
     */
    public static final String RESULTS_STORED = "ResultsStored";

    /** All types, in the order they are reported. */
    public static final List<String> ALL =
            List.of(
                    TARGET_READY,
                    QUEUED,
                    RUNNERS_READY,
                    COMPLETED,
                    SERVER_METRICS_COLLECTED,
                    LOAD_DELIVERED,
                    LOAD_BALANCED,
                    CACHE_STATE_VERIFIED,
                    SLO_MET,
                    REGRESSED,
                    RESULTS_STORED);

    /** BenchmarkSchedule: spec.schedule and spec.timeZone parse. */
    public static final String SCHEDULE_VALID = "ScheduleValid";

    /** BenchmarkSchedule: the last finished run regressed against its baseline. */
    public static final String REGRESSING = "Regressing";

    /** A BenchmarkSchedule's types, in the order they are reported. */
    public static final List<String> SCHEDULE_ALL = List.of(SCHEDULE_VALID, REGRESSING);

    private ConditionTypes() {}
}
