package io.inferencebench.runner.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.crds.v1alpha1.DatasetSpec;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.profile.lpg.LoadVerdict;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.search.CapacitySearch;
import io.inferencebench.profile.search.ProbeResult;
import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.plan.RunPlan;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code search}: the highest request rate that meets the SLO. Each probe is one {@code run} stage
 * at one rate, run in this process on one {@link CommandLineSession} for the whole search (the
 * prompts, connections and warm-up set up once), with the {@code run} flags ({@link RunFlags}), so
 * a probe measures exactly what {@code run} measures and writes the same profile.
 */
@Command(
        name = "search",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Finds the highest request rate whose SLO attainment reaches --slo-min-attainment:"
                    + " probes grow geometrically from --min-rate, then the bracket is bisected"
                    + " until it is within --precision; both edges are probed again.",
            "Every other flag is a 'run' flag (target, workload, --max-concurrency, ...; see 'run"
                    + " --help') and applies to every probe; --goodput is required,"
                    + " --num-prompts or --duration is the size of each probe. Writes each probe's"
                    + " LPG profile and capacity.json into --result-dir.",
            "Each probe is judged as run judges LoadDelivered: on the schedule it drew (random"
                    + " arrivals draw more or fewer requests than the nominal rate), whether every"
                    + " request due was sent, the achieved rate within 5 %% of the drawn schedule's,"
                    + " p99 schedule lag <= 100 ms and the runner's CPU. A probe whose client fell"
                    + " behind is neither pass nor fail ('load not delivered'); one too short to"
                    + " judge ('indeterminate': it fell short by less than 2 ms over its whole"
                    + " schedule) runs again 4 and then 16 times larger, after which the search"
                    + " stops with outcome indeterminate. Failed requests count as missing the"
                    + " SLO and are named. The capacity is never above the rate its passing probes"
                    + " achieved.",
            "Exit codes: 0 a passing rate was found, 1 --min-rate already fails, nothing could be"
                    + " measured or the outcome is indeterminate, 2 bad flags, 3 the runner itself"
                    + " failed (the probes before are kept), 130 interrupted (capacity.json then"
                    + " has outcome interrupted and the bracket so far)."
        })
public final class SearchCommand implements Callable<Integer> {

    /** Name of the search's result file in the result directory. */
    public static final String CAPACITY_FILE = "capacity.json";

    /** The SLO attainment a probe must reach when {@code --slo-min-attainment} is not given. */
    private static final double DEFAULT_MIN_ATTAINMENT = 0.95;

    /** Discards the warnings of a probe's plan: the session's plan printed them once. */
    private static final PrintWriter QUIET = new PrintWriter(Writer.nullWriter());

    @Spec CommandSpec spec;

    @Option(names = "--min-rate", required = true, description = "First rate probed, req/s.")
    double minRate;

    @Option(names = "--max-rate", required = true, description = "Highest rate probed, req/s.")
    double maxRate;

    @Option(
            names = "--precision",
            description =
                    "Relative width of the final bracket, (failing - passing) / passing (default"
                            + " ${DEFAULT-VALUE}).",
            defaultValue = "0.05")
    double precision;

    @Option(
            names = "--confirm",
            description =
                    "Extra probes of each edge of the final bracket (default ${DEFAULT-VALUE}).",
            defaultValue = "1")
    int confirmations;

    @Option(
            names = "--max-probes",
            description = "Stop after this many probes (default ${DEFAULT-VALUE}).",
            defaultValue = "40")
    int maxProbes;

    @Option(
            names = "--pause",
            description = "Pause between probes, e.g. 5s (default ${DEFAULT-VALUE}).",
            defaultValue = "5s")
    String pause;

    @Mixin RunFlags flags = new RunFlags();

