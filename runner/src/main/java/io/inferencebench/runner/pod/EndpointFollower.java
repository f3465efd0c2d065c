package io.inferencebench.runner.pod;

import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.http.AddressChange;
import io.inferencebench.runner.http.HttpTransport;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * With {@code spec.target.balance: endpoints}, follows the Service's ready endpoints as the
 * operator publishes them in the control ConfigMap ({@link RunnerWorkOrder#ENDPOINTS_KEY}): a
 * replica that joins gets its turns from the next request on, one that leaves gets no new ones (the
 * transport lets its requests in flight finish). An empty list (every replica gone for a moment)
 * keeps the last one: there is nowhere better to send.
 */
final class EndpointFollower {

    private final HttpTransport transport;
    private final int podIndex;
    private final Logging log;
    private String applied;

    EndpointFollower(HttpTransport transport, int podIndex, Logging log) {
        this.transport = transport;
        this.podIndex = podIndex;
        this.log = log;
    }

    /** What writes a line to the pod's log. */
    @FunctionalInterface
    interface Logging {
        void log(String format, Object... args);
    }

    /** Applies the control data's endpoint list when it changed. Called on the watch's thread. */
    synchronized void follow(Map<String, String> control) {
        String listed = control.get(RunnerWorkOrder.ENDPOINTS_KEY);
        if (listed == null || listed.isBlank() || listed.equals(applied)) {
            return;
        }
        applied = listed;
        List<String> entries =
                Arrays.stream(listed.split(","))
                        .map(String::strip)
                        .filter(e -> !e.isEmpty())
                        .toList();
        List<InetSocketAddress> addresses;
        try {
            addresses = PodRun.addresses(entries, podIndex);
        } catch (IllegalArgumentException e) {
            log.log(
                    "control %s: %s; keeping %s",
                    RunnerWorkOrder.ENDPOINTS_KEY,
                    TerminalText.oneLine(e.getMessage()),
                    transport.activeAddresses());
            return;
        }
        AddressChange change = transport.spreadOver(addresses);
        if (change != null) {
            log.log(
                    "endpoints changed: joined %s, left %s; now sending to %s",
                    change.joined(), change.left(), transport.activeAddresses());
        }
    }
}
