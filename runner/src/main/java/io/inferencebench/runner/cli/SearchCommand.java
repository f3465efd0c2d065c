package io.inferencebench.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.profile.search.CapacitySearch;
import io.inferencebench.profile.search.LoadDelivery;
import io.inferencebench.profile.search.ProbeResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code search}: the highest request rate that meets the SLO. Each probe is one {@code run} stage
 * at one rate, run in-process with the {@code run} flags given here (target, workload, ...), so a
 * probe measures exactly what {@code run} measures and writes the same profile.
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
                    + " --help') and applies to every probe. Writes each probe's LPG profile and"
                    + " capacity.json into --result-dir.",
            "Exit codes: 0 a passing rate was found, 1 --min-rate already fails (or nothing could be"
                    + " measured), 2 bad flags, 130 interrupted."
        })
public final class SearchCommand implements Callable<Integer> {

    /** Name of the search's result file in the result directory. */
    public static final String CAPACITY_FILE = "capacity.json";

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
            names = "--goodput",
            arity = "1..*",
            required = true,
            description =
                    "The SLO a probe must meet, as for run: e.g. ttft:500 tpot:50 e2el:10000 (ms).")
    List<String> goodput;

    @Option(
            names = "--slo-min-attainment",
            description =
                    "Share of a probe's requests that must meet every SLO for its rate to pass"
                            + " (default ${DEFAULT-VALUE}).",
            defaultValue = "0.95")
    double sloMinAttainment;

    @Option(
            names = "--arrival",
            description = "poisson, gamma or constant, for every probe (default ${DEFAULT-VALUE}).",
            defaultValue = "poisson")
    String arrival;

    @Option(
            names = "--num-prompts",
            description = "Requests per probe (run's default without --duration).")
    Integer numPrompts;

    @Option(names = "--duration", description = "Length of each probe, e.g. 30s.")
    String duration;

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

    @Option(
            names = "--result-dir",
            description =
                    "Directory for the probes' profiles and capacity.json (default ${DEFAULT-VALUE}).",
            defaultValue = "results")
    Path resultDir;

    @Unmatched List<String> runFlags = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        reclaimSwallowedFlags();
        CapacitySearch.Settings settings;
        try {
            settings =
                    new CapacitySearch.Settings(
                            minRate,
                            maxRate,
                            precision,
                            sloMinAttainment,
                            CapacitySearch.Settings.DEFAULT_GROWTH,
                            confirmations,
                            maxProbes);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(flagOf(e.getMessage()) + ": " + e.getMessage());
        }
        for (String flag : runFlags) {
            for (String owned : List.of("--request-rate", "--concurrency")) {
                if (flag.equals(owned) || flag.startsWith(owned + "=")) {
                    throw new Main.UsageError(
                            owned
                                    + ": search chooses the rates itself; give --min-rate and --max-rate");
                }
            }
            if (flag.startsWith("-") && !flag.startsWith("--")) {
                throw new Main.UsageError(
                        "unknown flag '" + flag + "'; see 'search --help' and 'run --help'");
            }
        }
        Duration pauseValue = pauseDuration();
        boolean randomArrivals = !arrival.equalsIgnoreCase("constant");
        ResultFiles.prepare(resultDir);
        Path dir = resultDir.toAbsolutePath().normalize();
        ObjectNode slo = slo();
        List<ObjectNode> probeNodes = new ArrayList<>();
        int[] probeCount = {0};
        int[] runExit = {0};
        CapacitySearch.Probe probe =
                rate -> {
                    if (probeCount[0] > 0 && !pauseValue.isZero()) {
                        Thread.sleep(pauseValue.toMillis());
                    }
                    Set<Path> before = jsonFiles(dir);
                    StringWriter runOut = new StringWriter();
                    int code =
                            Main.execute(
                                    new PrintWriter(runOut, true),
                                    err,
                                    runArgs(rate, dir, probeCount[0] == 0).toArray(String[]::new));
                    probeCount[0]++;
                    if (code == Main.EXIT_USAGE
                            || code == Interrupts.EXIT_INTERRUPTED
                            || code == Main.EXIT_JVM_ERROR) {
                        runExit[0] = code;
                        throw new ProbeStopped(code);
                    }
                    Set<Path> written = jsonFiles(dir);
                    written.removeAll(before);
                    if (written.size() != 1) {
                        throw new IllegalStateException(
                                "the probe at "
                                        + CapacitySearch.fmt(rate)
                                        + " req/s wrote no profile (exit "
                                        + code
                                        + "); see the errors above");
                    }
                    Path profile = written.iterator().next();
                    JsonNode metrics =
                            ProfileInputs.read("probe", profile).document().path("metrics");
                    String shortfall = LoadDelivery.shortfall(metrics, randomArrivals);
                    long completed = metrics.path("completed").asLong(0);
                    long failures = metrics.path("failures").asLong(0);
                    ProbeResult result =
                            new ProbeResult(
                                    rate,
                                    metrics.has("achieved_rate")
                                            ? metrics.path("achieved_rate").asDouble()
                                            : null,
                                    metrics.path("goodput_requests").asLong(0),
                                    completed + failures,
                                    shortfall == null,
                                    profile.getFileName().toString());
                    if (shortfall != null) {
                        err.println(
                                "probe at "
                                        + CapacitySearch.fmt(rate)
                                        + " req/s: load not delivered ("
                                        + shortfall
                                        + "): neither pass nor fail");
                    }
                    return result;
                };
        CapacitySearch.Result result;
        try {
            result =
                    CapacitySearch.run(
                            settings,
                            probe,
                            p -> {
                                probeNodes.add(probeNode(p));
                                printProbe(out, probeNodes.size(), p);
                                writeCapacity(dir, inProgress(slo, probeNodes));
                            });
        } catch (ProbeStopped stopped) {
            out.flush();
            if (stopped.code == Main.EXIT_USAGE) {
                return Main.EXIT_USAGE;
            }
            if (stopped.code == Main.EXIT_JVM_ERROR) {
                // The probe said what failed; the probes before it are kept.
                err.println(
                        "search stopped: the runner failed (above); "
                                + probeNodes.size()
                                + " probe(s) in "
                                + dir.resolve(CAPACITY_FILE));
                return Main.EXIT_JVM_ERROR;
            }
            err.println(
                    "interrupted: "
                            + probeNodes.size()
                            + " probe(s) in "
                            + dir.resolve(CAPACITY_FILE));
            return Interrupts.EXIT_INTERRUPTED;
        }
        ObjectNode capacity = capacity(result, slo, probeNodes);
        writeCapacity(dir, capacity);
        out.println(result.message());
        out.printf(
                Locale.ROOT,
                "max_request_rate %s  passing %s  failing %s  (precision %.3g, %d probes)%n",
                rateText(result.maxRequestRate()),
                rateText(result.passingRate()),
                rateText(result.failingRate()),
                precision,
                result.probes().size());
        out.println("capacity: " + dir.resolve(CAPACITY_FILE));
        out.flush();
        return result.passingRate() != null ? 0 : Main.EXIT_RESULTS_FAILED;
    }

    /**
     * {@code --goodput} takes values up to the next flag it knows, so the run flags right after it
     * (unknown to this command) arrive as its values: hand them back to the run flags.
     */
    private void reclaimSwallowedFlags() {
        for (int i = 0; i < goodput.size(); i++) {
            if (goodput.get(i).startsWith("-")) {
                List<String> swallowed = new ArrayList<>(goodput.subList(i, goodput.size()));
                goodput = new ArrayList<>(goodput.subList(0, i));
                swallowed.addAll(runFlags);
                runFlags = swallowed;
                break;
            }
        }
        if (goodput.isEmpty()) {
            throw new Main.UsageError("--goodput: needs at least one SLO, e.g. --goodput ttft:500");
        }
    }

    private List<String> runArgs(double rate, Path dir, boolean firstProbe) {
        List<String> args = new ArrayList<>();
        args.add("run");
        args.addAll(runFlags);
        args.addAll(
                List.of("--request-rate", Double.toString(rate), "--result-dir", dir.toString()));
        args.addAll(List.of("--arrival", arrival));
        args.add("--goodput");
        args.addAll(goodput);
        args.addAll(List.of("--slo-min-attainment", Double.toString(sloMinAttainment)));
        if (numPrompts != null) {
            args.addAll(List.of("--num-prompts", numPrompts.toString()));
        }
        if (duration != null) {
            args.addAll(List.of("--duration", duration));
        }
        if (!runFlags.contains("--progress")) {
            args.addAll(List.of("--progress", "none"));
        }
        // the client is warm after the first probe (same JVM)
        if (!firstProbe && !runFlags.contains("--no-self-warmup")) {
            args.add("--no-self-warmup");
        }
        return args;
    }

    private Duration pauseDuration() {
        try {
            return pause.equals("0") ? Duration.ZERO : Durations.parse(pause);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(
                    "--pause: '" + pause + "' is not a duration; use e.g. 0, 500ms, 5s");
        }
    }

    /** The SLO as capacity.json records it; run checks the values again when the probe starts. */
    private ObjectNode slo() {
        ObjectNode slo = ProfileInputs.JSON.createObjectNode();
        for (String item : goodput) {
            String[] kv = item.split(":", 2);
            double value;
            try {
                value = kv.length == 2 ? Double.parseDouble(kv[1]) : Double.NaN;
            } catch (NumberFormatException e) {
                value = Double.NaN;
            }
            String name = kv[0].toLowerCase(Locale.ROOT);
            if (!(value > 0)
                    || Double.isInfinite(value)
                    || !List.of("ttft", "tpot", "e2el").contains(name)) {
                throw new Main.UsageError(
                        "--goodput: '"
                                + item
                                + "' must be NAME:MILLISECONDS with NAME one of ttft, tpot, e2el and a"
                                + " positive number");
            }
            slo.put(name + "_ms", value);
        }
        slo.put("min_attainment", sloMinAttainment);
        return slo;
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

    private static ObjectNode probeNode(CapacitySearch.Probed p) {
        ObjectNode node = ProfileInputs.JSON.createObjectNode();
        ProbeResult r = p.result();
        node.put("request_rate", r.requestRate());
        node.put("achieved_rate", r.achievedRate());
        node.put("slo_attainment", r.sloAttainment());
        node.put("passed", p.passed());
        node.put("load_delivered", r.loadDelivered());
        node.put("profile", r.profile());
        return node;
    }

    private static void printProbe(PrintWriter out, int n, CapacitySearch.Probed p) {
        ProbeResult r = p.result();
        out.printf(
                Locale.ROOT,
                "probe %d: %s req/s  achieved %s  SLO attainment %.1f %%  %s  (%s)%n",
                n,
                CapacitySearch.fmt(r.requestRate()),
                r.achievedRate() == null ? "-" : CapacitySearch.fmt(r.achievedRate()),
                100 * r.sloAttainment(),
                p.passed() == null ? "load not delivered" : p.passed() ? "pass" : "fail",
                r.profile());
        out.flush();
    }

    private ObjectNode inProgress(ObjectNode slo, List<ObjectNode> probes) {
        ObjectNode node = base(slo);
        node.putNull("max_request_rate");
        node.putNull("passing_rate");
        node.putNull("failing_rate");
        node.put("outcome", "in_progress");
        node.putArray("probes").addAll(probes);
        return node;
    }

    private ObjectNode capacity(
            CapacitySearch.Result result, ObjectNode slo, List<ObjectNode> probes) {
        ObjectNode node = base(slo);
        node.put("max_request_rate", result.maxRequestRate());
        node.put("passing_rate", result.passingRate());
        node.put("failing_rate", result.failingRate());
        node.put("undelivered_rate", result.undeliveredRate());
        node.put("outcome", result.outcome().name().toLowerCase(Locale.ROOT));
        node.put("message", result.message());
        ArrayNode list = node.putArray("probes");
        list.addAll(probes);
        return node;
    }

    private ObjectNode base(ObjectNode slo) {
        ObjectNode node = ProfileInputs.JSON.createObjectNode();
        node.set("slo", slo);
        node.put("precision", precision);
        node.put("min_rate", minRate);
        node.put("max_rate", maxRate);
        node.put("arrival", arrival.toLowerCase(Locale.ROOT));
        return node;
    }

    private static void writeCapacity(Path dir, ObjectNode capacity) {
        try {
            Path target = dir.resolve(CAPACITY_FILE);
            Path tmp = dir.resolve(CAPACITY_FILE + ".tmp");
            Files.writeString(
                    tmp,
                    ProfileInputs.JSON
                                    .copy()
                                    .enable(SerializationFeature.INDENT_OUTPUT)
                                    .writeValueAsString(capacity)
                            + "\n");
            Files.move(
                    tmp,
                    target,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot write " + dir.resolve(CAPACITY_FILE) + ": " + Main.describe(e), e);
        }
    }

    private static Set<Path> jsonFiles(Path dir) throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            Set<Path> out = new HashSet<>();
            list.filter(p -> p.getFileName().toString().endsWith(".json"))
                    .filter(p -> !p.getFileName().toString().equals(CAPACITY_FILE))
                    .forEach(out::add);
            return out;
        }
    }

    private static String rateText(Double rate) {
        return rate == null ? "null" : CapacitySearch.fmt(rate);
    }

    /** A probe's run ended the search: bad flags (exit 2) or an interrupt (exit 130). */
    private static final class ProbeStopped extends RuntimeException {
        final int code;

        ProbeStopped(int code) {
            super("run exited " + code, null, false, false);
            this.code = code;
        }
    }
}
