package io.inferencebench.crds.v1alpha1;

/**
 * Names of the objects that belong to a run; the operator creates them and the runner finds them by
 * these names.
 */
public final class ResourceNames {

    private ResourceNames() {}

    /**
     * The runner work-order ConfigMap and the Indexed runner Job.
     *
     * @param run the BenchmarkRun name
     * @return {@code <run>-runner}
     */
    public static String runner(String run) {
        return run + "-runner";
    }

    /**
     * The control ConfigMap holding barrier start instants and cancellation.
     *
     * @param run the BenchmarkRun name
     * @return {@code <run>-control}
     */
    public static String control(String run) {
        return run + "-control";
    }

    /**
     * The ConfigMap a runner pod reports readiness, progress and stage results through.
     *
     * @param run the BenchmarkRun name
     * @param index the pod's completion index
     * @return {@code <run>-part-<index>}
     */
    public static String part(String run, int index) {
        return run + "-part-" + index;
    }

    /**
     * The ConfigMap the operator checkpoints the current stage's server-metric scrapes in, so an
     * operator restart keeps them.
     *
     * @param run the BenchmarkRun name
     * @return {@code <run>-server-metrics}
     */
    public static String serverMetrics(String run) {
        return run + "-server-metrics";
    }

    /**
     * The default output ConfigMap.
     *
     * @param run the BenchmarkRun name
     * @return {@code <run>-profile}
     */
    public static String profile(String run) {
        return run + "-profile";
    }

    /**
     * The output ConfigMap of a run, honouring {@code spec.output.configMapName}.
     *
     * @param run the run
     * @return the ConfigMap name
     */
    public static String profile(BenchmarkRun run) {
        BenchmarkRunSpec spec = run.getSpec();
        if (spec != null
                && spec.getOutput() != null
                && spec.getOutput().getConfigMapName() != null) {
            return spec.getOutput().getConfigMapName();
        }
        return profile(run.getMetadata().getName());
    }
}
