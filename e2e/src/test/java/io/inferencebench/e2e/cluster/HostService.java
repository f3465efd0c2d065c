package io.inferencebench.e2e.cluster;

import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;

/**
 * A server on this host behind a Service without a selector and one EndpointSlice naming the host
 * address the pods reach ({@link TestCluster#hostAddress()}): how a model server outside the
 * cluster (a GPU box, a managed endpoint) is benchmarked. Runner pods reach it through the
 * Service's ClusterIP; the operator scrapes the slice's address.
 */
final class HostService {

    private HostService() {}

    /** A port nobody listens on at {@code host}. */
    static int freePort(String host) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(host, 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on " + host, e);
        }
    }

    /**
     * Creates Service {@code name} (port {@code servicePort}, named {@code http}) and its slice
     * pointing at {@code host:port}, ready.
     */
    static void expose(
            KubernetesClient client,
            String namespace,
            String name,
            int servicePort,
            String host,
            int port) {
        client.services()
                .inNamespace(namespace)
                .resource(
                        new ServiceBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .endMetadata()
                                .withNewSpec()
                                .addNewPort()
                                .withName("http")
                                .withPort(servicePort)
                                .withNewTargetPort(port)
                                .endPort()
                                .endSpec()
                                .build())
                .create();
        client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(namespace)
                .resource(
                        new EndpointSliceBuilder()
                                .withNewMetadata()
                                .withName(name + "-host")
                                .addToLabels("kubernetes.io/service-name", name)
                                .addToLabels(
                                        "endpointslice.kubernetes.io/managed-by",
                                        "inferencebench-e2e")
                                .endMetadata()
                                .withAddressType("IPv4")
                                .addNewEndpoint()
                                .withAddresses(host)
                                .withNewConditions()
                                .withReady(true)
                                .endConditions()
                                .endEndpoint()
                                .addNewPort()
                                .withName("http")
                                .withPort(port)
                                .withProtocol("TCP")
                                .endPort()
                                .build())
                .create();
    }
}
