package io.inferencebench.runner.engine;

import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.http.AddressChange;
import io.inferencebench.runner.http.HttpTransport;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one stage sent to each address of a spreading transport, and which addresses joined or left
 * during it (a replica scaled up, deleted, or restarted): the transport's counts and changes taken
 * before the stage and read after it.
 */
final class AddressShares {

    private final HttpTransport transport;
    private final Map<String, Long> countsAtStart;
    private final List<String> activeAtStart;
    private final long redirectedAtStart;
    private final int changesAtStart;

    private AddressShares(HttpTransport transport) {
        this.transport = transport;
        this.countsAtStart = transport.requestsPerAddress();
        this.activeAtStart = transport.activeAddresses();
        this.redirectedAtStart = transport.redirectedRequests();
        this.changesAtStart = transport.addressChanges().size();
    }

    /** The transport's counts now, before a stage. */
    static AddressShares mark(HttpTransport transport) {
        return new AddressShares(transport);
    }

    /**
     * Puts the stage's sends per address, the addresses that joined or left (seconds after {@code
     * stageStartNanos}, 0 for a change between the mark and the start) and the requests moved after
     * a refused connection into {@code result}; nothing when the transport sends to one host.
     */
    void into(StageResult result, long stageStartNanos) {
        Map<String, Long> now = transport.requestsPerAddress();
        if (now.isEmpty()) {
            return;
        }
        List<AddressChange> all = transport.addressChanges();
        List<AddressChange> during = all.subList(Math.min(changesAtStart, all.size()), all.size());
        Set<String> there = new LinkedHashSet<>(activeAtStart);
        there.addAll(transport.activeAddresses());
        Map<String, Double> joined = new LinkedHashMap<>();
        Map<String, Double> left = new LinkedHashMap<>();
        for (AddressChange change : during) {
            double at = Math.max(0, change.nanos() - stageStartNanos) / 1e9;
            change.joined().forEach(a -> joined.putIfAbsent(a, at));
            change.left().forEach(a -> left.putIfAbsent(a, at));
            there.addAll(change.joined());
            there.addAll(change.left());
        }
        Map<String, Long> sent = new LinkedHashMap<>();
        now.forEach(
                (address, count) -> {
                    if (there.contains(address)) {
                        sent.put(address, count - countsAtStart.getOrDefault(address, 0L));
                    }
                });
        result.requestsPerAddress = sent;
        result.addressesJoinedAt = joined.isEmpty() ? null : joined;
        result.addressesLeftAt = left.isEmpty() ? null : left;
        result.requestsRedirected = transport.redirectedRequests() - redirectedAtStart;
    }
}
