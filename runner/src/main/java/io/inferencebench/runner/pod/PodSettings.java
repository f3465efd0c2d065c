package io.inferencebench.runner.pod;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Who this runner pod is and where its inputs are. The API key is held here only to build the
 * request header; {@link #toString()} never shows it.
 *
 * @param runName BenchmarkRun name
 * @param namespace namespace of the run
 * @param podName this pod's name (for messages), or {@code null}
 * @param index completion index of this pod
 * @param workOrderFile mounted work order file, or {@code null} to read the ConfigMap
 * @param apiKey API key to send as a bearer token, or {@code null}
 * @param datasetFile mounted dataset file, or {@code null}
 * @param tokenizerFile mounted tokenizer.json, or {@code null}
 * @param scratchDir writable directory
 * @param selfWarmup whether to warm the client path locally before reporting ready
 * @param pollInterval re-list period of the control ConfigMap (the watch is the fast path)
 * @param runCheckInterval how often to check that the BenchmarkRun still exists
 * @param progressInterval progress period, or {@code null} for the work order's
 */
public record PodSettings(
        String runName,
        String namespace,
        String podName,
        int index,
        Path workOrderFile,
        String apiKey,
        Path datasetFile,
        Path tokenizerFile,
        Path scratchDir,
        boolean selfWarmup,
        Duration pollInterval,
        Duration runCheckInterval,
        Duration progressInterval) {

    /** Environment variable naming the BenchmarkRun (set by the operator's Job). */
    public static final String RUN_NAME_ENV = "RUN_NAME";

    /** Alternative name of {@link #RUN_NAME_ENV}. */
    public static final String RUN_NAME_ENV_ALT = "IB_RUN_NAME";

    /** Namespace from the downward API. */
    public static final String NAMESPACE_ENV = "POD_NAMESPACE";

    /** Pod name from the downward API. */
    public static final String POD_NAME_ENV = "POD_NAME";

    /** Completion index of an Indexed Job's pod (set by Kubernetes). */
    public static final String INDEX_ENV = "JOB_COMPLETION_INDEX";

    /** Path of the work order file, when not given with {@code --work-order}. */
    public static final String WORK_ORDER_ENV = "INFERENCEBENCH_WORK_ORDER";

    /** Path of a file holding the API key (alternative to the key in the environment). */
    public static final String API_KEY_FILE_ENV = "INFERENCEBENCH_API_KEY_FILE";

    /** Dataset file mounted by the Job (same name as the operator's). */
    public static final String DATASET_FILE_ENV = "INFERENCEBENCH_DATASET_FILE";

    /** Tokenizer file mounted by the Job (same name as the operator's). */
    public static final String TOKENIZER_FILE_ENV = "INFERENCEBENCH_TOKENIZER_FILE";

    /** Where the operator's Job mounts the work order. */
    public static final String DEFAULT_WORK_ORDER = "/etc/inferencebench/workorder/workorder.json";

    @Override
    public String toString() {
        return "PodSettings[run="
                + namespace
                + "/"
                + runName
                + ", index="
                + index
                + ", workOrderFile="
                + workOrderFile
                + ", apiKey="
                + (apiKey == null ? "none" : "set")
                + "]";
    }
}
