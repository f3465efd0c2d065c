package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.runner.http.Spread;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The endpoints a work order names, as each runner pod of the run spreads over them. */
class PodSpreadTest {

    private static RunnerWorkOrder order(List<String> connectTo) {
        return order(connectTo, null);
    }

    private static RunnerWorkOrder order(List<String> connectTo, Integer requestsPerConnection) {
        return new RunnerWorkOrder(
                "r",
                "ns",
                "uid",
                2,
                "http://sim.ns.svc:8000",
                "/v1/completions",
                "vllm",
                "completions",
                null,
                Map.of(),
                false,
                null,
                null,
                List.of(),
                null,
                "r-control",
                "r-part-",
                3,
                null,
                connectTo,
                requestsPerConnection);
    }

    @Test
    void eachPodStartsAtAnotherEndpoint() {
        RunnerWorkOrder order = order(List.of("10.0.0.1:8000", "10.0.0.2:8000", "[fd00::3]:9000"));
        assertThat(names(PodRun.spread(order, 0)))
                .containsExactly("10.0.0.1:8000", "10.0.0.2:8000", "[fd00:0:0:0:0:0:0:3]:9000");
        assertThat(names(PodRun.spread(order, 1)))
                .containsExactly("10.0.0.2:8000", "[fd00:0:0:0:0:0:0:3]:9000", "10.0.0.1:8000");
        assertThat(names(PodRun.spread(order, 4))).first().isEqualTo("10.0.0.2:8000");
        assertThat(PodRun.spread(order, 0).requestsPerConnection()).isZero();
    }

    @Test
    void noEndpointsMeansTheBaseUrlsHostAndABadOneIsNamed() {
        assertThat(PodRun.spread(order(null), 0)).isSameAs(Spread.NONE);
        assertThat(PodRun.spread(order(List.of()), 1)).isSameAs(Spread.NONE);
        assertThatThrownBy(() -> PodRun.spread(order(List.of("10.0.0.1")), 0))
                .hasMessageContaining("connectTo: not an ip:port: 10.0.0.1");
    }

    @Test
    void aBoundOnRequestsPerConnectionRotatesThroughTheServiceAndOverEndpoints() {
        Spread throughService = PodRun.spread(order(null, 10), 0);
        assertThat(throughService.spreads()).isFalse();
        assertThat(throughService.requestsPerConnection()).isEqualTo(10);
        Spread overEndpoints = PodRun.spread(order(List.of("10.0.0.1:8000"), 1), 0);
        assertThat(names(overEndpoints)).containsExactly("10.0.0.1:8000");
        assertThat(overEndpoints.requestsPerConnection()).isEqualTo(1);
    }

    private static List<String> names(Spread spread) {
        return spread.addresses().stream().map(Spread::name).toList();
    }
}
