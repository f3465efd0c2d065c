package io.inferencebench.runner.cli;

import io.inferencebench.profile.lpg.LpgDialect;
import io.inferencebench.profile.output.OutputFormat;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Option;

/**
 * Where results go and how the client runs (result directory, live metrics, sample cap, network
 * threads, progress view), a picocli mixin ({@code @Mixin OutputOptions output}). Not part of a
 * BenchmarkRun spec: they change neither the requests nor the plan.
 */
public final class OutputOptions {

    @Option(
            names = "--result-dir",
            description =
                    "Directory for the LPG profiles (and Benchmark Reports) (default"
                            + " ${DEFAULT-VALUE}).",
            defaultValue = "results")
    Path resultDir;

    @Option(names = "--run-name", description = "Recorded in the profiles' dimensions.")
    String runName;

    @Option(
            names = "--lpg-dialect",
            paramLabel = "seed|final",
            description =
                    "LPG profile dialect: seed (throughput in requests/s, server-metric statistics"
                            + " as strings) or final (LPG's last code: throughput in output"
                            + " tokens/s, throughput_rps in requests/s, statistics as numbers);"
                            + " both carry every other key (default ${DEFAULT-VALUE}).",
            defaultValue = "seed")
    String lpgDialect;

    @Option(
            names = "--output-format",
            paramLabel = "FORMAT[,FORMAT]",
            split = ",",
            description =
                    "Files written per stage: lpg (the profile, always) and br0.2 (a Benchmark"
                            + " Report v0.2 beside it, <profile>.br0.2.yaml) (default"
                            + " ${DEFAULT-VALUE}).",
            defaultValue = "lpg")
    List<String> outputFormats;

    @Option(
            names = "--metrics-port",
            description = "Serve live Prometheus metrics on this port (0 = any free port).")
    Integer metricsPort;

    @Option(
            names = "--sample-cap",
            description =
                    "Exact samples kept per metric before switching to histograms (default ${DEFAULT-VALUE}).",
            defaultValue = "100000")
    int sampleCap;

    @Option(names = "--event-loops", description = "Network threads (default: min(2, cores)).")
    Integer eventLoops;

    @Option(
            names = "--max-connections",
            description = "Connection pool size per network thread (default ${DEFAULT-VALUE}).",
            defaultValue = "20000")
    int maxConnections;

    @Option(
            names = "--progress",
            description = "auto, bar, lines or none (default ${DEFAULT-VALUE}).",
            defaultValue = "auto")
    String progress;

    @Option(
            names = "--no-self-warmup",
            description =
                    "Skip warming the client against a local throw-away server before the first"
                            + " stage (about a second; nothing is sent to the target).")
    boolean noSelfWarmup;

    /** Checks the flags before anything is opened. */
    public void check() {
        lpgDialect();
        outputFormats();
        Progress.mode(progress);
        if (sampleCap < 0) {
            throw new Main.UsageError("--sample-cap: must be >= 0, got " + sampleCap);
        }
        if (maxConnections < 1) {
            throw new Main.UsageError("--max-connections: must be >= 1, got " + maxConnections);
        }
        if (eventLoops != null && eventLoops < 1) {
            throw new Main.UsageError("--event-loops: must be >= 1, got " + eventLoops);
        }
    }

    /** Network threads: {@code --event-loops}, else min(2, cores). */
    public int eventLoops() {
        return eventLoops != null
                ? eventLoops
                : Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
    }

    public Path resultDir() {
        return resultDir;
    }

    /** {@code --lpg-dialect}. */
    public LpgDialect lpgDialect() {
        try {
            return LpgDialect.parse(lpgDialect);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError("--lpg-dialect: " + e.getMessage());
        }
    }

    /** {@code --output-format}. */
    public Set<OutputFormat> outputFormats() {
        try {
            return OutputFormat.parse(outputFormats);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError("--output-format: " + e.getMessage());
        }
    }

    /** The result directory, checked writable, writing the chosen dialect and formats. */
    ResultFiles prepareResultFiles() {
        return ResultFiles.prepare(resultDir, lpgDialect(), outputFormats());
    }

    public String runName() {
        return runName;
    }

    public Integer metricsPort() {
        return metricsPort;
    }

    public int sampleCap() {
        return sampleCap;
    }

    public int maxConnections() {
        return maxConnections;
    }

    public String progress() {
        return progress;
    }

    public boolean selfWarmup() {
        return !noSelfWarmup;
    }
}
