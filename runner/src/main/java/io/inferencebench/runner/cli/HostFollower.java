package io.inferencebench.runner.cli;

import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.http.AddressChange;
import io.inferencebench.runner.http.HttpTransport;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * With {@code --balance addresses}, resolves the {@code --base-url} host again every few seconds
 * during the run and hands a changed set of addresses to the transport, so a headless Service's pod
 * that joins gets its turns and one that leaves gets no new requests. A lookup that fails or finds
 * nothing keeps the last set: there is nowhere better to send.
 */
final class HostFollower implements AutoCloseable {

    /** How often the host is resolved again (a headless Service's DNS records live 5 s). */
    static final Duration INTERVAL = Duration.ofSeconds(5);

    /** Looks a host's addresses up (the system resolver, or a test's). */
    @FunctionalInterface
    interface Resolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    private final HttpTransport transport;
    private final String host;
    private final int port;
    private final Resolver resolver;
    private final PrintWriter err;
    private ScheduledExecutorService scheduler;

    HostFollower(
            HttpTransport transport, String host, int port, Resolver resolver, PrintWriter err) {
        this.transport = transport;
        this.host = host;
        this.port = port;
        this.resolver = resolver;
        this.err = err;
    }

    /** Follows {@code host} through the system resolver every {@link #INTERVAL}. */
    static HostFollower start(HttpTransport transport, String host, int port, PrintWriter err) {
        HostFollower follower =
                new HostFollower(transport, host, port, InetAddress::getAllByName, err);
        follower.scheduler =
                Executors.newSingleThreadScheduledExecutor(
                        r -> Thread.ofPlatform().daemon().name("ib-host-follower").unstarted(r));
        follower.scheduler.scheduleWithFixedDelay(
                follower::check, INTERVAL.toMillis(), INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        return follower;
    }

    /** Resolves the host once and applies a changed set. */
    void check() {
        InetAddress[] found;
        try {
            found = resolver.resolve(host);
        } catch (UnknownHostException | RuntimeException e) {
            return;
        }
        if (found == null || found.length == 0) {
            return;
        }
        List<InetSocketAddress> addresses =
                Arrays.stream(found)
                        .map(a -> new InetSocketAddress(a, port))
                        .sorted(Comparator.comparing(a -> a.getAddress().getHostAddress()))
                        .distinct()
                        .toList();
        AddressChange change = transport.spreadOver(addresses);
        if (change != null) {
            synchronized (err) {
                err.println(
                        "--balance addresses: "
                                + TerminalText.oneLine(host)
                                + " now resolves to "
                                + transport.activeAddresses()
                                + " (joined "
                                + change.joined()
                                + ", left "
                                + change.left()
                                + ")");
                err.flush();
            }
        }
    }

    @Override
    public void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
    }
}
