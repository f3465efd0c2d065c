package io.inferencebench.runner.pod;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.workorder.PartReport;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes this pod's part ConfigMap {@code <run>-part-<index>}. It is created once (labelled like
 * every object of the run, owned by the BenchmarkRun so the operator's informer maps it to the run)
 * and afterwards changed with JSON merge patches of single keys: only this pod writes it, so no
 * read-modify-write and no conflicts. The verbs used are {@code create} and {@code patch}.
 */
final class PartReporter {

    static final String LABEL_NAME = io.inferencebench.crds.workorder.PartLabels.NAME;
    static final String LABEL_INSTANCE = io.inferencebench.crds.workorder.PartLabels.INSTANCE;
    static final String LABEL_MANAGED_BY = io.inferencebench.crds.workorder.PartLabels.MANAGED_BY;
    static final String LABEL_COMPONENT = io.inferencebench.crds.workorder.PartLabels.COMPONENT;

    /** The operator selects part ConfigMaps by this label (value: the completion index). */
    static final String LABEL_PART_INDEX = io.inferencebench.crds.workorder.PartLabels.PART_INDEX;

    /** Set to {@code "true"} with state {@code done} when the run was cancelled. */
    static final String CANCELLED = PartReport.CANCELLED;

    /** A ConfigMap holds at most 1 MiB; leave room for the other keys and metadata. */
    static final int MAX_STAGE_RESULT_BYTES = 900 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesClient client;
    private final String namespace;
    private final String name;
    private final String runName;
    private final String runUid;
    private final int index;
    private final ApiRetry retry;

    PartReporter(
            KubernetesClient client,
            String namespace,
            String name,
            String runName,
            String runUid,
            int index,
            ApiRetry retry) {
        this.client = client;
        this.namespace = namespace;
        this.name = name;
        this.runName = runName;
        this.runUid = runUid;
        this.index = index;
        this.retry = retry;
    }

    String name() {
        return name;
    }

    Map<String, String> labels() {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(LABEL_NAME, io.inferencebench.crds.workorder.PartLabels.NAME_VALUE);
        labels.put(LABEL_INSTANCE, runName);
        labels.put(LABEL_MANAGED_BY, io.inferencebench.crds.workorder.PartLabels.MANAGED_BY_VALUE);
        labels.put(LABEL_COMPONENT, io.inferencebench.crds.workorder.PartLabels.COMPONENT_RUNNER);
        labels.put(LABEL_PART_INDEX, Integer.toString(index));
        return labels;
    }

    OwnerReference owner() {
        return new OwnerReferenceBuilder()
                .withApiVersion(BenchmarkRun.GROUP + "/" + BenchmarkRun.VERSION)
                .withKind(BenchmarkRun.KIND)
                .withName(runName)
                .withUid(runUid)
                .withController(true)
                .build();
    }

    /**
     * Creates the part with the given keys, or, when a part of this name exists (a restarted pod),
     * replaces its labels, owner and those keys.
     */
    synchronized void create(Map<String, String> data) {
        Map<String, String> all = new LinkedHashMap<>(data);
        all.put(PartReport.RUN_UID, runUid);
        ConfigMap part =
                new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace(namespace)
                        .withLabels(labels())
                        .withOwnerReferences(runUid == null ? List.of() : List.of(owner()))
                        .endMetadata()
                        .withData(all)
                        .build();
        retry.call(
                "creating ConfigMap " + namespace + "/" + name,
                () -> {
                    try {
                        return client.configMaps().inNamespace(namespace).resource(part).create();
                    } catch (KubernetesClientException e) {
                        if (e.getCode() != 409) {
                            throw e;
                        }
                        return client.configMaps()
                                .inNamespace(namespace)
                                .withName(name)
                                .patch(PatchContext.of(PatchType.JSON_MERGE), mergePatch(part));
                    }
                });
    }

    /** Sets keys of the part (other keys stay). Retries transient failures. */
    synchronized void put(Map<String, String> data) {
        put(data, retry);
    }

    synchronized void put(Map<String, String> data, ApiRetry policy) {
        String patch = mergePatch(Map.of("data", data));
        policy.call(
                "updating ConfigMap " + namespace + "/" + name,
                () ->
                        client.configMaps()
                                .inNamespace(namespace)
                                .withName(name)
                                .patch(PatchContext.of(PatchType.JSON_MERGE), patch));
    }

    private static String mergePatch(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
