package io.inferencebench.runner.cli;

import com.fasterxml.jackson.databind.SerializationFeature;
import io.inferencebench.profile.compare.Comparison;
import io.inferencebench.profile.compare.ComparisonOptions;
import io.inferencebench.profile.compare.LabeledProfile;
import io.inferencebench.profile.compare.Metric;
import io.inferencebench.profile.compare.MetricComparison;
import io.inferencebench.profile.compare.ProfileComparison;
import io.inferencebench.profile.compare.StageComparison;
import io.inferencebench.profile.lpg.Repeats;
import io.inferencebench.profile.lpg.RequestRate;
import io.inferencebench.profile.text.TerminalText;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code compare}: is the candidate run a regression of the baseline run? */
@Command(
        name = "compare",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Compares two runs stage by stage (TTFT, ITL, TPOT, E2E latency p50/p90/p99, output"
                    + " throughput, goodput) and prints one verdict: regression, improvement, no"
                    + " significant change, or inconclusive.",
            "A change counts only when it is beyond the relative threshold AND beyond the runs'"
                    + " sampling noise (Mann-Whitney U and quantile tests over the profiles'"
                    + " histograms). p90/p99 changes are shown but decide the verdict only with"
                    + " --tails: a busy client machine moves a run's tail, and its repeats'"
                    + " alike.",
            "Runs with repeats (run --repeats N) are judged across them: each repeat's value of"
                    + " each statistic, Welch's t-test (tails shown; with --tails they decide"
                    + " too). Where that noise could"
                    + " hide a change of the threshold, the verdict is inconclusive and says what"
                    + " change the repeats can detect.",
            "Exit codes: 0 no regression (inconclusive included), 1 regression, 2 bad input."
        })
