package io.inferencebench.runner.engine;

/**
 * When the dispatcher was blocked waiting for a max-concurrency slot. A request's slot wait is all
 * blocked time between its due instant and its dispatch, including time spent queued behind earlier
 * requests that were waiting for slots (FIFO), not only its own wait. Due instants never decrease,
 * so intervals ending before the current due instant are dropped.
 */
final class BlockedIntervals {
    private final java.util.ArrayDeque<long[]> intervals = new java.util.ArrayDeque<>();
    private long total;

    void add(long start, long end) {
        intervals.addLast(new long[] {start, end, total});
        total += end - start;
    }

    long blockedSince(long due) {
        while (!intervals.isEmpty() && intervals.peekFirst()[1] <= due) {
            intervals.removeFirst();
        }
        if (intervals.isEmpty()) {
            return 0;
        }
        long[] first = intervals.peekFirst();
        return total - first[2] - Math.max(0, due - first[0]);
    }
}
