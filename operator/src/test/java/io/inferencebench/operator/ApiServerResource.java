package io.inferencebench.operator;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.testkit.ApiServerFixture;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

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
        for (String file :
                java.util.List.of(
                        "/META-INF/fabric8/benchmarkruns.inferencebench.io-v1.yml",
                        "/META-INF/fabric8/benchmarkschedules.inferencebench.io-v1.yml")) {
            try (InputStream crdYaml = BenchmarkRun.class.getResourceAsStream(file)) {
                CustomResourceDefinition crd =
                        client.apiextensions()
                                .v1()
                                .customResourceDefinitions()
                                .load(crdYaml)
                                .item();
                client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        for (String name :
                java.util.List.of(
                        BenchmarkRun.CRD_NAME,
                        io.inferencebench.crds.v1alpha1.BenchmarkSchedule.CRD_NAME)) {
            client.apiextensions()
                    .v1()
                    .customResourceDefinitions()
                    .withName(name)
                    .waitUntilCondition(
                            c ->
                                    // status can exist before its conditions (seen on a loaded
                                    // run)
                                    c.getStatus() != null
                                            && c.getStatus().getConditions() != null
                                            && c.getStatus().getConditions().stream()
                                                    .anyMatch(
                                                            x ->
                                                                    x.getType()
                                                                                    .equals(
                                                                                            "Established")
                                                                            && x.getStatus()
                                                                                    .equals(
                                                                                            "True")),
                            60,
                            TimeUnit.SECONDS);
        }
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
