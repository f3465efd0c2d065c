package io.inferencebench.runner.pod;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;

/** Reads a runner pod's work order and checks that it is one this pod can run. */
final class WorkOrderReader {

    /** An operator newer than this runner may add fields: they are ignored, not refused. */
    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private WorkOrderReader() {}

    /**
     * The work order: the file the Job mounted, else the run's runner ConfigMap.
     *
     * @throws PodFailure when there is none, or it is not a valid work order for this pod's run
     */
    static RunnerWorkOrder read(PodSettings settings, KubernetesClient client) throws IOException {
        String json;
        if (settings.workOrderFile() != null && Files.isRegularFile(settings.workOrderFile())) {
            json = Files.readString(settings.workOrderFile(), StandardCharsets.UTF_8);
        } else {
            if (settings.runName() == null || settings.namespace() == null) {
                throw new PodFailure(
                        "no work order: file "
                                + settings.workOrderFile()
                                + " is missing and "
                                + PodSettings.RUN_NAME_ENV
                                + "/"
                                + PodSettings.NAMESPACE_ENV
                                + " are not both set to read ConfigMap <run>-runner");
            }
            String name = ResourceNames.runner(settings.runName());
            ConfigMap cm =
                    ApiRetry.standard()
                            .call(
                                    "reading ConfigMap " + settings.namespace() + "/" + name,
                                    () ->
                                            client.configMaps()
                                                    .inNamespace(settings.namespace())
                                                    .withName(name)
                                                    .get());
            if (cm == null
                    || cm.getData() == null
                    || cm.getData().get(RunnerWorkOrder.KEY) == null) {
                throw new PodFailure(
                        "no work order: ConfigMap "
                                + settings.namespace()
                                + "/"
                                + name
                                + (cm == null
                                        ? " does not exist"
                                        : " has no key " + RunnerWorkOrder.KEY));
            }
            json = cm.getData().get(RunnerWorkOrder.KEY);
        }
        RunnerWorkOrder order;
        try {
            order = JSON.readValue(json, RunnerWorkOrder.class);
        } catch (IOException e) {
            throw new PodFailure(
                    "work order is not valid JSON: "
                            + (e.getMessage() == null
                                    ? e.getClass().getSimpleName()
                                    : e.getMessage()));
        }
        if (order.runName() == null || order.baseUrl() == null || order.parallelism() < 1) {
            throw new PodFailure("work order: runName, baseUrl and parallelism >= 1 are required");
        }
        if (settings.runName() != null && !settings.runName().equals(order.runName())) {
            throw new PodFailure(
                    "work order is for run "
                            + order.runName()
                            + " but this pod belongs to "
                            + settings.runName());
        }
        return order;
    }
}