public final class CompareCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Parameters(
            arity = "2..*",
            paramLabel = "BASELINE... CANDIDATE",
            description = {
                "The reference run, then the run to judge, each an LPG profile file (either"
                        + " dialect), another tool's result file (vllm bench serve --save-result"
                        + " JSON, AIPerf's profile_export_aiperf.json, inference-perf's stage"
                        + " report or BR0.2, GuideLLM's benchmarks.json) or a result directory.",
                "Several reference runs of one unchanged target (e.g. the last nights) are"
                        + " pooled: each run's stages count as repeats of the same stages, so"
                        + " the spread between them is the noise floor the candidate is judged"
                        + " by."
            })
    List<Path> runs = new ArrayList<>();

    @Option(
            names = "--threshold",
            paramLabel = "[METRIC=]PERCENT",
            description = {
                "Relative change a metric must exceed to count, in percent (default 5%%)."
                        + " Repeatable: '--threshold 3%%' sets every metric,"
                        + " '--threshold ttft=10%%' one of: ttft, itl, tpot, e2el,"
                        + " output_throughput, goodput."
            })
    List<String> thresholds = new ArrayList<>();

    @Option(
            names = "--alpha",
            description =
                    "Significance level of the noise tests, two-sided (default ${DEFAULT-VALUE}).",
            defaultValue = "0.05")
    double alpha;

    @Option(
            names = "--tails",
            description =
                    "Let significant p90/p99 changes decide the verdict too (default: shown, not"
                            + " counted; compare runs from a quiet client machine when you set"
                            + " it).")
    boolean tails;

    @Option(
            names = {"--output", "-o"},
            paramLabel = "FILE",
            description = "Also write the comparison as JSON to FILE.")
    Path output;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        ComparisonOptions options = options(thresholds, alpha).withTailsInVerdict(tails);
        List<ProfileInputs.Input> inputs = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            inputs.add(new ProfileInputs.Input(role(i), runs.get(i)));
        }
        if (output != null) {
            ProfileInputs.refuseOutputOverInput("--output", output, inputs);
        }
        List<LabeledProfile> base = new ArrayList<>();
        List<LabeledProfile> cand = List.of();
        for (ProfileInputs.Input input : inputs) {
            List<LabeledProfile> profiles = ProfileInputs.profiles(input.what(), input.path());
            checkOneRun(input.what(), input.path(), profiles);
            boolean candidateRun = input == inputs.getLast();
            if (candidateRun && inputs.size() > 2) {
                out.println(
                        "baseline:  "
                                + (inputs.size() - 1)
                                + " runs pooled: each run's stages are repeats of the same"
                                + " stages");
            }
            out.println(
                    (candidateRun ? "candidate: " : "baseline:  ")
                            + TerminalText.oneLine(describe(input.path(), profiles)));
            if (candidateRun) {
                cand = profiles;
            } else {
                base.addAll(profiles);
            }
        }
        Comparison comparison;
        try {
            comparison = ProfileComparison.compareLabeled(base, cand, options);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(e.getMessage());
        }
        print(out, comparison);
        if (output != null) {
            write(output, comparison);
            out.println("comparison: " + output);
        }
        out.flush();
        return comparison.regressions().isEmpty() ? 0 : Main.EXIT_RESULTS_FAILED;
    }

    /**
     * How the {@code i}th path is named in messages: BASELINE (BASELINE 2, ... when there are
     * several), CANDIDATE for the last.
     */
    private String role(int i) {
        if (i == runs.size() - 1) {
            return "CANDIDATE";
        }
        return runs.size() > 2 ? "BASELINE " + (i + 1) : "BASELINE";
    }

    /** What a run is: its path, the tool that wrote it and the LPG dialect of a profile. */
    static String describe(Path path, List<LabeledProfile> stages) {
        com.fasterxml.jackson.databind.JsonNode source = stages.get(0).document().path("source");
        String tool = source.path("tool").asText("");
        String version = source.path("version").asText("");
        String dialect = source.path("lpg_dialect").asText("");
        StringBuilder b = new StringBuilder(path.toString());
        if (!tool.isEmpty()) {
            b.append(" (").append(tool);
            if (!version.isEmpty()) {
                b.append(' ').append(version);
            }
            if (!dialect.isEmpty()) {
                b.append(", LPG dialect ").append(dialect);
            }
            b.append(')');
        }
        b.append(": ").append(stages.size()).append(stages.size() == 1 ? " stage" : " stages");
        return b.toString();
    }

    /** Parses the {@code --threshold} and {@code --alpha} flags. */
    static ComparisonOptions options(List<String> thresholds, double alpha) {
        if (!(alpha > 0 && alpha < 1)) {
            throw new Main.UsageError("--alpha: must be within (0, 1), got " + alpha);
        }
        ComparisonOptions options = ComparisonOptions.defaults().withAlpha(alpha);
        for (String t : thresholds) {
            int eq = t.indexOf('=');
            Metric metric = null;
            if (eq >= 0) {
                try {
                    metric = Metric.byKey(t.substring(0, eq));
                } catch (IllegalArgumentException e) {
                    throw new Main.UsageError("--threshold: " + e.getMessage());
                }
            }
            double value = percent(t.substring(eq + 1), t);
            options =
                    metric == null
                            ? options.withDefaultThreshold(value)
                            : options.withThreshold(metric, value);
        }
        return options;
    }

    private static double percent(String text, String flag) {
        String number = text.strip();
        if (number.endsWith("%")) {
            number = number.substring(0, number.length() - 1).strip();
        }
        double value;
        try {
            value = Double.parseDouble(number);
        } catch (NumberFormatException e) {
            value = Double.NaN;
        }
        if (!(value >= 0) || Double.isInfinite(value)) {
            throw new Main.UsageError(
                    "--threshold: '"
                            + flag
                            + "' must be [METRIC=]PERCENT with a percentage >= 0, e.g. 5% or"
                            + " ttft=10%");
        }
        return value / 100.0;
    }

    /**
     * Two profiles of the same load (rate; for closed-loop stages, all at an unbounded rate, the
     * concurrency) or the same stage in one directory are two runs mixed up, not one sweep.
     */
    private static void checkOneRun(String what, Path path, List<LabeledProfile> profiles) {
        if (!Files.isDirectory(path)) {
            return;
        }
        for (int i = 0; i < profiles.size(); i++) {
            for (int j = i + 1; j < profiles.size(); j++) {
                String a = load(profiles.get(i));
                String b = load(profiles.get(j));
                int stageA =
                        profiles.get(i).document().path("metrics").path("stage_index").asInt(-1);
                int stageB =
                        profiles.get(j).document().path("metrics").path("stage_index").asInt(-2);
                String repeatA = repeat(profiles.get(i));
                String repeatB = repeat(profiles.get(j));
                // repeats of one stage share its load; they say which repeat each is
                boolean repeats = repeatA != null && repeatB != null && !repeatA.equals(repeatB);
                if ((a.equals(b) && !repeats) || stageA == stageB) {
                    throw new Main.UsageError(
                            what
                                    + ": "
                                    + path
                                    + " holds more than one run ("
                                    + profiles.get(i).label()
                                    + " and "
                                    + profiles.get(j).label()
                                    + " are both "
                                    + (a.equals(b) ? a : "stage " + (stageA + 1))
                                    + "); give a directory of one run or the profile files");
                }
            }
        }
    }

    /** Which repeat a profile is ({@code dimensions.repeat}, e.g. 2/3), or {@code null}. */
    private static String repeat(LabeledProfile profile) {
        com.fasterxml.jackson.databind.JsonNode repeat =
                profile.document().path("dimensions").path(Repeats.DIMENSION);
        return repeat.isTextual() ? repeat.asText() : null;
    }

    /** The load a profile was measured at, as stages are paired: its rate, or concurrency. */
    private static String load(LabeledProfile profile) {
        com.fasterxml.jackson.databind.JsonNode m = profile.document().path("metrics");
        String rate = m.path("request_rate").asText();
        com.fasterxml.jackson.databind.JsonNode concurrency = m.path("max_concurrency");
        boolean unbounded = rate.equals(RequestRate.UNBOUNDED) || rate.equals("Infinity");
        return unbounded && concurrency.isIntegralNumber()
                ? "concurrency " + concurrency.asInt()
                : "rate " + rate;
    }

    static void print(PrintWriter out, Comparison c) {
        for (StageComparison s : c.stages()) {
            out.printf(
                    Locale.ROOT,
                    "stage %d: %s  (baseline %s, candidate %s)",
                    s.stage(),
                    stageKey(s),
                    s.baselineProfile(),
                    s.candidateProfile());
            if (!s.comparable()) {
                out.printf(Locale.ROOT, ": not comparable: %s%n%n", s.notComparable());
                continue;
            }
            out.println();
            List<List<String>> rows = new ArrayList<>();
            rows.add(List.of("metric", "baseline", "candidate", "change", "significant", "test"));
            for (MetricComparison m : s.metrics()) {
                rows.add(
                        List.of(
                                m.name().replace('_', ' ') + " (" + m.metric().unit() + ")",
                                m.baseline() == null ? ABSENT : number(m.baseline()),
                                m.candidate() == null ? ABSENT : number(m.candidate()),
                                change(m.change()),
                                m.significant()
                                        ? "yes, " + (m.regressed() ? "worse" : "better")
                                        : m.inconclusive() ? "can't tell" : "no",
                                test(m)));
            }
            table(out, rows);
            out.println();
        }
        for (String note : c.notes()) {
            out.println("note: " + note);
        }
        List<MetricComparison> worse = new ArrayList<>();
        List<String> where = new ArrayList<>();
        for (StageComparison s : c.stages()) {
            for (MetricComparison m : s.metrics()) {
                if (c.verdict() == io.inferencebench.profile.compare.Verdict.REGRESSION
                        ? m.regressed()
                        : m.improved()) {
                    worse.add(m);
                    where.add("stage " + s.stage() + " " + m.name() + " " + change(m.change()));
                }
            }
        }
        String detail =
                switch (c.verdict()) {
                    case REGRESSION ->
                            " (" + worse.size() + " significantly worse: " + join(where) + ")";
                    case IMPROVEMENT ->
                            " (" + worse.size() + " significantly better: " + join(where) + ")";
                    case NO_SIGNIFICANT_CHANGE, INCONCLUSIVE -> "";
                };
        out.println("verdict: " + c.verdict().text() + detail);
    }

    /** How a pair of stages is named: its rate, or a closed-loop stage's concurrency. */
    static String stageKey(StageComparison s) {
        if (Double.isNaN(s.baselineRate()) || Double.isNaN(s.candidateRate())) {
            return Double.isNaN(s.baselineRate()) && Double.isNaN(s.candidateRate())
                    ? "rate not given"
                    : "rate "
                            + RequestRate.pythonString(
                                    Double.isNaN(s.baselineRate())
                                            ? s.candidateRate()
                                            : s.baselineRate())
                            + " req/s (one side gives none)";
        }
        return s.concurrency() != null && RequestRate.isUnbounded(s.baselineRate())
                ? "concurrency " + s.concurrency()
                : RequestRate.pythonString(s.baselineRate()) + " req/s";
    }

    private static String join(List<String> items) {
        int shown = Math.min(items.size(), 6);
        String s = String.join(", ", items.subList(0, shown));
        return items.size() > shown ? s + ", ..." : s;
    }

    /** How a value a side lacks is shown: never as 0. */
    static final String ABSENT = "absent";

    private static String test(MetricComparison m) {
        if (m.absent() != null) {
            return "not compared: " + TerminalText.oneLine(m.absent());
        }
        if (m.pValue() != null && m.detectable() != null) {
            return String.format(
                    Locale.ROOT,
                    "%s p=%.2g, detects ±%.1f %%",
                    m.test(),
                    m.pValue(),
                    100 * m.detectable());
        }
        if (m.pValue() != null) {
            return m.test() + " p=" + String.format(Locale.ROOT, "%.2g", m.pValue());
        }
        if (m.beyondNoise() != null) {
            return m.test() + (m.beyondNoise() ? " (beyond noise)" : " (within noise)");
        }
        return m.test();
    }

    static String number(Double v) {
        if (v == null) {
            return "-";
        }
        double a = Math.abs(v);
        return String.format(Locale.ROOT, a >= 100 ? "%.1f" : a >= 1 ? "%.2f" : "%.4f", v);
    }

    static String change(Double c) {
        return c == null ? "-" : String.format(Locale.ROOT, "%+.1f %%", 100 * c);
    }

    static void table(PrintWriter out, List<List<String>> rows) {
        int[] widths = new int[rows.get(0).size()];
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder("  ");
            for (int i = 0; i < row.size(); i++) {
                String cell = row.get(i);
                boolean left = i == 0 || i >= 4;
                String pad = " ".repeat(widths[i] - cell.length());
                line.append(left ? cell + pad : pad + cell);
                if (i < row.size() - 1) {
                    line.append("  ");
                }
            }
            out.println(line.toString().stripTrailing());
        }
    }

    private static void write(Path file, Comparison c) {
        try {
            AtomicFiles.replace(
                    file,
                    ProfileInputs.JSON
                                    .copy()
                                    .enable(SerializationFeature.INDENT_OUTPUT)
                                    .writeValueAsString(c.toJson())
                            + "\n");
        } catch (IOException e) {
            throw new Main.UsageError(
                    "--output: cannot write " + file + ": " + Main.describe(e) + " (not written)");
        }
    }
}
