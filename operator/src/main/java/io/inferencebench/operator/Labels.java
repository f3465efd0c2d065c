package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.workorder.PartLabels;
import java.util.LinkedHashMap;
import java.util.Map;

/** Labels on everything the operator creates for a run. */
public final class Labels {

    // The keys and values runner pods also write are part of the runner<->operator contract.
    public static final String NAME = PartLabels.NAME;
    public static final String INSTANCE = PartLabels.INSTANCE;
    public static final String MANAGED_BY = PartLabels.MANAGED_BY;
    public static final String COMPONENT = PartLabels.COMPONENT;

    /** Set on part ConfigMaps by runner pods: the pod's completion index. */
    public static final String PART_INDEX = PartLabels.PART_INDEX;

    /** Selects every runner part ConfigMap (of any run): those carrying a part index. */
    public static final String PART_CONFIGMAPS_SELECTOR = PART_INDEX;

    /**
     * The label Kubernetes puts on an EndpointSlice: the name of its Service. Selecting on it lists
     * a Service's slices (not ours: the EndpointSlice controller's).
     */
    public static final String ENDPOINT_SLICE_SERVICE = "kubernetes.io/service-name";

    public static final String APP = PartLabels.NAME_VALUE;
    public static final String OPERATOR = PartLabels.MANAGED_BY_VALUE;

    public static final String RUNNER = PartLabels.COMPONENT_RUNNER;
    public static final String CONTROL = "control";
    public static final String PROFILE = "profile";
    public static final String SERVER_METRICS = "server-metrics";

    /** The start of a selector of what the operator manages of one component. */
    private static final String MANAGED_COMPONENT =
            MANAGED_BY + "=" + OPERATOR + "," + COMPONENT + "=";

    /** Selects the control ConfigMaps (the informer of {@code ControlConfigMapDependent}). */
    public static final String CONTROL_SELECTOR = MANAGED_COMPONENT + CONTROL;

    /** Selects the runner Jobs (the informer of {@code RunnerJobDependent}). */
    public static final String RUNNER_SELECTOR = MANAGED_COMPONENT + RUNNER;

    /**
     * Selects the runner work orders: the runner's ConfigMaps that are not parts (the informer of
     * {@code RunnerWorkOrderDependent}).
     */
    public static final String WORK_ORDER_SELECTOR = RUNNER_SELECTOR + ",!" + PART_INDEX;

    /** On runs a BenchmarkSchedule created: the schedule's name. */
    public static final String SCHEDULE = "inferencebench.io/schedule";

    /** On runs a BenchmarkSchedule created: the fire time (RFC 3339) it was created for. */
    public static final String SCHEDULED_AT = "inferencebench.io/scheduled-at";

    private Labels() {}

    /**
     * The labels of one component of a run.
     *
     * @param run the run
     * @param component runner, control or profile
     * @return a new mutable map
     */
    public static Map<String, String> of(BenchmarkRun run, String component) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(NAME, APP);
        labels.put(INSTANCE, run.getMetadata().getName());
        labels.put(MANAGED_BY, OPERATOR);
        labels.put(COMPONENT, component);
        return labels;
    }

    /**
     * Selector matching the runner pods of a run.
     *
     * @param run the run
     * @return instance and component labels
     */
    public static Map<String, String> runnerPodSelector(BenchmarkRun run) {
        return Map.of(INSTANCE, run.getMetadata().getName(), COMPONENT, RUNNER);
    }
}
