package io.inferencebench.e2e.cluster;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.testkit.ServiceObjects;
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
                        ServiceObjects.service(
                                name, null, "http", servicePort, new IntOrString(port)))
                .create();
        EndpointSlice slice =
                new EndpointSliceBuilder(
                                ServiceObjects.endpointSlice(
                                        name + "-host", name, host, true, "http", port))
                        .editMetadata()
                        .addToLabels("endpointslice.kubernetes.io/managed-by", "inferencebench-e2e")
                        .endMetadata()
                        .build();
        client.discovery().v1().endpointSlices().inNamespace(namespace).resource(slice).create();
    }
}
