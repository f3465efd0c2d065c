package io.inferencebench.runner.cli;

import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.RequestRate;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.engine.LoadEngine;
import io.inferencebench.runner.engine.StageObserver;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.engine.StageRecorder;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Progress on stderr: a redrawn bar on a terminal, a plain line every few seconds otherwise (logs,
 * CI), or nothing. Reads the engine's live counters from its own thread.
 */
final class Progress implements StageObserver, AutoCloseable {

    enum Mode {
        BAR,
        LINES,
        NONE
    }

    private final Mode mode;
    private final PrintWriter err;
    private final int stages;

    /** Requests per session of a conversation workload; 0 for independent prompts. */
    private final int turns;

    private final ScheduledExecutorService ticker;
    private volatile LoadEngine.Live live;

    private Progress(Mode mode, PrintWriter err, int stages, int turns) {
        this.mode = mode;
        this.err = err;
        this.stages = stages;
        this.turns = turns;
        if (mode == Mode.NONE) {
            ticker = null;
        } else {
            ticker =
                    Executors.newSingleThreadScheduledExecutor(
                            r -> Thread.ofPlatform().daemon().name("ib-progress").unstarted(r));
            long period = mode == Mode.BAR ? 250 : 5000;
            ticker.scheduleAtFixedRate(this::tick, period, period, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * @param turns requests per session of a conversation workload, whose stages count sessions; 0
     *     for independent prompts
     */
    static Progress create(String flag, PrintWriter err, int stages, int turns) {
        return new Progress(mode(flag), err, stages, turns);
    }

    static Mode mode(String flag) {
        return switch (flag.toLowerCase(Locale.ROOT)) {
            case "auto" -> isTerminal() ? Mode.BAR : Mode.LINES;
            case "bar" -> Mode.BAR;
            case "lines" -> Mode.LINES;
            case "none" -> Mode.NONE;
            default ->
                    throw new Main.UsageError(
                            "--progress: '" + flag + "' is not one of auto, bar, lines, none");
        };
    }

    /** Set when the CLI writes to streams of the caller's choosing (tests), never a terminal. */
    static volatile boolean errRedirected;

    /**
     * Whether stderr, where the bar is drawn, is a terminal. System.console() answers for stdin and
     * stdout, so `run ... > results.txt` in a terminal would lose the bar and `run ... 2> log`
     * would fill the log with redraws; Linux names the terminal behind fd 2 in /proc.
     */
    static boolean isTerminal() {
        if (errRedirected) {
            return false;
        }
        try {
            String target =
                    java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/2"))
                            .toString();
            return target.startsWith("/dev/pts/")
                    || target.startsWith("/dev/tty")
                    || target.equals("/dev/console");
        } catch (java.io.IOException | UnsupportedOperationException | SecurityException e) {
            // No /proc (not Linux): the console's answer is the best there is.
            java.io.Console console = System.console();
            if (console == null) {
                return false;
            }
            try {
                return (Boolean) java.io.Console.class.getMethod("isTerminal").invoke(console);
            } catch (ReflectiveOperationException r) {
                return true;
            }
        }
    }

    @Override
    public void onStageStart(StagePlan plan, StageRecorder recorder, LoadEngine.Live l) {
        live = l;
        synchronized (err) {
            err.printf(
                    Locale.ROOT,
                    "stage %d/%d: %s%n",
                    plan.index() + 1,
                    stages,
                    describe(plan, turns));
            err.flush();
        }
    }

    private void tick() {
        LoadEngine.Live l = live;
        if (l == null) {
            return;
        }
        StagePlan plan = l.plan;
        double elapsed = (System.nanoTime() - l.startNanos) / 1e9;
        long done = l.recorder.finished();
        double fraction;
        String total;
        if (plan.numPrompts() > 0) {
            // A conversation stage counts sessions; its requests are their turns.
            long requests = plan.numPrompts() * Math.max(1, turns);
            fraction = (double) done / requests;
            total = Long.toString(requests);
        } else {
            fraction = Math.min(1.0, elapsed / (plan.duration().toNanos() / 1e9));
            total = "?";
        }
        String counts =
                String.format(
                        Locale.ROOT,
                        "%d/%s done  ok %d  failed %d  in flight %d  %.1fs",
                        done,
                        total,
                        l.recorder.completed(),
                        l.recorder.failed(),
                        l.inFlight(),
                        elapsed);
        synchronized (err) {
            if (mode == Mode.BAR) {
                int width = 30;
                int filled = (int) Math.round(Math.min(1.0, fraction) * width);
                err.print(
                        "\r["
                                + "#".repeat(filled)
                                + ".".repeat(width - filled)
                                + "] "
                                + counts
                                + "   ");
            } else {
                err.printf(Locale.ROOT, "stage %d/%d: %s%n", plan.index() + 1, stages, counts);
            }
            err.flush();
        }
    }

    /** Called after the stage's result is complete. */
    void stageDone(StagePlan plan, StageResult r, Map<String, ErrorSampler.Sample> firstErrors) {
        live = null;
        synchronized (err) {
            if (mode == Mode.BAR) {
                err.print("\r" + " ".repeat(100) + "\r");
            }
            if (mode != Mode.NONE || r.failed > 0) {
                err.printf(
                        Locale.ROOT,
                        "stage %d/%d done: %d ok, %d failed in %.2fs, achieved %s%n",
                        plan.index() + 1,
                        stages,
                        r.completed,
                        r.failed,
                        LpgProfileWriter.benchmarkTimeSeconds(r),
                        LpgProfileWriter.ratesMeaningful(r)
                                ? String.format(
                                        Locale.ROOT, "%.2f req/s", LpgProfileWriter.achievedRate(r))
                                : "rate n/a (fewer than "
                                        + LpgProfileWriter.MIN_REQUESTS_FOR_RATES
                                        + " requests)");
            }
            firstErrors.forEach(
                    (cls, sample) -> {
                        // The server's own words: never raw on the terminal.
                        String shown = TerminalText.oneLine(sample.message());
                        err.printf(
                                "  %s x%d, first: %s%n",
                                cls,
                                r.errorsByClass.getOrDefault(cls, 0L),
                                shown.length() > 300 ? shown.substring(0, 300) + "…" : shown);
                        if (sample.hint() != null) {
                            err.printf("  %s%n", sample.hint());
                        }
                    });
            err.flush();
        }
    }

    static String describe(StagePlan plan) {
        return describe(plan, 0);
    }

    /**
     * The stage in words; {@code turns} > 0 for a conversation stage, whose concurrency and count
     * are sessions.
     */
    static String describe(StagePlan plan, int turns) {
        StringBuilder sb = new StringBuilder();
        if (plan.closedLoop() && turns > 0) {
            sb.append(plan.concurrency()).append(" sessions at once");
        } else if (turns > 0) {
            sb.append(RequestRate.pythonString(plan.requestRate())).append(" sessions/s");
        } else if (plan.closedLoop()) {
            sb.append("concurrency ").append(plan.concurrency());
        } else if (plan.replayed()) {
            sb.append("trace replay x")
                    .append(RequestRate.pythonString(plan.replay().timeScale()))
                    .append(" (mean ")
                    .append(RequestRate.pythonString(plan.requestRate()))
                    .append(" req/s)");
        } else if (plan.ramped()) {
            sb.append(plan.rampUp().strategy().wireName())
                    .append(" ramp ")
                    .append(RequestRate.pythonString(plan.rampUp().startRate()))
                    .append(" -> ")
                    .append(RequestRate.pythonString(plan.rampUp().endRate()))
                    .append(" req/s");
        } else {
            sb.append("rate ")
                    .append(RequestRate.pythonString(plan.requestRate()))
                    .append(" req/s");
        }
        if (!plan.closedLoop()) {
            if (!Double.isInfinite(plan.requestRate()) && !plan.replayed()) {
                sb.append(' ').append(plan.arrival().name().toLowerCase(Locale.ROOT));
                if (plan.burstiness() != 1.0) {
                    sb.append(" (burstiness ").append(plan.burstiness()).append(')');
                }
            }
            if (plan.maxConcurrency() != null) {
                sb.append(", max concurrency ").append(plan.maxConcurrency());
            }
        }
        if (plan.numPrompts() > 0 && turns > 0) {
            sb.append(", ")
                    .append(plan.numPrompts())
                    .append(" sessions of ")
                    .append(turns)
                    .append(" turns");
        } else if (plan.numPrompts() > 0) {
            sb.append(", ").append(plan.numPrompts()).append(" prompts");
        }
        if (plan.duration() != null) {
            sb.append(", up to ").append(plan.duration().toMillis() / 1000.0).append(" s");
        }
        return sb.toString();
    }

    @Override
    public void close() {
        if (ticker != null) {
            ticker.shutdownNow();
        }
    }
}
