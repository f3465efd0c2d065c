package io.inferencebench.crds.workorder;

/**
 * Labels of everything the operator and the runner pods create for a run (the part ConfigMaps
 * written by runner pods carry them too, so the operator's informers see them): the recommended
 * {@code app.kubernetes.io} set plus the part index.
 */
public final class PartLabels {

    /** {@code app.kubernetes.io/name}; value {@link #NAME_VALUE}. */
    public static final String NAME = "app.kubernetes.io/name";

    /** {@code app.kubernetes.io/instance}; value the BenchmarkRun's name. */
    public static final String INSTANCE = "app.kubernetes.io/instance";

    /** {@code app.kubernetes.io/managed-by}; value {@link #MANAGED_BY_VALUE}. */
    public static final String MANAGED_BY = "app.kubernetes.io/managed-by";

    /** {@code app.kubernetes.io/component}: {@code runner}, {@code profile} or {@code control}. */
    public static final String COMPONENT = "app.kubernetes.io/component";

    /** Index of the runner pod that wrote a part ConfigMap. */
    public static final String PART_INDEX = "inferencebench.io/part-index";

    /** Value of {@link #NAME}. */
    public static final String NAME_VALUE = "inferencebench";

    /** Value of {@link #MANAGED_BY}. */
    public static final String MANAGED_BY_VALUE = "inferencebench-operator";

    /** Value of {@link #COMPONENT} on runner pods, their Job, work order and parts. */
    public static final String COMPONENT_RUNNER = "runner";

    private PartLabels() {}
}
