package io.inferencebench.runner.cli;

import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.engine.Slo;
import io.inferencebench.runner.metrics.ServerMetricsLine;
import io.inferencebench.runner.plan.RunPlan;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code run}: one benchmark (one or more stages) against one server. The flags are {@link
 * RunFlags} (a mixin per section of a BenchmarkRun spec, over {@code --config}); {@link
 * CommandLineSession} sets the client up, {@link StageLoop} runs the stages; this class prints the
 * summary and chooses the exit code.
 */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Runs load stages against a model server and writes one LPG profile per stage.",
            "Flags override the --config file (the target/workload/load/slo sections of a"
                    + " BenchmarkRun).",
            "LoadDelivered (the summary's load column) is judged on what the client controls: the"
                    + " schedule the stage drew (random arrivals draw more or fewer requests than"
                    + " the nominal rate; the drawn column), whether every request due was sent,"
                    + " the achieved rate within 5 %% of the drawn schedule's, p99 schedule lag <="
                    + " 100 ms, the runner's CPU and --max-failure-ratio. 'indeterminate': the"
                    + " stage fell short of its drawn schedule by less than 2 ms in all, too short"
                    + " to tell from timer jitter; a longer stage decides it."
        })
public final class RunCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    @Mixin RunFlags flags = new RunFlags();

    /** The plan of the parsed flags over {@code --config}, as {@link #call} runs it. */
    public CommandLinePlan resolvePlan(PrintWriter err) throws IOException {
        return flags.resolve(err);
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        CommandLineSession.checkFlags(flags);
        CommandLinePlan resolved = resolvePlan(err);
        try (CommandLineSession session =
                CommandLineSession.open(flags, resolved, flags.output.progress(), null, err)) {
            RunPlan plan = session.plan();
            StageLoop.Outcome outcome =
                    session.runStages(
                            plan.stages(), plan.cooldown(), session.started(), plan.repeats());
            session.endProgress();
            Slo slo = plan.slo();
            report(out, outcome, plan, session.collectsServerMetrics());
            if (outcome.failure() instanceof StageLoop.JvmErrorStop stop) {
                throw stop.failure(outcome.files());
            }
            if (outcome.failure() != null) {
                throw outcome.failure();
            }
            if (session.cancelled()) {
                err.printf(
                        "interrupted: %d of %d stage(s) finished%s%n",
                        outcome.results().stream().filter(r -> !r.partial).count(),
                        plan.stages().size(),
                        outcome.results().stream().anyMatch(r -> r.partial)
                                ? "; the last profile is partial"
                                : "");
                err.flush();
                return Interrupts.EXIT_INTERRUPTED;
            }
            int code =
                    Verdict.of(
                            outcome.results(),
                            slo,
                            plan.maxFailureRatio(),
                            flags.load.failureRatioFromFlag(),
                            err);
            if (outcome.files().stream().anyMatch(f -> !f.allWritten())) {
                code = Main.EXIT_RESULTS_FAILED;
            }
            return code;
        }
    }

    private static void report(
            PrintWriter out, StageLoop.Outcome outcome, RunPlan plan, boolean serverMetrics) {
        Summary.print(out, outcome.results(), plan.slo(), plan.maxFailureRatio());
        Summary.acrossRepeats(out, outcome.results(), plan.stages().size(), plan.repeats());
        if (serverMetrics) {
            for (int i = 0; i < outcome.results().size(); i++) {
                out.println(
                        ServerMetricsLine.format(
                                outcome.results().get(i).stageIndex + 1,
                                outcome.serverReports().get(i)));
            }
        }
        for (ResultFiles.Written f : outcome.files()) {
            // File names carry the model id, which the server chose.
            String path = TerminalText.oneLine(f.path().toString());
            if (f.ok()) {
                out.println("profile: " + path);
            } else {
                out.println(
                        "profile NOT written: "
                                + path
                                + " ("
                                + TerminalText.oneLine(f.failure())
                                + ")");
            }
            if (f.report() != null) {
                String report = TerminalText.oneLine(f.report().toString());
                out.println(
                        f.reportFailure() == null
                                ? "benchmark report: " + report
                                : "benchmark report NOT written: "
                                        + report
                                        + " ("
                                        + TerminalText.oneLine(f.reportFailure())
                                        + ")");
            }
        }
        out.flush();
    }
}
