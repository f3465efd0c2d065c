package io.inferencebench.runner.cli;

import io.inferencebench.runner.metrics.ServerMetricsFlags;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Every flag of one run, a picocli mixin ({@code @Mixin RunFlags flags}) of {@code run} and {@code
 * search}: the sections of a BenchmarkRun spec ({@link TargetOptions}, {@link WorkloadOptions},
 * {@link LoadOptions}, {@link SloOptions}) over {@code --config}, {@link OutputOptions}, the
 * server-metric flags and the prefix-cache reset. Declared once, so a search's probes take exactly
 * the flags a run takes.
 */
public final class RunFlags {

    @Mixin TargetOptions target = new TargetOptions();

    @Mixin WorkloadOptions workload = new WorkloadOptions();

    @Mixin LoadOptions load = new LoadOptions();

    @Mixin SloOptions slo = new SloOptions();

    @Mixin OutputOptions output = new OutputOptions();

    @Option(
            names = "--config",
            description =
                    "YAML with the target/workload/load/slo sections of a BenchmarkRun spec (or a"
                            + " whole BenchmarkRun).")
    Path config;

    @Mixin ServerMetricsFlags serverMetrics = new ServerMetricsFlags();

    @Mixin PrefixCacheOptions prefixCache = new PrefixCacheOptions();

    /** The plan of these flags over {@code --config}. */
    CommandLinePlan resolve(PrintWriter err) throws IOException {
        return resolve(load, err);
    }

    /**
     * The plan of these flags over {@code --config}, with {@code load} in place of the load flags.
     */
    CommandLinePlan resolve(LoadOptions load, PrintWriter err) throws IOException {
        return CommandLinePlan.resolve(config, target, workload, load, slo, err);
    }
}
