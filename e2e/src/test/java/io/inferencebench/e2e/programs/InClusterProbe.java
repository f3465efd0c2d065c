package io.inferencebench.e2e.programs;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * Uses an in-cluster fabric8 client (projected ServiceAccount token, no kubeconfig) and reports
 * what its ServiceAccount may do: list ConfigMaps (allowed by its Role) and list Secrets (not).
 */
public final class InClusterProbe {
    private InClusterProbe() {}

    public static void main(String[] args) {
        try (KubernetesClient client = new KubernetesClientBuilder().build()) {
            System.out.println("master=" + client.getMasterUrl());
            System.out.println("namespace=" + client.getNamespace());
            System.out.println(
                    "configmaps=" + attempt(() -> client.configMaps().list().getItems().size()));
            System.out.println(
                    "secrets=" + attempt(() -> client.secrets().list().getItems().size()));
        }
    }

    private static String attempt(java.util.function.IntSupplier call) {
        try {
            return "ok:" + call.getAsInt();
        } catch (KubernetesClientException e) {
            return "http-" + e.getCode();
        }
    }
}
