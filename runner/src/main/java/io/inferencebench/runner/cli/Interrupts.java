package io.inferencebench.runner.cli;

import java.io.PrintWriter;
import java.util.concurrent.atomic.AtomicInteger;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Ctrl-C (SIGINT) and SIGTERM during {@code run}: the first one stops the run gracefully (the
 * engine is cancelled, the running stage returns its partial result, which is written and marked as
 * partial); a second one ends the process at once with exit code 130.
 *
 * <p>Why a signal handler rather than a shutdown hook: a hook runs while the JVM is already
 * exiting, so the main thread could not finish writing profiles and choose the exit code.
 */
final class Interrupts implements AutoCloseable {

    /** Exit code of a run stopped by a signal (128 + SIGINT, as shells report it). */
    static final int EXIT_INTERRUPTED = 130;

    private final AtomicInteger received = new AtomicInteger();
    private final SignalHandler previousInt;
    private final SignalHandler previousTerm;

    private Interrupts(Runnable onFirst, PrintWriter err, String notice) {
        SignalHandler handler =
                signal -> {
                    if (received.incrementAndGet() == 1) {
                        err.println();
                        err.println(notice);
                        err.flush();
                        onFirst.run();
                    } else {
                        Runtime.getRuntime().halt(EXIT_INTERRUPTED);
                    }
                };
        previousInt = install("INT", handler);
        previousTerm = install("TERM", handler);
    }

    /** Installs the handlers until {@link #close()}; {@code onFirst} runs on the first signal. */
    static Interrupts install(Runnable onFirst, PrintWriter err) {
        return install(
                onFirst,
                err,
                "interrupted: stopping the current stage; finished stages are kept and the current"
                        + " one is written as partial (interrupt again to quit at once)");
    }

    /** {@link #install(Runnable, PrintWriter)} printing {@code notice} on the first signal. */
    static Interrupts install(Runnable onFirst, PrintWriter err, String notice) {
        return new Interrupts(onFirst, err, notice);
    }

    /** Whether a signal arrived. */
    boolean interrupted() {
        return received.get() > 0;
    }

    private static SignalHandler install(String name, SignalHandler handler) {
        try {
            return Signal.handle(new Signal(name), handler);
        } catch (IllegalArgumentException e) {
            // The signal is reserved here (e.g. the JVM was started with -Xrs): keep the default.
            return null;
        }
    }

    @Override
    public void close() {
        if (previousInt != null) {
            Signal.handle(new Signal("INT"), previousInt);
        }
        if (previousTerm != null) {
            Signal.handle(new Signal("TERM"), previousTerm);
        }
    }
}
