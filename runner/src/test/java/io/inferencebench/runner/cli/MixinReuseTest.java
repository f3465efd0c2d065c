package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.inferencebench.runner.plan.RunPlan;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The run flags as mixins of another command (as a {@code search} command taking the target,
 * workload and SLO flags and choosing its own load would): same names, same checks, same plan.
 */
class MixinReuseTest {

    @Command(name = "probe")
    static final class ProbeCommand implements Callable<Integer> {
        @Mixin TargetOptions target = new TargetOptions();
        @Mixin WorkloadOptions workload = new WorkloadOptions();
        @Mixin SloOptions slo = new SloOptions();

        CommandLinePlan plan() throws Exception {
            return CommandLinePlan.resolve(
                    null,
                    target,
                    workload,
                    new LoadOptions(),
                    slo,
                    new PrintWriter(new StringWriter()));
        }

        @Override
        public Integer call() {
            return 0;
        }
    }

    @Test
    void anotherCommandTakesTheFlagsAndResolvesTheSamePlanAsRun() throws Exception {
        String[] args = {
            "--base-url", "http://127.0.0.1:9", "--backend", "sglang", "--model", "m",
            "--random-input-len", "64", "--goodput", "ttft:250", "--seed", "7"
        };
        CommandLine probe = new CommandLine(new ProbeCommand());
        probe.parseArgs(args);
        RunPlan fromProbe = ((ProbeCommand) probe.getCommand()).plan().plan();

        CommandLine run = new CommandLine(new RunCommand());
        run.parseArgs(args);
        RunPlan fromRun =
                ((RunCommand) run.getCommand())
                        .resolvePlan(new PrintWriter(new StringWriter()))
                        .plan();

        assertThat(fromProbe).isEqualTo(fromRun);
        assertThat(fromProbe.wire().backend()).isEqualTo("sglang");
        assertThat(fromProbe.slo().ttftMs()).isEqualTo(250.0);
        assertThat(fromProbe.dataset().inputTokens().mean()).isEqualTo(64);
        assertThat(fromProbe.dataset().seed()).isEqualTo(7);
        assertThat(probe.getCommandSpec().findOption("--base-url").description())
                .isEqualTo(run.getCommandSpec().findOption("--base-url").description());
    }

    @Test
    void theMixinsCheckTheirFlagsByName() {
        CommandLine probe = new CommandLine(new ProbeCommand());
        probe.parseArgs("--goodput", "latency:5");
        assertThatThrownBy(() -> ((ProbeCommand) probe.getCommand()).plan())
                .isInstanceOf(Main.UsageError.class)
                .hasMessageContaining("--goodput: unknown SLO 'latency'");
    }
}
