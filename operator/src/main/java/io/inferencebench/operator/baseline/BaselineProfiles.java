package io.inferencebench.operator.baseline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BaselineSpec;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads the profiles a run's {@code spec.baseline} names: the earlier BenchmarkRun's {@code
 * status.profiles}, several runs' pooled, or every key of the ConfigMap (in key order, one LPG
 * profile each).
 */
public final class BaselineProfiles {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The baseline does not exist; retried, so creating it later still gives a verdict. */
    public static final String NOT_FOUND = "BaselineNotFound";

    /** The baseline run has not finished; retried. */
    public static final String NOT_FINISHED = "BaselineNotFinished";

    /** The baseline has no profiles, or one is not JSON. */
    public static final String INVALID = "BaselineInvalid";

    private final KubernetesClient client;

    public BaselineProfiles(KubernetesClient client) {
        this.client = client;
    }

    /**
     * The baseline's profiles, or why there are none.
     *
     * @param run the run whose {@code spec.baseline} is set
     * @return the profiles with a label ({@code run/NAME}, {@code runs/NAME,NAME,...}, {@code
     *     configmap/NAME}), or a reason
     */
    public Result read(BenchmarkRun run) {
        BaselineSpec baseline = run.getSpec().getBaseline();
        String namespace = run.getMetadata().getNamespace();
        if (baseline.getRunName() != null) {
            return readRun(namespace, baseline.getRunName(), "spec.baseline.runName");
        }
        if (baseline.getRunNames() != null) {
            return readRuns(namespace, baseline.getRunNames());
        }
        String name = baseline.getConfigMapRef().getName();
        String label = "configmap/" + name;
        ConfigMap map = client.configMaps().inNamespace(namespace).withName(name).get();
        if (map == null) {
            return Result.unavailable(
                    label,
                    NOT_FOUND,
                    "spec.baseline.configMapRef: ConfigMap "
                            + name
                            + " not found in namespace "
                            + namespace);
        }
        Map<String, String> data = map.getData() == null ? Map.of() : new TreeMap<>(map.getData());
        if (data.isEmpty()) {
            return Result.unavailable(
                    label,
                    INVALID,
                    "spec.baseline.configMapRef: ConfigMap " + name + " has no data keys");
        }
        List<JsonNode> profiles = new ArrayList<>();
        for (Map.Entry<String, String> entry : data.entrySet()) {
            try {
                profiles.add(JSON.readTree(entry.getValue()));
            } catch (IOException e) {
                return Result.unavailable(
                        label,
                        INVALID,
                        "spec.baseline.configMapRef: key "
                                + entry.getKey()
                                + " of ConfigMap "
                                + name
                                + " is not a JSON LPG profile");
            }
        }
        return Result.of(label, profiles);
    }

    /**
     * The profiles of several earlier runs, pooled in the order named: each run's stages follow the
     * one before's, so a rate every run has is seen once per run, which the comparison reads as
     * that stage's repeats. The first run that is missing, unfinished or empty is the reason.
     */
    private Result readRuns(String namespace, List<String> names) {
        String label = "runs/" + String.join(",", names);
        List<JsonNode> pooled = new ArrayList<>();
        for (String name : names) {
            Result one = readRun(namespace, name, "spec.baseline.runNames");
            if (!one.available()) {
                return Result.unavailable(label, one.reason(), one.message());
            }
            pooled.addAll(one.profiles());
        }
        return Result.of(label, pooled);
    }

    /** One finished run's {@code status.profiles}; {@code field} names where it was given. */
    private Result readRun(String namespace, String name, String field) {
        String label = "run/" + name;
        BenchmarkRun earlier =
                client.resources(BenchmarkRun.class).inNamespace(namespace).withName(name).get();
        if (earlier == null) {
            return Result.unavailable(
                    label,
                    NOT_FOUND,
                    field + ": BenchmarkRun " + name + " not found in namespace " + namespace);
        }
        Phase phase =
                earlier.getStatus() == null || earlier.getStatus().getPhase() == null
                        ? Phase.PENDING
                        : earlier.getStatus().getPhase();
        if (!phase.isTerminal()) {
            return Result.unavailable(
                    label, NOT_FINISHED, "baseline run " + name + " is " + phase.wireName());
        }
        List<JsonNode> profiles = earlier.getStatus().getProfiles();
        if (profiles == null || profiles.isEmpty()) {
            return Result.unavailable(
                    label,
                    INVALID,
                    "baseline run " + name + " (" + phase.wireName() + ") has no stage profiles");
        }
        return Result.of(label, profiles);
    }

    /**
     * Profiles or the reason there are none.
     *
     * @param label what the baseline is, e.g. run/nightly-202612020300
     * @param profiles the LPG documents, when available
     * @param reason a Regressed-condition reason, when not
     * @param message details, when not
     */
    public record Result(String label, List<JsonNode> profiles, String reason, String message) {
        static Result of(String label, List<JsonNode> profiles) {
            return new Result(label, profiles, null, null);
        }

        static Result unavailable(String label, String reason, String message) {
            return new Result(label, null, reason, message);
        }

        public boolean available() {
            return profiles != null;
        }

        /** Whether a later reconcile may find it (the run or ConfigMap may still appear). */
        public boolean retry() {
            return NOT_FOUND.equals(reason) || NOT_FINISHED.equals(reason);
        }
    }
}
