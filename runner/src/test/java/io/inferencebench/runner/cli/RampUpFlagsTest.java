package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.inferencebench.runner.engine.ArrivalKind;
import io.inferencebench.runner.engine.RampUp;
import io.inferencebench.runner.engine.StagePlan;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code run --ramp-up-*}: the stage the flags make, and the flag each refusal names. */
class RampUpFlagsTest {

    private static StagePlan onlyStage(String... args) throws Exception {
        RunCommand run = CommandLine.populateCommand(new RunCommand(), args);
        var stages = run.resolvePlan(new PrintWriter(new StringWriter(), true)).plan().stages();
        assertThat(stages).hasSize(1);
        return stages.get(0);
    }

    private static String usageError(String... args) {
        String[] argv = new String[args.length + 1];
        argv[0] = "run";
        System.arraycopy(args, 0, argv, 1, args.length);
        SimServer.Outcome o = SimServer.cli(argv);
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        return o.err();
    }

    /** The ramp flags with {@code strategy}, {@code start} and {@code end}, then {@code extra}. */
    private static String rampError(String strategy, String start, String end, String... extra) {
        String[] args = new String[6 + extra.length];
        String[] ramp = {
            "--ramp-up-strategy", strategy, "--ramp-up-start-rate", start, "--ramp-up-end-rate", end
        };
        System.arraycopy(ramp, 0, args, 0, 6);
        System.arraycopy(extra, 0, args, 6, extra.length);
        return usageError(args);
    }

    @Test
    void aRampOverADurationIsOneStageWhoseRateIsTheRampsMean() throws Exception {
        StagePlan stage =
                onlyStage(
                        "--ramp-up-strategy",
                        "linear",
                        "--ramp-up-start-rate",
                        "5",
                        "--ramp-up-end-rate",
                        "50",
                        "--duration",
                        "4s",
                        "--arrival",
                        "constant");
        assertThat(stage.rampUp()).isEqualTo(new RampUp(RampUp.Strategy.LINEAR, 5, 50));
        assertThat(stage.duration()).isEqualTo(Duration.ofSeconds(4));
        assertThat(stage.numPrompts()).isZero();
        assertThat(stage.arrival()).isEqualTo(ArrivalKind.CONSTANT);
        // (5 + 50) / 2: what the ramp has due over the stage, per second
        assertThat(stage.requestRate()).isCloseTo(27.5, within(1e-9));
        assertThat(Progress.describe(stage)).startsWith("linear ramp 5.0 -> 50.0 req/s constant");
    }

    @Test
    void vllmsFlagNamesAreAcceptedAndARampOverPromptsUsesThem() throws Exception {
        StagePlan stage =
                onlyStage(
                        "--ramp-up-strategy",
                        "exponential",
                        "--ramp-up-start-rps",
                        "2",
                        "--ramp-up-end-rps",
                        "32",
                        "--num-prompts",
                        "50");
        assertThat(stage.rampUp()).isEqualTo(new RampUp(RampUp.Strategy.EXPONENTIAL, 2, 32));
        assertThat(stage.duration()).isNull();
        assertThat(stage.numPrompts()).isEqualTo(50);
        assertThat(stage.arrival()).isEqualTo(ArrivalKind.POISSON);
        assertThat(stage.requestRate())
                .isCloseTo(StagePlan.rampMeanRate(stage.rampUp(), 50, null), within(1e-12))
                .isBetween(2.0, 32.0);
    }

    @Test
    void theRampReplacesTheStagesOfTheConfigFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bench.yaml");
        Files.writeString(file, "load:\n  requestRates: [1, 2, 3]\n  duration: 10s\n");
        StagePlan stage =
                onlyStage(
                        "--config",
                        file.toString(),
                        "--ramp-up-strategy",
                        "linear",
                        "--ramp-up-start-rate",
                        "0",
                        "--ramp-up-end-rate",
                        "20");
        assertThat(stage.rampUp().startRate()).isZero();
        assertThat(stage.duration()).isEqualTo(Duration.ofSeconds(10));
        assertThat(stage.requestRate()).isCloseTo(10, within(1e-9));
    }

    @Test
    void incompleteOrInvalidRampsAreRefusedNamingTheFlag() {
        assertThat(usageError("--ramp-up-start-rate", "1", "--ramp-up-end-rate", "5"))
                .contains("--ramp-up-start-rate: needs --ramp-up-strategy linear or exponential");
        assertThat(usageError("--ramp-up-strategy", "linear", "--ramp-up-end-rate", "5"))
                .contains(
                        "--ramp-up-strategy: needs both --ramp-up-start-rate and"
                                + " --ramp-up-end-rate");
        assertThat(rampError("cubic", "1", "5"))
                .contains("--ramp-up-strategy: must be linear or exponential, got 'cubic'");
        assertThat(rampError("exponential", "0", "5", "--duration", "10s"))
                .contains("--ramp-up-start-rate: an exponential ramp needs a start rate > 0");
        assertThat(rampError("linear", "1", "0")).contains("--ramp-up-end-rate: must be > 0");
        assertThat(rampError("linear", "-2", "5")).contains("--ramp-up-start-rate: must be >= 0");
        assertThat(rampError("linear", "50", "5"))
                .contains("--ramp-up-start-rate: 50.0 is above --ramp-up-end-rate 5.0");
        assertThat(rampError("linear", "0", "5", "--num-prompts", "100"))
                .contains("--ramp-up-start-rate: 0 needs --duration");
    }

    @Test
    void searchRefusesARampAsItRefusesRates() {
        SimServer.Outcome o =
                SimServer.cli(
                        "search",
                        "--goodput",
                        "ttft:500",
                        "--min-rate",
                        "1",
                        "--max-rate",
                        "10",
                        "--ramp-up-strategy",
                        "linear");
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        assertThat(o.err()).contains("--ramp-up-strategy: search chooses the rates itself");
    }

    @Test
    void aRampWithRatesOrConcurrenciesIsRefusedNamingThem() {
        assertThat(rampError("linear", "1", "5", "--request-rate", "1,2,4"))
                .contains("--request-rate: a ramp-up sets the stage's rate");
        assertThat(rampError("linear", "1", "5", "--concurrency", "8"))
                .contains("--concurrency: a ramp-up sets the stage's rate");
        // an end rate whose requests cannot fit the stage is refused as a rate would be
        assertThat(rampError("linear", "0.01", "0.05", "--duration", "5s"))
                .contains("--ramp-up-end-rate 0.05: 0.05 requests/s puts 20.0 s between requests");
    }
}
