package io.inferencebench.runner.http;

import java.util.List;

/**
 * The addresses a spreading transport sends to were replaced ({@link HttpTransport#spreadOver}):
 * those that joined, those that left.
 *
 * @param nanos System.nanoTime when the new list took effect
 * @param joined addresses ({@code ip:port}) that get turns from then on
 * @param left addresses that get no new requests from then on (those in flight finish)
 */
public record AddressChange(long nanos, List<String> joined, List<String> left) {

    public AddressChange {
        joined = List.copyOf(joined);
        left = List.copyOf(left);
    }
}
