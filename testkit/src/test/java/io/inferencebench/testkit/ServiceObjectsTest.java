package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import org.junit.jupiter.api.Test;

class ServiceObjectsTest {

    @Test
    void aServiceWithASelectorForwardsItsOneNamedPortToTheTarget() {
        Service service =
                ServiceObjects.service("sim", "sim-app", "http", 8000, new IntOrString("http"));

        assertThat(service.getMetadata().getName()).isEqualTo("sim");
        assertThat(service.getSpec().getSelector())
                .containsExactlyEntriesOf(java.util.Map.of("app", "sim-app"));
        assertThat(service.getSpec().getPorts())
                .singleElement()
                .satisfies(
                        p -> {
                            assertThat(p.getName()).isEqualTo("http");
                            assertThat(p.getPort()).isEqualTo(8000);
                            assertThat(p.getTargetPort().getStrVal()).isEqualTo("http");
                        });
    }

    @Test
    void aServiceWithoutSelectorNameOrTargetLeavesThemOut() {
        Service service = ServiceObjects.service("vllm", null, null, 8000, null);

        assertThat(service.getSpec().getSelector()).isNullOrEmpty();
        assertThat(service.getSpec().getPorts())
                .singleElement()
                .satisfies(
                        p -> {
                            assertThat(p.getName()).isNull();
                            assertThat(p.getPort()).isEqualTo(8000);
                            assertThat(p.getTargetPort()).isNull();
                        });
    }

    @Test
    void anEndpointSliceBelongsToItsServiceWithOneEndpointAndOneTcpPort() {
        EndpointSlice slice =
                ServiceObjects.endpointSlice("vllm-1", "vllm", "10.1.2.3", false, "api", 9000);

        assertThat(slice.getMetadata().getName()).isEqualTo("vllm-1");
        assertThat(slice.getMetadata().getLabels())
                .containsEntry("kubernetes.io/service-name", "vllm");
        assertThat(slice.getAddressType()).isEqualTo("IPv4");
        assertThat(slice.getEndpoints())
                .singleElement()
                .satisfies(
                        e -> {
                            assertThat(e.getAddresses()).containsExactly("10.1.2.3");
                            assertThat(e.getConditions().getReady()).isFalse();
                        });
        assertThat(slice.getPorts())
                .singleElement()
                .satisfies(
                        p -> {
                            assertThat(p.getName()).isEqualTo("api");
                            assertThat(p.getPort()).isEqualTo(9000);
                            assertThat(p.getProtocol()).isEqualTo("TCP");
                        });
    }
}
