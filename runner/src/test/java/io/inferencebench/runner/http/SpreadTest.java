package io.inferencebench.runner.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.runner.http.HttpTransportTest.Outcome;
import io.inferencebench.runner.stub.StubServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Where the transport's requests go when told to spread: over several real servers on their own
 * loopback addresses, each request to the next in turn; and connections rotated after a bound.
 */
class SpreadTest {

    private static StubServer counting(String address, Queue<String> hosts) throws Exception {
        return new StubServer(
                (req, ex) -> {
                    hosts.add(req.header("host"));
                    ex.respond(200, "text/plain", "ok");
                },
                InetAddress.getByName(address));
    }

    /**
     * A transport for http://model.example:8000 on {@code loops} loops (10 connections each, 5 s
     * timeout) that spreads its requests over {@code addresses}.
     */
    private static HttpTransport spreading(int loops, InetSocketAddress... addresses) {
        return new HttpTransport(
                "http://model.example:8000",
                Map.of(),
                loops,
                10,
                Duration.ofSeconds(5),
                TlsOptions.VERIFY,
                new Spread(List.of(addresses), 0));
    }

    /** A port of {@code address} that nothing listens on (it refuses connections). */
    private static int closedPort(String address) throws Exception {
        try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
            probe.bind(new InetSocketAddress(address, 0));
            return probe.getLocalPort();
        }
    }

    /** Sends {@code n} requests from alternating loops, {@code parallel} at a time. */
    private static void send(HttpTransport transport, int n, int parallel) throws Exception {
        HttpTransport.PreparedRequest request =
                transport.preparePost("/v1/x", "text/plain", "{}".getBytes());
        for (int i = 0; i < n; i += parallel) {
            List<Outcome> batch = new ArrayList<>();
            for (int j = i; j < Math.min(n, i + parallel); j++) {
                Outcome outcome = new Outcome();
                int loop = j % transport.loops();
                transport.execute(loop, () -> transport.post(loop, request, outcome));
                batch.add(outcome);
            }
            for (Outcome outcome : batch) {
                assertThat(outcome.done.get(10, TimeUnit.SECONDS)).isEqualTo("200 ok");
            }
        }
    }

    @Test
    void eachRequestGoesToTheNextAddressWithTheBaseUrlsHostHeader() throws Exception {
        Queue<String> hostsA = new ConcurrentLinkedQueue<>();
        Queue<String> hostsB = new ConcurrentLinkedQueue<>();
        Queue<String> hostsC = new ConcurrentLinkedQueue<>();
        try (StubServer a = counting("127.0.0.2", hostsA);
                StubServer b = counting("127.0.0.3", hostsB);
                StubServer c = counting("127.0.0.4", hostsC)) {
            List<InetSocketAddress> addresses =
                    List.of(
                            new InetSocketAddress("127.0.0.2", a.port()),
                            new InetSocketAddress("127.0.0.3", b.port()),
                            new InetSocketAddress("127.0.0.4", c.port()));
            try (HttpTransport transport =
                    new HttpTransport(
                            "http://model.example:8000",
                            Map.of(),
                            2,
                            100,
                            Duration.ofSeconds(5),
                            TlsOptions.VERIFY,
                            new Spread(addresses, 0))) {
                // preconnect shares each loop's connections out over the addresses
                assertThat(transport.preconnect(3, Duration.ofSeconds(5))).isEqualTo(6);
                send(transport, 61, 7);
                // 61 over 3: 21, 20, 20, whichever loop sent them
                assertThat(List.of(a.requests(), b.requests(), c.requests()))
                        .containsExactly(21, 20, 20);
                Map<String, Long> expected = new LinkedHashMap<>();
                expected.put("127.0.0.2:" + a.port(), 21L);
                expected.put("127.0.0.3:" + b.port(), 20L);
                expected.put("127.0.0.4:" + c.port(), 20L);
                assertThat(transport.requestsPerAddress()).isEqualTo(expected);
            }
            for (Queue<String> hosts : List.of(hostsA, hostsB, hostsC)) {
                assertThat(hosts).isNotEmpty().allMatch("model.example:8000"::equals);
            }
        }
    }

    @Test
    void anAddressThatRefusesAConnectionIsPassedOverAndItsRequestGoesToTheNext() throws Exception {
        int closedPort = closedPort("127.0.0.3");
        try (StubServer live = counting("127.0.0.2", new ConcurrentLinkedQueue<>());
                HttpTransport transport =
                        spreading(
                                1,
                                new InetSocketAddress("127.0.0.3", closedPort),
                                new InetSocketAddress("127.0.0.2", live.port()))) {
            HttpTransport.PreparedRequest request =
                    transport.preparePost("/v1/x", "text/plain", "{}".getBytes());
            List<String> outcomes = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                Outcome outcome = new Outcome();
                transport.execute(0, () -> transport.post(0, request, outcome));
                outcomes.add(outcome.done.get(10, TimeUnit.SECONDS));
            }
            // the first request in the gone replica's turn was refused before anything was sent:
            // it went on to the live one, and for the next two seconds so do the gone one's turns
            assertThat(outcomes).allMatch("200 ok"::equals);
            assertThat(live.requests()).isEqualTo(20);
            assertThat(transport.requestsPerAddress())
                    .containsEntry("127.0.0.3:" + closedPort, 0L)
                    .containsEntry("127.0.0.2:" + live.port(), 20L);
            assertThat(transport.redirectedRequests()).isEqualTo(1);
        }
    }

    @Test
    void whenEveryAddressRefusesTheRequestFailsAsAConnectFailure() throws Exception {
        int[] closed = {closedPort("127.0.0.3"), closedPort("127.0.0.4")};
        try (HttpTransport transport =
                spreading(
                        1,
                        new InetSocketAddress("127.0.0.3", closed[0]),
                        new InetSocketAddress("127.0.0.4", closed[1]))) {
            HttpTransport.PreparedRequest request =
                    transport.preparePost("/v1/x", "text/plain", "{}".getBytes());
            Outcome outcome = new Outcome();
            transport.execute(0, () -> transport.post(0, request, outcome));
            // tried on the other address once, then failed: never a loop between the two
            assertThat(outcome.done.get(10, TimeUnit.SECONDS)).startsWith("failed connect");
            assertThat(transport.redirectedRequests()).isEqualTo(1);
        }
    }

    @Test
    void aNewListOfAddressesTakesEffectAtOnceAndTheOneThatLeftFinishesItsRequests()
            throws Exception {
        java.util.concurrent.CountDownLatch slowArrived =
                new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch releaseSlow =
                new java.util.concurrent.CountDownLatch(1);
        try (StubServer a =
                        new StubServer(
                                (req, ex) -> {
                                    if (req.path().endsWith("/slow")) {
                                        slowArrived.countDown();
                                        releaseSlow.await(10, TimeUnit.SECONDS);
                                    }
                                    ex.respond(200, "text/plain", "ok");
                                },
                                InetAddress.getByName("127.0.0.2"));
                StubServer b = counting("127.0.0.3", new ConcurrentLinkedQueue<>());
                StubServer c = counting("127.0.0.4", new ConcurrentLinkedQueue<>());
                HttpTransport transport =
                        new HttpTransport(
                                "http://model.example:8000",
                                Map.of(),
                                2,
                                10,
                                Duration.ofSeconds(10),
                                TlsOptions.VERIFY,
                                new Spread(
                                        List.of(
                                                new InetSocketAddress("127.0.0.2", a.port()),
                                                new InetSocketAddress("127.0.0.3", b.port())),
                                        0))) {
            String nameA = "127.0.0.2:" + a.port();
            String nameB = "127.0.0.3:" + b.port();
            String nameC = "127.0.0.4:" + c.port();
            send(transport, 10, 2);
            // a request still in flight on a when a leaves
            Outcome slow = new Outcome();
            HttpTransport.PreparedRequest slowRequest =
                    transport.preparePost("/v1/slow", "text/plain", "{}".getBytes());
            transport.execute(0, () -> transport.post(0, slowRequest, slow));
            assertThat(slowArrived.await(5, TimeUnit.SECONDS)).isTrue();
            AddressChange change =
                    transport.spreadOver(
                            List.of(
                                    new InetSocketAddress("127.0.0.3", b.port()),
                                    new InetSocketAddress("127.0.0.4", c.port())));
            assertThat(change.joined()).containsExactly(nameC);
            assertThat(change.left()).containsExactly(nameA);
            assertThat(transport.activeAddresses()).containsExactly(nameB, nameC);
            // the same list again is no change
            assertThat(
                            transport.spreadOver(
                                    List.of(
                                            new InetSocketAddress("127.0.0.3", b.port()),
                                            new InetSocketAddress("127.0.0.4", c.port()))))
                    .isNull();
            send(transport, 20, 2);
            releaseSlow.countDown();
            assertThat(slow.done.get(10, TimeUnit.SECONDS)).isEqualTo("200 ok");
            // a: 5 of the first 10 and the slow one, none after it left
            assertThat(a.requests()).isEqualTo(6);
            assertThat(b.requests()).isEqualTo(15);
            assertThat(c.requests()).isEqualTo(10);
            Map<String, Long> expected = new LinkedHashMap<>();
            expected.put(nameA, 6L);
            expected.put(nameB, 15L);
            expected.put(nameC, 10L);
            assertThat(transport.requestsPerAddress()).isEqualTo(expected);
            assertThat(transport.addressChanges()).containsExactly(change);
            // a's connections close once their requests are done: none stays open to it
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (a.openConnections() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(a.openConnections()).isZero();
        }
    }

    @Test
    void withoutSpreadNothingIsCountedPerAddress() throws Exception {
        try (StubServer a = counting("127.0.0.1", new ConcurrentLinkedQueue<>());
                HttpTransport transport =
                        new HttpTransport(
                                "http://127.0.0.1:" + a.port(),
                                Map.of(),
                                1,
                                10,
                                Duration.ofSeconds(5))) {
            send(transport, 3, 1);
            assertThat(transport.requestsPerAddress()).isEmpty();
        }
    }

    @Test
    void aBoundedConnectionIsClosedAfterItsRequestsAndIdleOnesAreReusedOldestFirst()
            throws Exception {
        try (StubServer rotated = counting("127.0.0.1", new ConcurrentLinkedQueue<>());
                StubServer kept = counting("127.0.0.1", new ConcurrentLinkedQueue<>());
                HttpTransport bounded =
                        new HttpTransport(
                                "http://127.0.0.1:" + rotated.port(),
                                Map.of(),
                                1,
                                10,
                                Duration.ofSeconds(5),
                                TlsOptions.VERIFY,
                                new Spread(List.of(), 4));
                HttpTransport unbounded =
                        new HttpTransport(
                                "http://127.0.0.1:" + kept.port(),
                                Map.of(),
                                1,
                                10,
                                Duration.ofSeconds(5))) {
            // three open connections, then one request at a time: oldest first spreads them
            // over all three until each has carried its four
            assertThat(bounded.preconnect(3, Duration.ofSeconds(5))).isEqualTo(3);
            send(bounded, 12, 1);
            awaitClosedCount(rotated, 3);
            assertThat(rotated.requestsPerConnection()).containsExactly(4, 4, 4);
            send(bounded, 2, 1);
            assertThat(rotated.connections()).isEqualTo(4);
            // the default keeps the most recently used connection busy and the others idle
            assertThat(unbounded.preconnect(3, Duration.ofSeconds(5))).isEqualTo(3);
            send(unbounded, 12, 1);
            assertThat(kept.requestsPerConnection()).containsExactlyInAnyOrder(12, 0, 0);
        }
    }

    private static void awaitClosedCount(StubServer server, int connections) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (server.connections() < connections && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }
}
