package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.http.Spread;
import io.inferencebench.runner.http.TlsOptions;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The control ConfigMap's endpoint list, as the operator publishes it, steers the transport. */
class EndpointFollowerTest {

    private final List<String> log = new ArrayList<>();

    private HttpTransport transport(String... addresses) {
        return new HttpTransport(
                "http://sim.ns.svc:8000",
                Map.of(),
                1,
                4,
                Duration.ofSeconds(2),
                TlsOptions.VERIFY,
                new Spread(
                        java.util.Arrays.stream(addresses)
                                .map(a -> new InetSocketAddress(a, 8000))
                                .toList(),
                        0));
    }

    private EndpointFollower follower(HttpTransport transport, int podIndex) {
        return new EndpointFollower(
                transport, podIndex, (format, args) -> log.add(String.format(format, args)));
    }

    @Test
    void aNewListReplacesTheAddressesTurnedForThePod() {
        try (HttpTransport transport = transport("10.0.0.1", "10.0.0.2", "10.0.0.3")) {
            EndpointFollower follower = follower(transport, 1);
            follower.follow(
                    Map.of(
                            RunnerWorkOrder.ENDPOINTS_KEY,
                            "10.0.0.1:8000,10.0.0.3:8000,10.0.0.4:8000",
                            RunnerWorkOrder.CANCEL_KEY,
                            "false"));
            // pod 1 starts one further along the operator's sorted list
            assertThat(transport.activeAddresses())
                    .containsExactly("10.0.0.3:8000", "10.0.0.4:8000", "10.0.0.1:8000");
            assertThat(log)
                    .containsExactly(
                            "endpoints changed: joined [10.0.0.4:8000], left [10.0.0.2:8000];"
                                    + " now sending to [10.0.0.3:8000, 10.0.0.4:8000,"
                                    + " 10.0.0.1:8000]");
            assertThat(transport.addressChanges()).hasSize(1);
        }
    }

    @Test
    void noKeyABlankListOrTheSameListChangeNothing() {
        try (HttpTransport transport = transport("10.0.0.1", "10.0.0.2")) {
            EndpointFollower follower = follower(transport, 0);
            follower.follow(Map.of(RunnerWorkOrder.CANCEL_KEY, "false"));
            follower.follow(Map.of(RunnerWorkOrder.ENDPOINTS_KEY, " "));
            follower.follow(Map.of(RunnerWorkOrder.ENDPOINTS_KEY, "10.0.0.1:8000,10.0.0.2:8000"));
            follower.follow(Map.of(RunnerWorkOrder.ENDPOINTS_KEY, "10.0.0.1:8000,10.0.0.2:8000"));
            assertThat(transport.activeAddresses())
                    .containsExactly("10.0.0.1:8000", "10.0.0.2:8000");
            assertThat(transport.addressChanges()).isEmpty();
            assertThat(log).isEmpty();
        }
    }

    @Test
    void anEntryThatIsNotAnAddressKeepsTheLastListAndSaysWhy() {
        try (HttpTransport transport = transport("10.0.0.1", "10.0.0.2")) {
            follower(transport, 0)
                    .follow(
                            Map.of(
                                    RunnerWorkOrder.ENDPOINTS_KEY,
                                    "10.0.0.1:8000,\u001b[31mnot-an-address"));
            assertThat(transport.activeAddresses())
                    .containsExactly("10.0.0.1:8000", "10.0.0.2:8000");
            assertThat(log).hasSize(1);
            assertThat(log.getFirst())
                    .startsWith("control endpoints: not an ip:port: ")
                    .endsWith("; keeping [10.0.0.1:8000, 10.0.0.2:8000]")
                    .doesNotContain("\u001b");
        }
    }
}
