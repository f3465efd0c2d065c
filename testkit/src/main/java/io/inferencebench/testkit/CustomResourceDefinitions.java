package io.inferencebench.testkit;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Installing CustomResourceDefinitions in a test API server (or cluster) and waiting until the API
 * server serves them: a custom resource created before its CRD is Established is refused.
 */
public final class CustomResourceDefinitions {

    /** How long {@link #awaitEstablished} waits for each CRD. */
    public static final long ESTABLISHED_TIMEOUT_SECONDS = 60;

    private CustomResourceDefinitions() {}

    /** Creates the CRDs, then waits until each is Established. */
    public static void createAndAwaitEstablished(
            KubernetesClient client, List<CustomResourceDefinition> crds) {
        for (CustomResourceDefinition crd : crds) {
            client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
        }
        awaitEstablished(client, crds.stream().map(crd -> crd.getMetadata().getName()).toList());
    }

    /**
     * Waits up to {@link #ESTABLISHED_TIMEOUT_SECONDS} for each named CRD to be Established; throws
     * when one is not.
     */
    public static void awaitEstablished(KubernetesClient client, List<String> crdNames) {
        for (String name : crdNames) {
            client.apiextensions()
                    .v1()
                    .customResourceDefinitions()
                    .withName(name)
                    .waitUntilCondition(
                            CustomResourceDefinitions::isEstablished,
                            ESTABLISHED_TIMEOUT_SECONDS,
                            TimeUnit.SECONDS);
        }
    }

    /**
     * Whether the CRD exists and its Established condition is True. Its status can exist before its
     * conditions (seen on a loaded machine).
     */
    public static boolean isEstablished(CustomResourceDefinition crd) {
        return crd != null
                && crd.getStatus() != null
                && crd.getStatus().getConditions() != null
                && crd.getStatus().getConditions().stream()
                        .anyMatch(
                                c ->
                                        c.getType().equals("Established")
                                                && c.getStatus().equals("True"));
    }
}
