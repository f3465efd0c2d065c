package io.inferencebench.runner.http;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * Where a transport's connections go besides the base URL's host, and how long each is kept.
 *
 * <p>A Service's proxy (kube-proxy) and most L4 balancers pick a backend per <em>connection</em>; a
 * keep-alive pool that reuses its most recently freed connection first sends a low-rate run's every
 * request down the same one or two connections, hence to one or two replicas. Two remedies, usable
 * together:
 *
 * <ul>
 *   <li>{@code addresses}: connect to these addresses (the replicas themselves, or every address
 *       the host resolves to) and send each request to the next one in turn, round-robin over the
 *       whole transport, so the counts per address differ by at most one. The Host header, the TLS
 *       name and the request path stay the base URL's.
 *   <li>{@code requestsPerConnection}: close a connection after this many requests and reuse idle
 *       connections oldest first, so that a balancer that picks per connection sees many of them
 *       and picks often.
 * </ul>
 *
 * @param addresses the addresses to spread over (empty: the base URL's host and port only)
 * @param requestsPerConnection requests a connection carries before it is closed; 0 for no bound
 */
public record Spread(List<InetSocketAddress> addresses, int requestsPerConnection) {

    /** The base URL's host, connections kept as long as the server keeps them. */
    public static final Spread NONE = new Spread(List.of(), 0);

    public Spread {
        addresses = List.copyOf(addresses);
        if (requestsPerConnection < 0) {
            throw new IllegalArgumentException("requests per connection must be 0 or more");
        }
    }

    /** Whether requests go to a list of addresses rather than the base URL's host. */
    public boolean spreads() {
        return !addresses.isEmpty();
    }

    /** How an address is named in the profile: {@code ip:port}, IPv6 in brackets. */
    public static String name(InetSocketAddress address) {
        String host =
                address.getAddress() != null
                        ? address.getAddress().getHostAddress()
                        : address.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
    }
}
