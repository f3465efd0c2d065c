package io.inferencebench.operator.dependent;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.inferencebench.crds.v1alpha1.Balance;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.CapacityStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.operator.Labels;
import io.inferencebench.operator.metrics.MetricsEndpoints;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The control ConfigMap {@code <run>-control}: barrier start instants, for a capacity search each
 * stage's rate (decided at run time) and the end of the search, cancellation, derived from the
 * run's status and spec, and with {@code spec.target.balance: endpoints} the target Service's ready
 * endpoints as listed now (read on every reconcile while the run is under way, so runner pods
 * follow a replica that joins or leaves within a reconcile: a few seconds). Runners watch it; it is
 * the only thing the operator tells them after launch, so no network path from operator to pods is
 * needed.
 */
@KubernetesDependent(informer = @Informer(labelSelector = Labels.CONTROL_SELECTOR))
public class ControlConfigMapDependent
        extends CRUDKubernetesDependentResource<ConfigMap, BenchmarkRun> {

    public ControlConfigMapDependent() {
        super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(BenchmarkRun run, Context<BenchmarkRun> context) {
        String published =
                getSecondaryResource(run, context)
                        .map(ConfigMap::getData)
                        .map(d -> d.get(RunnerWorkOrder.ENDPOINTS_KEY))
                        .orElse(null);
        if (!followsEndpoints(run)) {
            return desired(run, published);
        }
        List<String> ready = new MetricsEndpoints(context.getClient()).trafficAddresses(run);
        return desired(run, ready.isEmpty() ? published : String.join(",", ready));
    }

    /**
     * Whether the run's runners spread over the Service's endpoints and may still send: the list is
     * then read afresh (a finished run's stays as it was).
     */
    static boolean followsEndpoints(BenchmarkRun run) {
        Phase phase = run.getStatus() == null ? null : run.getStatus().getPhase();
        return run.getSpec().getTarget().getBalance() == Balance.ENDPOINTS
                && run.getSpec().getTarget().getService() != null
                && (phase == Phase.INITIALIZING || phase == Phase.RUNNING);
    }

    @Override
    protected ResourceID targetSecondaryResourceID(
            BenchmarkRun run, Context<BenchmarkRun> context) {
        return new ResourceID(
                ResourceNames.control(run.getMetadata().getName()),
                run.getMetadata().getNamespace());
    }

    /**
     * The desired control ConfigMap.
     *
     * @param run the run
     * @return the ConfigMap
     */
    public static ConfigMap desired(BenchmarkRun run) {
        return desired(run, (String) null);
    }

    /**
     * The desired control ConfigMap whose runners spread over {@code endpoints} ({@code ip:port},
     * comma-separated; {@code null} or empty: no such key, an empty list keeps the last one).
     */
    public static ConfigMap desired(BenchmarkRun run, String endpoints) {
        Map<String, String> data = new TreeMap<>();
        if (endpoints != null && !endpoints.isBlank()) {
            data.put(RunnerWorkOrder.ENDPOINTS_KEY, endpoints);
        }
        List<String> starts = run.getStatus() == null ? null : run.getStatus().getStageStartTimes();
        if (starts != null) {
            for (int i = 0; i < starts.size(); i++) {
                data.put(RunnerWorkOrder.stageStartKey(i + 1), starts.get(i));
            }
        }
        List<String> warm = run.getStatus() == null ? null : run.getStatus().getStageWarmTargets();
        if (warm != null) {
            for (int i = 0; i < warm.size(); i++) {
                if (!warm.get(i).isEmpty()) {
                    data.put(RunnerWorkOrder.stageWarmKey(i + 1), warm.get(i));
                }
            }
        }
        CapacityStatus capacity = run.getStatus() == null ? null : run.getStatus().getCapacity();
        if (capacity != null) {
            List<CapacityStatus.Probe> probes = capacity.getProbes();
            for (int i = 0; i < probes.size(); i++) {
                data.put(
                        RunnerWorkOrder.stageRateKey(i + 1),
                        Double.toString(probes.get(i).getRequestRate()));
                Integer size = probes.get(i).getSize();
                if (size != null && size > 1) {
                    data.put(RunnerWorkOrder.stageSizeKey(i + 1), Integer.toString(size));
                }
            }
            if (capacity.getOutcome() != null) {
                data.put(RunnerWorkOrder.STAGES_KEY, Integer.toString(probes.size()));
            }
        }
        data.put(
                RunnerWorkOrder.CANCEL_KEY,
                Boolean.toString(Boolean.TRUE.equals(run.getSpec().getCancel())));
        return new ConfigMapBuilder()
                .withNewMetadata()
                .withName(ResourceNames.control(run.getMetadata().getName()))
                .withNamespace(run.getMetadata().getNamespace())
                .withLabels(Labels.of(run, Labels.CONTROL))
                .endMetadata()
                .withData(data)
                .build();
    }
}
