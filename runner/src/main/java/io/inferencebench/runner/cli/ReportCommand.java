package io.inferencebench.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.profile.compare.Comparison;
import io.inferencebench.profile.compare.ComparisonOptions;
import io.inferencebench.profile.compare.LabeledProfile;
import io.inferencebench.profile.compare.NotComparableException;
import io.inferencebench.profile.compare.ProfileComparison;
import io.inferencebench.profile.text.TerminalText;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code report}: one self-contained HTML page of one or more runs. */
@Command(
        name = "report",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Renders runs (LPG profile files of either dialect, result directories, a search's"
                    + " capacity.json or result directory, or other tools' result files: vllm bench"
                    + " serve --save-result JSON, AIPerf's profile_export_aiperf.json, inference-perf's"
                    + " stage report or BR0.2, GuideLLM's benchmarks.json) into one self-contained"
                    + " HTML file: latency against"
                    + " achieved rate (TTFT, ITL, E2E p50/p99), per-stage tables with server"
                    + " metrics beside client metrics, the capacity bracket and SLO line of a"
                    + " search, and the comparison of two runs (the second against the first).",
            "The page loads nothing from anywhere: inline CSS and SVG, no script."
        })
public final class ReportCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Parameters(
            arity = "1..*",
            paramLabel = "RUN",
            description =
                    "A profile file, another tool's result file, a result directory or a"
                            + " capacity.json.")
    List<Path> inputs;

    @Option(
            names = {"--output", "-o"},
            required = true,
            paramLabel = "FILE.html",
            description = "The HTML file to write.")
    Path output;

    @Option(
            names = "--threshold",
            paramLabel = "[METRIC=]PERCENT",
            description = "As for compare, for the comparison view of two runs (default 5%%).")
    List<String> thresholds = new ArrayList<>();

    @Override
    public Integer call() {
        List<HtmlReport.Run> runs = new ArrayList<>();
        List<ProfileInputs.Input> read = new ArrayList<>();
        for (int i = 0; i < inputs.size(); i++) {
            String what = "RUN " + (i + 1);
            runs.add(load(what, inputs.get(i)));
            read.add(new ProfileInputs.Input(what, inputs.get(i)));
            if (runs.getLast().capacity() != null && !Files.isDirectory(inputs.get(i))) {
                // A capacity.json's probe profiles are read from its directory.
                read.add(
                        new ProfileInputs.Input(
                                what, inputs.get(i).toAbsolutePath().normalize().getParent()));
            }
        }
        ProfileInputs.refuseOutputOverInput("--output", output, read);
        Comparison comparison = null;
        String notCompared = null;
        if (runs.size() == 2) {
            try {
                comparison =
                        ProfileComparison.compareLabeled(
                                labeled(runs.get(0)),
                                labeled(runs.get(1)),
                                CompareCommand.options(
                                        thresholds, ComparisonOptions.DEFAULT_ALPHA));
            } catch (NotComparableException e) {
                // The runs are still worth a page; the comparison section says why it is empty.
                notCompared = e.getMessage();
                spec.commandLine()
                        .getErr()
                        .println("warning: the two runs are not compared: " + notCompared);
            } catch (IllegalArgumentException e) {
                throw new Main.UsageError(e.getMessage());
            }
        } else if (!thresholds.isEmpty()) {
            throw new Main.UsageError("--threshold: applies to the comparison of exactly two runs");
        }
        String html =
                HtmlReport.render(runs, comparison, notCompared, "generated " + Instant.now());
        try {
            AtomicFiles.replace(output, html);
        } catch (IOException e) {
            throw new Main.UsageError(
                    "--output: cannot write "
                            + output
                            + ": "
                            + Main.describe(e)
                            + " (not written)");
        }
        spec.commandLine().getOut().println("report: " + output);
        spec.commandLine().getOut().flush();
        return 0;
    }

    /**
     * The profile a probe of a capacity.json names, confined to the capacity.json's directory: a
     * relative path without {@code ..} that stays inside it after links are followed. A
     * capacity.json is input like any other (it may come from someone else); without the bound,
     * {@code "profile": "/etc/shadow"} would be read.
     */
    static Path probeProfile(String what, Path capacityFile, Path dir, int index, String name) {
        String field = what + ": " + capacityFile + " probes[" + index + "].profile";
        String shown = "'" + TerminalText.oneLine(name) + "'";
        if (name.isEmpty()) {
            throw new Main.UsageError(field + ": names no profile file");
        }
        Path relative;
        try {
            relative = Path.of(name);
        } catch (InvalidPathException e) {
            throw new Main.UsageError(field + ": " + shown + " is not a file name");
        }
        if (relative.isAbsolute() || relative.getRoot() != null) {
            throw new Main.UsageError(
                    field
                            + ": "
                            + shown
                            + " is an absolute path; probe profiles are named relative to the"
                            + " directory of the capacity.json ("
                            + dir
                            + ")");
        }
        for (Path part : relative) {
            if (part.toString().equals("..")) {
                throw new Main.UsageError(
                        field
                                + ": "
                                + shown
                                + " leaves the directory of the capacity.json ("
                                + dir
                                + ")");
            }
        }
        Path file = dir.resolve(relative).normalize();
        if (!file.startsWith(dir) || !Files.isRegularFile(file)) {
            throw new Main.UsageError(field + ": " + shown + " is not a file in " + dir);
        }
        try {
            if (!file.toRealPath().startsWith(dir.toRealPath())) {
                throw new Main.UsageError(
                        field + ": " + shown + " is a link that leads outside " + dir);
            }
        } catch (java.io.IOException e) {
            throw new Main.UsageError(field + ": " + shown + " cannot be read");
        }
        return file;
    }

    private static List<LabeledProfile> labeled(HtmlReport.Run run) {
        List<LabeledProfile> out = new ArrayList<>();
        for (int i = 0; i < run.profiles().size(); i++) {
            out.add(new LabeledProfile(run.profileNames().get(i), run.profiles().get(i)));
        }
        return out;
    }

    private static HtmlReport.Run load(String what, Path path) {
        Path capacityFile = null;
        if (Files.isDirectory(path)
                && Files.isRegularFile(path.resolve(SearchCommand.CAPACITY_FILE))) {
            capacityFile = path.resolve(SearchCommand.CAPACITY_FILE);
        } else if (Files.isRegularFile(path)) {
            JsonNode doc = ProfileInputs.read(what, path).document();
            if (ProfileInputs.isCapacity(doc)) {
                capacityFile = path;
            }
        }
        String label =
                path.toAbsolutePath().normalize().getFileName() == null
                        ? path.toString()
                        : path.toAbsolutePath().normalize().getFileName().toString();
        if (capacityFile != null) {
            JsonNode capacity = ProfileInputs.read(what, capacityFile).document();
            if (!ProfileInputs.isCapacity(capacity)) {
                throw new Main.UsageError(
                        what + ": " + capacityFile + " is not a capacity.json of search");
            }
            Path dir = capacityFile.toAbsolutePath().normalize().getParent();
            List<JsonNode> profiles = new ArrayList<>();
            List<String> names = new ArrayList<>();
            int index = 0;
            for (JsonNode probe : capacity.path("probes")) {
                String name = probe.path("profile").asText("");
                Path file = probeProfile(what, capacityFile, dir, index++, name);
                profiles.add(ProfileInputs.read(what, file).document());
                names.add(name);
            }
            if (label.equals(SearchCommand.CAPACITY_FILE)) {
                label = dir.getFileName().toString();
            }
            return new HtmlReport.Run(label, profiles, names, capacity);
        }
        List<LabeledProfile> found = ProfileInputs.profiles(what, path);
        return new HtmlReport.Run(
                label,
                found.stream().map(LabeledProfile::document).toList(),
                found.stream().map(LabeledProfile::label).toList(),
                null);
    }
}
