package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.runner.http.HttpTransport;
import io.inferencebench.runner.http.Spread;
import io.inferencebench.runner.http.TlsOptions;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@code --balance addresses} follows the host's addresses as its lookups change. */
class HostFollowerTest {

    @Test
    void aChangedLookupReplacesTheAddressesAndAFailedOneKeepsThem() throws Exception {
        AtomicReference<String[]> answer =
                new AtomicReference<>(new String[] {"10.0.0.1", "10.0.0.2"});
        HostFollower.Resolver resolver =
                host -> {
                    String[] ips = answer.get();
                    if (ips == null) {
                        throw new UnknownHostException(host);
                    }
                    InetAddress[] out = new InetAddress[ips.length];
                    for (int i = 0; i < ips.length; i++) {
                        out[i] = InetAddress.getByName(ips[i]);
                    }
                    return out;
                };
        StringWriter text = new StringWriter();
        try (HttpTransport transport =
                new HttpTransport(
                        "http://sim-headless.ns.svc:8000",
                        Map.of(),
                        1,
                        4,
                        Duration.ofSeconds(2),
                        TlsOptions.VERIFY,
                        new Spread(
                                List.of(
                                        new InetSocketAddress("10.0.0.1", 8000),
                                        new InetSocketAddress("10.0.0.2", 8000)),
                                0))) {
            HostFollower follower =
                    new HostFollower(
                            transport,
                            "sim-headless.ns.svc",
                            8000,
                            resolver,
                            new PrintWriter(text));
            follower.check();
            assertThat(transport.addressChanges()).isEmpty();
            assertThat(text.toString()).isEmpty();
            // a pod replaced; the resolver lists them in another order
            answer.set(new String[] {"10.0.0.3", "10.0.0.1"});
            follower.check();
            assertThat(transport.activeAddresses())
                    .containsExactly("10.0.0.1:8000", "10.0.0.3:8000");
            assertThat(text.toString())
                    .isEqualTo(
                            "--balance addresses: sim-headless.ns.svc now resolves to"
                                    + " [10.0.0.1:8000, 10.0.0.3:8000] (joined [10.0.0.3:8000],"
                                    + " left [10.0.0.2:8000])"
                                    + System.lineSeparator());
            // nothing found, or the lookup failed: the last set stays
            answer.set(new String[0]);
            follower.check();
            answer.set(null);
            follower.check();
            assertThat(transport.activeAddresses())
                    .containsExactly("10.0.0.1:8000", "10.0.0.3:8000");
            assertThat(transport.addressChanges()).hasSize(1);
        }
    }
}
