package io.inferencebench.runner.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Diagnostic: with {@code -Dinferencebench.lagTrace=PREFIX} every measured stage writes {@code
 * PREFIX-<stage>.tsv}, one line per request: due instant (nanoTime), event-loop wake-up minus due,
 * send minus due, connection obtained minus send, latency (all ns). It splits the schedule lag into
 * the loop timer's lateness and the time the loop spent before sending. Off by default; costs one
 * string append per request when on.
 */
final class LagTrace {

    private static final String PREFIX = System.getProperty("inferencebench.lagTrace");

    private final StringBuilder lines = new StringBuilder();

    private LagTrace() {}

    /** A trace for one stage, or null when tracing is off. */
    static LagTrace forStage() {
        return PREFIX == null ? null : new LagTrace();
    }

    void add(RequestExecution e) {
        lines.append(e.dueNanos)
                .append('\t')
                .append(e.dispatchedNanos - e.dueNanos)
                .append('\t')
                .append(e.sendNanos - e.dueNanos)
                .append('\t')
                .append(e.connectedNanos - e.sendNanos)
                .append('\t')
                .append(e.endNanos - e.sendNanos)
                .append('\n');
    }

    void write(int stageIndex) {
        try {
            Files.writeString(Path.of(PREFIX + "-" + stageIndex + ".tsv"), lines);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
