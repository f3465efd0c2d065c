/**
 * The runner's in-pod mode, {@code java -jar inferencebench-runner.jar pod}: one pod of a
 * BenchmarkRun's Indexed runner Job.
 *
 * <h2>Inputs</h2>
 *
 * <ul>
 *   <li>Environment: {@code RUN_NAME} (or {@code IB_RUN_NAME}), {@code POD_NAMESPACE}, {@code
 *       POD_NAME}, {@code JOB_COMPLETION_INDEX}; the API key in {@code INFERENCEBENCH_API_KEY} (or
 *       a file named by {@code INFERENCEBENCH_API_KEY_FILE}); mounted inputs in {@code
 *       INFERENCEBENCH_DATASET_FILE} and {@code INFERENCEBENCH_TOKENIZER_FILE}.
 *   <li>Work order: the file given by {@code --work-order} / {@code INFERENCEBENCH_WORK_ORDER}
 *       (default {@code /etc/inferencebench/workorder/workorder.json}); when it is missing the
 *       ConfigMap {@code <run>-runner} (key {@code workorder.json}) is read through the API.
 *   <li>Control ConfigMap {@code <run>-control}: {@code stage-<n>-start} (RFC 3339 instant) for
 *       each stage's barrier, {@code cancel=true} to stop. Followed by a watch plus a periodic
 *       {@code get}; the BenchmarkRun itself is checked with {@code get} to notice its deletion.
 *   <li>Capacity search: a work order with an empty {@code stages} list has its stages decided at
 *       run time. For stage n the pod waits until the control ConfigMap has {@code stage-<n>-start}
 *       and {@code stage-<n>-rate} (req/s of all pods together; the pod sends rate / parallelism
 *       with its split of {@code load.numPrompts}, or for {@code load.duration}), or {@code stages}
 *       with a value below n: the search ended, the pod reports done and exits 0. It never runs
 *       more stages than the operator publishes (the operator bounds them by {@code
 *       spec.search.maxProbes}).
 * </ul>
 *
 * <h2>Outputs</h2>
 *
 * The part ConfigMap {@code <run>-part-<index>} (labels {@code app.kubernetes.io/*} of the run with
 * component {@code runner}, plus {@code inferencebench.io/part-index}; owned by the BenchmarkRun):
 * {@code state} ready → running → done | failed, {@code stage}, {@code stagesDone}, {@code
 * progress.json} (every report interval while a stage runs), {@code stage-<n>.json} (the stage's
 * StageResult), {@code error}, {@code runUid}, and {@code cancelled=true} with state done when the
 * run was cancelled. Verbs used: get and watch on ConfigMaps, create and patch on the part, get on
 * the BenchmarkRun.
 *
 * <h2>Exit codes</h2>
 *
 * 0 when done or cancelled, 1 on failure (the part says why), 2 for unusable settings.
 *
 * <p>DJL's cache and the scratch files go to the JVM temp dir, the writable /tmp emptyDir, so a
 * read-only root file system works.
 */
package io.inferencebench.runner.pod;
