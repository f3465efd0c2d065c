package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.inferencebench.testkit.ApiServerFixture;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A leader whose connection to the API server stalls for 20 s (what a starved node or a slow API
 * server looks like from the operator): with JOSDK's default timings it stops leading, with the
 * operator's it keeps the Lease and renews it once the stall ends. Real kube-apiserver + etcd,
 * fabric8's LeaderElector as JOSDK runs it, a TCP proxy that holds every byte while stalled.
 */
class LeaseUnderStallIT {

    private static final Duration STALL = Duration.ofSeconds(20);

    /** Forwards TCP to the API server; holds all traffic while {@link #stallUntil} lies ahead. */
    static final class StallingProxy implements AutoCloseable {
        final ServerSocket socket;
        final AtomicLong stallUntil = new AtomicLong();

        StallingProxy(URI upstream) throws IOException {
            socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread acceptor =
                    new Thread(
                            () -> {
                                while (!socket.isClosed()) {
                                    try {
                                        Socket down = socket.accept();
                                        Socket up =
                                                new Socket(upstream.getHost(), upstream.getPort());
                                        pump(down.getInputStream(), up.getOutputStream(), up, down);
                                        pump(up.getInputStream(), down.getOutputStream(), up, down);
                                    } catch (IOException e) {
                                        return;
                                    }
                                }
                            },
                            "stalling-proxy");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private void pump(InputStream in, OutputStream out, Socket a, Socket b) {
            Thread t =
                    new Thread(
                            () -> {
                                byte[] buffer = new byte[16 * 1024];
                                try {
                                    int n;
                                    while ((n = in.read(buffer)) >= 0) {
                                        long wait;
                                        while ((wait = stallUntil.get() - System.nanoTime()) > 0) {
                                            TimeUnit.NANOSECONDS.sleep(wait);
                                        }
                                        out.write(buffer, 0, n);
                                        out.flush();
                                    }
                                } catch (IOException | InterruptedException e) {
                                    // connection closed
                                } finally {
                                    try {
                                        a.close();
                                        b.close();
                                    } catch (IOException ignored) {
                                        // closing anyway
                                    }
                                }
                            },
                            "stalling-proxy-pump");
            t.setDaemon(true);
            t.start();
        }

        void stall(Duration d) {
            stallUntil.set(System.nanoTime() + d.toNanos());
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    private record Outcome(
            boolean stoppedLeading, ZonedDateTime renewBefore, ZonedDateTime renewAfter) {}

    private static Outcome leadThroughAStall(
            ApiServerFixture apiServer,
            String namespace,
            String lease,
            LeaderElectionConfiguration timing)
            throws Exception {
        KubernetesClient direct = apiServer.newClient();
        Config config = Config.fromKubeconfig(apiServer.kubeconfigYaml());
        URI upstream = URI.create(config.getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(upstream)) {
            config.setMasterUrl("https://127.0.0.1:" + proxy.socket.getLocalPort());
            try (KubernetesClient viaProxy =
                    new KubernetesClientBuilder().withConfig(config).build()) {
                CountDownLatch leading = new CountDownLatch(1);
                CompletableFuture<Void> stopped = new CompletableFuture<>();
                LeaderElector elector =
                        viaProxy.leaderElector()
                                .withConfig(
                                        new LeaderElectionConfigBuilder()
                                                .withName(lease)
                                                .withLock(
                                                        new LeaseLock(
                                                                namespace, lease, "operator-0"))
                                                .withLeaseDuration(timing.getLeaseDuration())
                                                .withRenewDeadline(timing.getRenewDeadline())
                                                .withRetryPeriod(timing.getRetryPeriod())
                                                .withLeaderCallbacks(
                                                        new LeaderCallbacks(
                                                                leading::countDown,
                                                                () -> stopped.complete(null),
                                                                id -> {}))
                                                .build())
                                .build();
                CompletableFuture<?> running = elector.start();
                try {
                    assertThat(leading.await(30, TimeUnit.SECONDS)).isTrue();
                    ZonedDateTime before = renewTime(direct, namespace, lease);
                    proxy.stall(STALL);
                    Thread.sleep(STALL.toMillis());
                    // after the stall: the elector gets two retry periods to renew
                    long settle = 2 * timing.getRetryPeriod().toMillis() + 2_000;
                    Thread.sleep(settle);
                    ZonedDateTime after = renewTime(direct, namespace, lease);
                    return new Outcome(stopped.isDone(), before, after);
                } finally {
                    running.cancel(true);
                }
            }
        } finally {
            direct.close();
        }
    }

    private static ZonedDateTime renewTime(KubernetesClient client, String namespace, String name) {
        Lease lease = client.leases().inNamespace(namespace).withName(name).get();
        return lease.getSpec().getRenewTime();
    }

    @Test
    void theOperatorsTimingsKeepTheLeaseThroughAStallThatEndsJosdksDefaults() throws Exception {
        try (ApiServerFixture apiServer = ApiServerFixture.start()) {
            String namespace = "lease-it";
            apiServer
                    .client()
                    .namespaces()
                    .resource(
                            new NamespaceBuilder()
                                    .withNewMetadata()
                                    .withName(namespace)
                                    .endMetadata()
                                    .build())
                    .create();
            LeaderElectionConfiguration ours =
                    new LeaderElection().leaderElection("ours", "60s", "50s", "5s");
            Outcome kept = leadThroughAStall(apiServer, namespace, "ours", ours);
            assertThat(kept.stoppedLeading()).isFalse();
            assertThat(kept.renewAfter()).isAfter(kept.renewBefore().plus(STALL));

            LeaderElectionConfiguration defaults = new LeaderElectionConfiguration("defaults");
            Outcome lost = leadThroughAStall(apiServer, namespace, "defaults", defaults);
            assertThat(defaults.getRenewDeadline()).isLessThan(STALL);
            assertThat(lost.stoppedLeading()).isTrue();
        }
    }
}
