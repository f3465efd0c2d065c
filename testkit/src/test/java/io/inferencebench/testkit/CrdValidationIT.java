package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith({ApiServerFixture.Extension.class, ClusterDumpExtension.class})
class CrdValidationIT {

    private static final String CRD =
            """
            apiVersion: apiextensions.k8s.io/v1
            kind: CustomResourceDefinition
            metadata:
              name: widgets.testkit.inferencebench.io
            spec:
              group: testkit.inferencebench.io
              scope: Namespaced
              names: {plural: widgets, singular: widget, kind: Widget}
              versions:
              - name: v1
                served: true
                storage: true
                schema:
                  openAPIV3Schema:
                    type: object
                    properties:
                      spec:
                        type: object
                        required: [replicas]
                        properties:
                          replicas: {type: integer, minimum: 1, maximum: 10}
                          mode: {type: string, enum: [fast, slow]}
            """;

    private static final ResourceDefinitionContext WIDGETS =
            new ResourceDefinitionContext.Builder()
                    .withGroup("testkit.inferencebench.io")
                    .withVersion("v1")
                    .withPlural("widgets")
                    .withKind("Widget")
                    .withNamespaced(true)
                    .build();

    @BeforeAll
    static void installCrd(KubernetesClient client) {
        CustomResourceDefinition crd = Serialization.unmarshal(CRD, CustomResourceDefinition.class);
        client.apiextensions().v1().customResourceDefinitions().resource(crd).serverSideApply();
        client.apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName(crd.getMetadata().getName())
                .waitUntilCondition(
                        c ->
                                c.getStatus() != null
                                        && c.getStatus().getConditions() != null
                                        && c.getStatus().getConditions().stream()
                                                .anyMatch(
                                                        cond ->
                                                                cond.getType().equals("Established")
                                                                        && cond.getStatus()
                                                                                .equals("True")),
                        30,
                        TimeUnit.SECONDS);
    }

    private static GenericKubernetesResource widget(String name, Map<String, Object> spec) {
        return new GenericKubernetesResourceBuilder()
                .withApiVersion("testkit.inferencebench.io/v1")
                .withKind("Widget")
                .withNewMetadata()
                .withName(name)
                .withNamespace("default")
                .endMetadata()
                .withAdditionalProperties(Map.of("spec", spec))
                .build();
    }

    @Test
    void acceptsValidObject(KubernetesClient client) {
        GenericKubernetesResource created =
                client.genericKubernetesResources(WIDGETS)
                        .inNamespace("default")
                        .resource(widget("good", Map.of("replicas", 3, "mode", "fast")))
                        .create();

        assertThat(created.getMetadata().getUid()).isNotBlank();
        assertThat(
                        client.genericKubernetesResources(WIDGETS)
                                .inNamespace("default")
                                .withName("good")
                                .get())
                .isNotNull();
    }

    @Test
    void rejectsOutOfRangeFieldWithMessageNamingIt(KubernetesClient client) {
        assertThatThrownBy(
                        () ->
                                client.genericKubernetesResources(WIDGETS)
                                        .inNamespace("default")
                                        .resource(widget("too-many", Map.of("replicas", 42)))
                                        .create())
                .isInstanceOf(KubernetesClientException.class)
                .satisfies(
                        e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
                .hasMessageContaining("spec.replicas")
                .hasMessageContaining("should be less than or equal to 10");
    }

    @Test
    void rejectsEnumViolationAndMissingRequiredField(KubernetesClient client) {
        assertThatThrownBy(
                        () ->
                                client.genericKubernetesResources(WIDGETS)
                                        .inNamespace("default")
                                        .resource(widget("bad-mode", Map.of("mode", "warp")))
                                        .create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("spec.mode")
                .hasMessageContaining("\"fast\", \"slow\"")
                .hasMessageContaining("spec.replicas: Required value");
    }
}
