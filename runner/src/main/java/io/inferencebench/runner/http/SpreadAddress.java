package io.inferencebench.runner.http;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One address a transport sends to: its connection pool on each event loop, the requests started on
 * it (a counter kept by address name, so an address that leaves and comes back keeps counting on),
 * and until when it is passed over after a refused connection.
 */
final class SpreadAddress {

    /** {@code ip:port} as in profiles ({@link Spread#name}), or the base URL's host. */
    final String name;

    /** Loop {@code l}'s pool is {@code pools[l]}. */
    final ConnectionPool[] pools;

    /** Requests started on this address (shared with its earlier and later lives). */
    final AtomicLong started;

    /** System.nanoTime until which it is passed over; 0 when it takes its turns. */
    volatile long downUntil;

    SpreadAddress(String name, ConnectionPool[] pools, AtomicLong started) {
        this.name = name;
        this.pools = pools;
        this.started = started;
    }

    /** Whether it takes its turn at {@code now} (it has not just refused a connection). */
    boolean up(long now) {
        long until = downUntil;
        return until == 0 || until - now <= 0;
    }
}
