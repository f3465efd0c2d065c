package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import java.util.LinkedHashMap;
import java.util.Map;

/** Labels on everything the operator creates for a run. */
public final class Labels {

    public static final String NAME = "app.kubernetes.io/name";
    public static final String INSTANCE = "app.kubernetes.io/instance";
    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
    public static final String COMPONENT = "app.kubernetes.io/component";

    /** Set on part ConfigMaps by runner pods: the pod's completion index. */
    public static final String PART_INDEX = "inferencebench.io/part-index";

    public static final String APP = "inferencebench";
    public static final String OPERATOR = "inferencebench-operator";

    public static final String RUNNER = "runner";
    public static final String CONTROL = "control";
    public static final String PROFILE = "profile";
    public static final String SERVER_METRICS = "server-metrics";

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