    /** The client all probes share, set up for the first; {@code null} before it. */
    private CommandLineSession session;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (flags.slo.goodput == null || flags.slo.goodput.isEmpty()) {
            throw new Main.UsageError("--goodput: needs at least one SLO, e.g. --goodput ttft:500");
        }
        double attainment =
                flags.slo.sloMinAttainment != null
                        ? flags.slo.sloMinAttainment
                        : DEFAULT_MIN_ATTAINMENT;
        CapacitySearch.Settings settings;
        try {
            settings =
                    new CapacitySearch.Settings(
                            minRate,
                            maxRate,
                            precision,
                            attainment,
                            CapacitySearch.Settings.DEFAULT_GROWTH,
                            confirmations,
                            maxProbes);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(flagOf(e.getMessage()) + ": " + e.getMessage());
        }
        ConfigFile config = flags.config == null ? null : ConfigFile.read(flags.config);
        DatasetSpec configDataset =
                config == null || flags.workload.datasetName != null || config.workload == null
                        ? null
                        : config.workload.getDataset();
        if (flags.load.repeats != null
                || config != null
                        && config.load != null
                        && config.load.getRepeats() != null
                        && config.load.getRepeats() != 1) {
            throw new Main.UsageError(
                    (flags.load.repeats != null ? "--repeats" : "--config load.repeats")
                            + ": search decides its probes as it goes and grows a probe too small"
                            + " to judge; repeat the stages of run instead");
        }
        if (flags.workload.replaysTrace()
                || configDataset != null
                        && configDataset.getType()
                                == io.inferencebench.crds.v1alpha1.DatasetType.TRACE) {
            throw new Main.UsageError(
                    (flags.workload.replaysTrace()
                                    ? "--dataset-name"
                                    : "--config " + flags.config + ": workload.dataset.type")
                            + ": trace sets its own arrival times, and search chooses the"
                            + " rates; replay a trace with run (--trace-time-scale sets its pace)");
        }
        if (flags.workload.multiTurn()
                || configDataset != null && configDataset.getConversation() != null) {
            throw new Main.UsageError(
                    (flags.workload.multiTurn()
                                    ? "--dataset-name"
                                    : "--config "
                                            + flags.config
                                            + ": workload.dataset.conversation")
                            + ": conversations run a number of sessions at once, and search"
                            + " chooses request rates; sweep sessions with run --sessions 1,2,4");
        }
        String stageFlag = flags.load.stageFlag();
        if (stageFlag != null) {
            throw new Main.UsageError(
                    stageFlag
                            + ": search chooses the rates itself; give --min-rate and --max-rate");
        }
        Duration pauseValue = pauseDuration();
        ObjectNode slo = CapacityFile.slo(flags.slo.goodput, attainment);
        // Every probe is judged at the search's attainment, whatever --config says.
        flags.slo.sloMinAttainment = attainment;
        String arrival = flags.load.probe(minRate, 1).arrival;
        CommandLineSession.checkFlags(flags);
        CommandLinePlan first = flags.resolve(flags.load.probe(minRate, 1), err);
        Path dir = flags.output.resultDir.toAbsolutePath().normalize();
        CapacityFile capacity =
                new CapacityFile(dir.resolve(CAPACITY_FILE), settings, slo, arrival);
        List<ProbeResult> finished = new ArrayList<>();
        try {
            CapacitySearch.Probe probe =
                    (rate, size) -> {
                        if (!finished.isEmpty() && !pauseValue.isZero()) {
                            pause(pauseValue, session);
                        }
                        CommandLineSession shared = session(first, err);
                        if (shared.cancelled()) {
                            throw new ProbeStopped(Interrupts.EXIT_INTERRUPTED);
                        }
                        ProbeResult result = runProbe(shared, rate, size, dir, err);
                        finished.add(result);
                        return result;
                    };
            CapacitySearch.Result result;
            try {
                result =
                        CapacitySearch.run(
                                settings,
                                probe,
                                p -> {
                                    capacity.probed(p);
                                    printProbe(out, capacity.probes(), p);
                                });
            } catch (ProbeStopped stopped) {
                out.flush();
                CapacitySearch.Result sofar = CapacitySearch.interrupted(settings, finished);
                capacity.finish(sofar);
                if (stopped.code == Main.EXIT_JVM_ERROR) {
                    // The probe said what failed; the probes before it are kept.
                    err.println(
                            "search stopped: the runner failed (above); "
                                    + capacity.probes()
                                    + " probe(s) in "
                                    + capacity.path());
                    err.flush();
                    return Main.EXIT_JVM_ERROR;
                }
                err.println(sofar.message());
                err.println(
                        "interrupted: " + capacity.probes() + " probe(s) in " + capacity.path());
                err.flush();
                return Interrupts.EXIT_INTERRUPTED;
            }
            capacity.finish(result);
            out.println(result.message());
            if (result.confidence() != null && !result.undecided()) {
                // an undecided answer says so in its message already
                out.println(result.confidence());
            }
            out.printf(
                    Locale.ROOT,
                    "max_request_rate %s  passing %s  failing %s  outcome %s  (precision %.3g, %d"
                            + " probes)%n",
                    rateText(result.maxRequestRate()),
                    rateText(result.passingRate()),
                    rateText(result.failingRate()),
                    CapacityFile.outcomeName(result.outcome()),
                    precision,
                    result.probes().size());
            out.println("capacity: " + capacity.path());
            out.flush();
            return result.passingRate() != null
                            && result.outcome() != CapacitySearch.Outcome.INDETERMINATE
                    ? 0
                    : Main.EXIT_RESULTS_FAILED;
        } finally {
            if (session != null) {
                session.close();
            }
        }
    }

    /**
     * The session every probe runs on, set up before the first (as that probe's {@code run} would
     * be): a set-up the JVM fails stops the search like a probe it fails, with the probes so far.
     */
    private CommandLineSession session(CommandLinePlan first, PrintWriter err) throws Exception {
        if (session == null) {
            try {
                session =
                        CommandLineSession.open(
                                flags, first, progressFlag(), INTERRUPT_NOTICE, err);
            } catch (Main.JvmFailure e) {
                err.println("error: " + e.getMessage());
                throw new ProbeStopped(Main.EXIT_JVM_ERROR);
            }
        }
        return session;
    }

    /** What the first Ctrl-C prints: the probe in flight is dropped, the bracket so far kept. */
    private static final String INTERRUPT_NOTICE =
            "interrupted: stopping the search; the probe in flight is dropped and capacity.json"
                    + " keeps the bracket so far (interrupt again to quit at once)";

    /** The probes print no progress unless {@code --progress} asks for it. */
    private String progressFlag() {
        return spec.commandLine().getParseResult().hasMatchedOption("--progress")
                ? flags.output.progress()
                : "none";
    }

    /**
     * Runs one probe on the session, as {@code run} would run one stage at {@code rate}, and judges
     * it from the stage it measured and the profile it wrote (never by looking at what appeared in
     * the directory: other runs may write there too).
     */
    private ProbeResult runProbe(
            CommandLineSession session, double rate, int size, Path dir, PrintWriter err)
            throws Exception {
        // The probe's flags pass the checks a run's do (a schedule that fits, ...): a usage
        // error ends the search with exit 2.
        RunPlan plan = flags.resolve(flags.load.probe(rate, size), QUIET).plan();
        StageLoop.Outcome outcome =
                session.runStages(plan.stages(), plan.cooldown(), Instant.now());
        if (outcome.failure() instanceof StageLoop.JvmErrorStop stop) {
            err.println("error: " + stop.failure(outcome.files()).getMessage());
            throw new ProbeStopped(Main.EXIT_JVM_ERROR);
        }
        if (session.cancelled()) {
            throw new ProbeStopped(Interrupts.EXIT_INTERRUPTED);
        }
        if (outcome.failure() != null) {
            err.println("error: " + TerminalText.multiLine(Main.describe(outcome.failure())));
        }
        if (outcome.results().isEmpty()) {
            throw new IllegalStateException(
                    "the probe at "
                            + CapacitySearch.fmt(rate)
                            + " req/s measured nothing; see the errors above");
        }
        StageResult stage = outcome.results().get(0);
        ResultFiles.Written file = outcome.files().isEmpty() ? null : outcome.files().get(0);
        String profile = null;
        if (file != null && file.ok()) {
            profile = dir.relativize(file.path().toAbsolutePath().normalize()).toString();
        } else {
            err.println(
                    "probe at "
                            + CapacitySearch.fmt(rate)
                            + " req/s: its profile was not written"
                            + (file == null ? "" : " (" + file.failure() + ")")
                            + "; the search goes on with its figures");
        }
        LoadVerdict load =
                LoadVerdict.judge(
                        LoadVerdict.Figures.of(stage),
                        plan.maxFailureRatio(),
                        Summary.FAILURE_LIMIT_NAME);
        Double achieved = LoadVerdict.Figures.of(stage).achievedRate();
        return new ProbeResult(
                rate,
                size,
                achieved,
                stage.goodputRequests,
                stage.completed + stage.failed,
                stage.failed,
                stage.failed > 0 ? stage.failureClassesText() : null,
                load,
                profile);
    }

    /** Sleeps between probes; an interrupt ends the sleep (and the search). */
    private static void pause(Duration pause, CommandLineSession session)
            throws InterruptedException {
        long end = System.nanoTime() + pause.toNanos();
        long left;
        while (!(session != null && session.cancelled()) && (left = end - System.nanoTime()) > 0) {
            Thread.sleep(Math.max(1, Math.min(100, left / 1_000_000)));
        }
    }

    private Duration pauseDuration() {
        try {
            return pause.equals("0") ? Duration.ZERO : Durations.parse(pause);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(
                    "--pause: '" + pause + "' is not a duration; use e.g. 0, 500ms, 5s");
        }
    }

    private static String flagOf(String message) {
        if (message.startsWith("min rate")) {
            return "--min-rate";
        }
        if (message.startsWith("max rate")) {
            return "--max-rate";
        }
        if (message.startsWith("precision")) {
            return "--precision";
        }
        if (message.startsWith("min attainment")) {
            return "--slo-min-attainment";
        }
        if (message.startsWith("confirmations")) {
            return "--confirm";
        }
        return "--max-probes";
    }

    private static void printProbe(PrintWriter out, int n, CapacitySearch.Probed p) {
        ProbeResult r = p.result();
        out.printf(
                Locale.ROOT,
                "probe %d: %s req/s%s  achieved %s  %s  %s  (%s)%n",
                n,
                CapacitySearch.fmt(r.requestRate()),
                r.size() > 1 ? " x" + r.size() : "",
                r.achievedRate() == null ? "-" : CapacitySearch.fmt(r.achievedRate()),
                r.describe(),
                p.verdict(),
                r.profile() == null ? "profile not written" : r.profile());
        out.flush();
    }

    private static String rateText(Double rate) {
        return rate == null ? "null" : CapacitySearch.fmt(rate);
    }

    /** A probe ended the search: the runner failed (exit 3) or an interrupt (exit 130). */
    private static final class ProbeStopped extends RuntimeException {
        final int code;

        ProbeStopped(int code) {
            super("run exited " + code, null, false, false);
            this.code = code;
        }
    }
}
