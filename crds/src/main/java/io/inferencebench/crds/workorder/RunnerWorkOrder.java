package io.inferencebench.crds.workorder;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.SloSpec;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import java.util.List;
import java.util.Map;

/**
 * Everything a runner pod needs, resolved by the operator. Secrets are not in it: the API key
 * reaches the pod as the environment variable {@value #API_KEY_ENV} from a Secret reference.
 *
 * @param runName the BenchmarkRun name
 * @param namespace its namespace
 * @param runUid its uid (parts carry it so stale parts of a re-created run are ignored)
 * @param parallelism number of runner pods; each reads its index from {@code JOB_COMPLETION_INDEX}
 * @param baseUrl resolved target, e.g. {@code http://vllm.ns.svc:8000}
 * @param path request path, e.g. {@code /v1/completions}
 * @param backend backend wire name, e.g. {@code vllm}
 * @param api {@code completions} or {@code chat}
 * @param model model name, or {@code null} to discover from {@code /v1/models}
 * @param headers extra request headers (no credentials)
 * @param apiKeyFromEnv whether {@value #API_KEY_ENV} holds an API key to send as a bearer token
 * @param workload the workload as specified (Java defaults applied)
 * @param load the load as specified
 * @param stages the resolved stages with per-pod shares; empty for a capacity search, whose stages
 *     are decided at run time: the pod runs stage n at the rate of {@link #stageRateKey} (with
 *     {@code load.numPrompts} or {@code load.duration} as the size of every probe) once {@link
 *     #stageStartKey} is published, and stops when {@link #STAGES_KEY} says fewer stages ran
 * @param slo SLO thresholds for goodput, or {@code null}
 * @param controlConfigMap name of the control ConfigMap to watch
 * @param partConfigMapPrefix prefix of the part ConfigMaps; pod i writes {@code <prefix><i>}
 * @param reportIntervalSeconds how often to publish live progress
 * @param tls certificate checks for an https target, or {@code null} for the defaults
 * @param connectTo the addresses ({@code ip:port}, pod side) to send the requests to, each request
 *     to the next in turn ({@code spec.target.balance: endpoints}), or {@code null} to send to
 *     {@code baseUrl}'s host
 * @param requestsPerConnection requests a connection carries before it is closed, idle ones reused
 *     oldest first ({@code spec.target.requestsPerConnection}), or {@code null} for no bound
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunnerWorkOrder(
        String runName,
        String namespace,
        String runUid,
        int parallelism,
        String baseUrl,
        String path,
        String backend,
        String api,
        String model,
        Map<String, String> headers,
        boolean apiKeyFromEnv,
        WorkloadSpec workload,
        LoadSpec load,
        List<StageShare> stages,
        SloSpec slo,
        String controlConfigMap,
        String partConfigMapPrefix,
        int reportIntervalSeconds,
        TlsOrder tls,
        List<String> connectTo,
        Integer requestsPerConnection) {

    /** ConfigMap key holding the work order JSON. */
    public static final String KEY = "workorder.json";

    /** Environment variable carrying the API key from the referenced Secret. */
    public static final String API_KEY_ENV = "INFERENCEBENCH_API_KEY";

    /**
     * Control ConfigMap key: start instant (RFC 3339) of stage n is under {@code stage-<n>-start}.
     */
    public static String stageStartKey(int stage) {
        return "stage-" + stage + "-start";
    }

    /**
     * Control ConfigMap key with {@code workload.prefixCache.state: warm}: the endpoints (base
     * URLs, comma-separated) whose prefix cache was reset before stage n and which the first runner
     * pod warms before its barrier, published with the barrier.
     */
    public static String stageWarmKey(int stage) {
        return "stage-" + stage + "-warm";
    }

    /**
     * Control ConfigMap key of a capacity search: the request rate (req/s, all runner pods
     * together) of stage n, decided after stage n - 1 and published with its barrier.
     */
    public static String stageRateKey(int stage) {
        return "stage-" + stage + "-rate";
    }

    /**
     * Control ConfigMap key of a capacity search: the size of stage n's probe, as a multiple of
     * {@code load.numPrompts} or {@code load.duration} (absent means 1), published with its rate. A
     * probe too short to judge whether the runners kept their schedule runs again larger.
     */
    public static String stageSizeKey(int stage) {
        return "stage-" + stage + "-size";
    }

    /**
     * Control ConfigMap key of a capacity search, set when the search has ended: the number of
     * stages it ran (a runner waiting for a later barrier stops).
     */
    public static final String STAGES_KEY = "stages";

    /**
     * Control ConfigMap key of a run with {@code spec.target.balance: endpoints}: the target
     * Service's ready endpoints now ({@code ip:port}, comma-separated), kept current by the
     * operator while the run runs; runner pods spread over it from the moment they read it.
     */
    public static final String ENDPOINTS_KEY = "endpoints";

    /** Control ConfigMap key set to {@code "true"} when the run is cancelled. */
    public static final String CANCEL_KEY = "cancel";
}
