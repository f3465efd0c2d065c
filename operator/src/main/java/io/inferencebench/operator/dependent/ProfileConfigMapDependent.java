package io.inferencebench.operator.dependent;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.StageResult;
import io.inferencebench.operator.Labels;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The output ConfigMap ({@code spec.output.configMapName}, default {@code <run>-profile}): one key
 * per finished stage, named like LPG files, holding that stage's profile JSON. With {@code
 * spec.output.retain} it carries no owner reference, so it outlives the run.
 */
@KubernetesDependent(
        informer =
                @Informer(
                        labelSelector =
                                Labels.MANAGED_BY
                                        + "="
                                        + Labels.OPERATOR
                                        + ","
                                        + Labels.COMPONENT
                                        + "="
                                        + Labels.PROFILE))
public class ProfileConfigMapDependent
        extends CRUDKubernetesDependentResource<ConfigMap, BenchmarkRun> {

    public ProfileConfigMapDependent() {
        super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(BenchmarkRun run, Context<BenchmarkRun> context) {
        return desired(run);
    }

    @Override
    protected ResourceID targetSecondaryResourceID(
            BenchmarkRun run, Context<BenchmarkRun> context) {
        return new ResourceID(ResourceNames.profile(run), run.getMetadata().getNamespace());
    }

    @Override
    protected void addReferenceHandlingMetadata(ConfigMap desired, BenchmarkRun run) {
        if (!Boolean.TRUE.equals(run.getSpec().getOutput().getRetain())) {
            super.addReferenceHandlingMetadata(desired, run);
        }
    }

    /**
     * The desired output ConfigMap.
     *
     * @param run the run, whose status holds results and profiles in stage order
     * @return the ConfigMap
     */
    public static ConfigMap desired(BenchmarkRun run) {
        Map<String, String> data = new TreeMap<>();
        BenchmarkRunStatus status = run.getStatus();
        if (status != null && status.getProfiles() != null && status.getResults() != null) {
            List<JsonNode> profiles = status.getProfiles();
            List<StageResult> results = status.getResults();
            for (int i = 0; i < Math.min(profiles.size(), results.size()); i++) {
                try {
                    data.put(
                            results.get(i).getProfileKey(),
                            RunnerWorkOrderDependent.JSON
                                    .writerWithDefaultPrettyPrinter()
                                    .writeValueAsString(profiles.get(i)));
                } catch (JsonProcessingException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        return new ConfigMapBuilder()
                .withNewMetadata()
                .withName(ResourceNames.profile(run))
                .withNamespace(run.getMetadata().getNamespace())
                .withLabels(Labels.of(run, Labels.PROFILE))
                .endMetadata()
                .withData(data)
                .build();
    }
}
