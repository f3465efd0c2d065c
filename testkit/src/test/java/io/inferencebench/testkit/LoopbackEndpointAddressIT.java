package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Documents why {@link PodNetwork} gives pods addresses in network namespaces: the API server
 * refuses loopback addresses in EndpointSlices, so 127.x pod IPs could never back a Service.
 */
@ExtendWith(ApiServerFixture.Extension.class)
class LoopbackEndpointAddressIT {

    private static EndpointSlice slice(String name, String address) {
        return new EndpointSliceBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace("default")
                .addToLabels("kubernetes.io/service-name", "probe")
                .endMetadata()
                .withAddressType("IPv4")
                .addNewEndpoint()
                .withAddresses(address)
                .endEndpoint()
                .addNewPort()
                .withName("http")
                .withPort(8080)
                .withProtocol("TCP")
                .endPort()
                .build();
    }

    @Test
    void loopbackAddressIsRejected(KubernetesClient client) {
        assertThatThrownBy(
                        () ->
                                client.discovery()
                                        .v1()
                                        .endpointSlices()
                                        .resource(slice("loopback", "127.0.5.9"))
                                        .create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("endpoints[0].addresses[0]")
                .hasMessageContaining("loopback");
    }

    @Test
    void podNetworkStyleAddressIsAccepted(KubernetesClient client) {
        EndpointSlice created =
                client.discovery()
                        .v1()
                        .endpointSlices()
                        .resource(slice("pod-network", "10.213.7.9"))
                        .create();

        assertThat(created.getEndpoints().get(0).getAddresses()).containsExactly("10.213.7.9");
    }
}
