package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The profile's sections on where a stage's load went and what the replicas did with it: the
 * requests sent per address and the addresses that joined or left ({@code requests_per_address},
 * {@code address_changes}, {@code address_balance}), each replica's served share ({@code
 * replica_balance}) and the prefix-cache reuse the servers counted ({@code prefix_cache}).
 */
final class ReplicaSections {

    private ReplicaSections() {}

    /**
     * The prefix-cache reuse the server counted: tokens hit and looked up, their ratio (absent when
     * nothing was looked up), and the same per replica.
     */
    static void putPrefixCache(ObjectNode metrics, PrefixCacheHits cache) {
        ObjectNode node = metrics.putObject("prefix_cache");
        putPrefixCacheCounts(node, cache);
        if (!cache.byReplica().isEmpty()) {
            ObjectNode byReplica = node.putObject("by_replica");
            cache.byReplica()
                    .forEach(
                            (replica, one) ->
                                    putPrefixCacheCounts(byReplica.putObject(replica), one));
        }
    }

    private static void putPrefixCacheCounts(ObjectNode node, PrefixCacheHits cache) {
        node.put("hits", cache.hits());
        node.put("queries", cache.queries());
        if (cache.hitRate() != null) {
            node.put("hit_rate", LpgProfileWriter.finite(cache.hitRate()));
        }
    }

    /** How evenly the replicas served the stage ({@link ReplicaBalance}). */
    static void putReplicaBalance(ObjectNode metrics, ReplicaBalance balance) {
        ObjectNode node = metrics.putObject("replica_balance");
        node.put("metric", balance.metric());
        ObjectNode served = node.putObject("served");
        balance.served().forEach(served::put);
        ObjectNode shares = node.putObject("shares");
        balance.shares()
                .forEach((replica, share) -> shares.put(replica, LpgProfileWriter.finite(share)));
        if (!balance.partial().isEmpty()) {
            ArrayNode partial = node.putArray("partial");
            balance.partial().forEach(partial::add);
        }
        if (balance.balanced() != null) {
            node.put("balanced", balance.balanced());
        }
        if (balance.reason() != null) {
            node.put("reason", balance.reason());
        }
    }

    /**
     * The requests sent to each address of a spread stage, the addresses that joined or left during
     * it, and how even the sends to those there throughout were: the busiest over the least busy
     * address (absent when one got none: the ratio has no value) and the coefficient of variation
     * of the counts. An address there for part of the stage is named under {@code partial} and not
     * in those figures.
     */
    static void putAddressShares(ObjectNode metrics, StageResult stage) {
        ObjectNode counts = metrics.putObject("requests_per_address");
        stage.requestsPerAddress.forEach(counts::put);
        if (stage.requestsRedirected != null) {
            metrics.put("requests_redirected", stage.requestsRedirected);
        }
        Map<String, Long> perAddress = new LinkedHashMap<>(stage.requestsPerAddress);
        List<String> partial = new ArrayList<>();
        if (stage.addressesJoinedAt != null || stage.addressesLeftAt != null) {
            ObjectNode changes = metrics.putObject("address_changes");
            putChanges(changes, "joined", stage.addressesJoinedAt, partial);
            putChanges(changes, "left", stage.addressesLeftAt, partial);
            partial.forEach(perAddress::remove);
        }
        if (perAddress.isEmpty()) {
            return;
        }
        long max = perAddress.values().stream().mapToLong(Long::longValue).max().orElse(0);
        long min = perAddress.values().stream().mapToLong(Long::longValue).min().orElse(0);
        double mean = perAddress.values().stream().mapToLong(Long::longValue).average().orElse(0);
        double squares = 0;
        for (long n : perAddress.values()) {
            squares += (n - mean) * (n - mean);
        }
        ObjectNode balance = metrics.putObject("address_balance");
        balance.put("addresses", perAddress.size());
        if (!partial.isEmpty()) {
            partial.forEach(balance.putArray("partial")::add);
        }
        balance.put("min_requests", min);
        balance.put("max_requests", max);
        if (min > 0) {
            balance.put("max_min_ratio", (double) max / min);
        }
        if (mean > 0) {
            balance.put("coefficient_of_variation", Math.sqrt(squares / perAddress.size()) / mean);
        }
    }

    /** {@code address: seconds after the stage start} under {@code key}, each address noted. */
    private static void putChanges(
            ObjectNode changes, String key, Map<String, Double> at, List<String> noted) {
        if (at == null) {
            return;
        }
        ObjectNode node = changes.putObject(key);
        at.forEach(
                (address, seconds) -> {
                    node.put(address, LpgProfileWriter.finite(seconds));
                    if (!noted.contains(address)) {
                        noted.add(address);
                    }
                });
    }
}
