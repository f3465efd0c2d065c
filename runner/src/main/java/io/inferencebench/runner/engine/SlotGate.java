package io.inferencebench.runner.engine;

import java.util.function.IntConsumer;

/**
 * Max-concurrency slots shared by the loops. A slot freed while loops wait goes to the waiting
 * request due first (ties: the lower loop), as one FIFO queue would.
 */
final class SlotGate {
    private int free;
    private final long[] waitingDue;
    private final IntConsumer grant;

    /**
     * @param slots requests allowed in flight
     * @param loops the event loops that ask for slots
     * @param grant hands a freed slot to the loop that waited for it (on that loop)
     */
    SlotGate(int slots, int loops, IntConsumer grant) {
        this.free = slots;
        this.grant = grant;
        this.waitingDue = new long[loops];
        java.util.Arrays.fill(waitingDue, Long.MIN_VALUE);
    }

    /** Takes a slot for {@code loop}'s request due at {@code due}, or queues the loop. */
    synchronized boolean acquire(int loop, long due) {
        // While any loop waits, no slot is free: release() hands it over at once.
        if (free > 0) {
            free--;
            return true;
        }
        waitingDue[loop] = due;
        return false;
    }

    /** Gives up {@code loop}'s place in the queue; false when a slot was granted first. */
    synchronized boolean withdraw(int loop) {
        if (waitingDue[loop] == Long.MIN_VALUE) {
            return false;
        }
        waitingDue[loop] = Long.MIN_VALUE;
        return true;
    }

    void release() {
        int grantee = -1;
        synchronized (this) {
            for (int loop = 0; loop < waitingDue.length; loop++) {
                if (waitingDue[loop] != Long.MIN_VALUE
                        && (grantee < 0 || waitingDue[loop] < waitingDue[grantee])) {
                    grantee = loop;
                }
            }
            if (grantee < 0) {
                free++;
                return;
            }
            waitingDue[grantee] = Long.MIN_VALUE;
        }
        grant.accept(grantee);
    }
}
