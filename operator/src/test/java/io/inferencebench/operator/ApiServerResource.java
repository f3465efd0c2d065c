package io.inferencebench.operator;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.testkit.ApiServerFixture;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.HashMap;
import java.util.Map;

/**
 * Starts a real kube-apiserver + etcd for a {@code @QuarkusTest}, installs the CRDs and points the
 * operator's Kubernetes client at it.
 */
public class ApiServerResource implements QuarkusTestResourceLifecycleManager {

    static ApiServerFixture fixture;

    @Override
    public Map<String, String> start() {
        fixture = ApiServerFixture.start();
        KubernetesClient client = fixture.client();
        OperatorTestCluster.installAndAwaitEstablished(client, OperatorTestCluster.allCrds(client));
        Config config = Config.fromKubeconfig(fixture.kubeconfigYaml());
        Map<String, String> properties = new HashMap<>();
        properties.put("quarkus.kubernetes-client.api-server-url", config.getMasterUrl());
        put(properties, "ca-cert-data", config.getCaCertData());
        put(properties, "ca-cert-file", config.getCaCertFile());
        put(properties, "client-cert-data", config.getClientCertData());
        put(properties, "client-cert-file", config.getClientCertFile());
        put(properties, "client-key-data", config.getClientKeyData());
        put(properties, "client-key-file", config.getClientKeyFile());
        put(
                properties,
                "client-key-algo",
                config.getClientKeyAlgo() == null ? "RSA" : config.getClientKeyAlgo());
        return properties;
    }

    private static void put(Map<String, String> properties, String key, String value) {
        if (value != null) {
            properties.put("quarkus.kubernetes-client." + key, value);
        }
    }

    @Override
    public void stop() {
        if (fixture != null) {
            fixture.close();
        }
    }
}
