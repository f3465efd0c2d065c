package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.inferencebench.runner.dataset.LengthDistribution;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.plan.RunPlan;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line's flags laid over {@code --config}, resolved without running anything. */
class CommandLinePlanTest {

    private final StringWriter err = new StringWriter();

    private CommandLinePlan resolve(String... args) throws Exception {
        CommandLine cl = new CommandLine(new RunCommand());
        cl.parseArgs(args);
        return ((RunCommand) cl.getCommand()).resolvePlan(new PrintWriter(err, true));
    }

    private Path config(Path dir, String yaml) throws Exception {
        Path file = dir.resolve("bench.yaml");
        Files.writeString(file, yaml);
        return file;
    }

    @Test
    void infIsAFlagsStageOnlyAConfigStageNeedsARateOrAConcurrency(@TempDir Path dir)
            throws Exception {
        StagePlan inf = resolve("--request-rate", "inf").plan().stages().get(0);
        assertThat(inf.requestRate()).isInfinite();
        assertThat(inf.numPrompts()).isEqualTo(LoadOptions.DEFAULT_NUM_PROMPTS);
        Path file = config(dir, "load:\n  stages:\n    - {numPrompts: 5}\n");
        assertThatThrownBy(() -> resolve("--config", file.toString()))
                .isInstanceOf(Main.UsageError.class)
                .hasMessageContaining("--config " + file)
                .hasMessageContaining(
                        "load.stages[0]: exactly one of requestRate or concurrency must be set");
    }

    @Test
    void lengthFlagsGiveTheDistributionsOfVllmsFlags() throws Exception {
        RunPlan ratio = resolve("--random-input-len", "100", "--random-range-ratio", "0.5").plan();
        LengthDistribution expected = LengthDistribution.rangeRatio(100, 0.5);
        assertThat(ratio.dataset().inputTokens()).isEqualTo(expected);
        assertThat(ratio.dataset().outputTokens())
                .isEqualTo(LengthDistribution.rangeRatio(128, 0.5));
        RunPlan normal = resolve("--random-output-len", "64", "--random-output-stddev", "8").plan();
        assertThat(normal.dataset().outputTokens()).isEqualTo(LengthDistribution.normal(64, 8));
        assertThat(normal.dataset().inputTokens()).isEqualTo(LengthDistribution.fixed(1024));
    }

    @Test
    void datasetNameTakesTheConfigsFieldsOfThatKindOnly(@TempDir Path dir) throws Exception {
        Path shareGpt = dir.resolve("sharegpt.json");
        Files.writeString(shareGpt, "[]");
        Path file =
                config(
                        dir,
                        """
                        workload:
                          dataset:
                            inputTokens: {type: fixed, mean: 64}
                            outputTokens: {type: fixed, mean: 16}
                            seed: 3
                        load: {requestRates: [1], numPrompts: 2}
                        """);
        RunPlan plan =
                resolve(
                                "--config",
                                file.toString(),
                                "--dataset-name",
                                "sharegpt",
                                "--dataset-path",
                                shareGpt.toString())
                        .plan();
        assertThat(plan.dataset().typeName()).isEqualTo("sharegpt");
        assertThat(plan.dataset().source().getUrl()).isEqualTo(shareGpt.toUri().toString());
        // The config's output length still asks every request for that many tokens.
        assertThat(plan.dataset().filters().outputLenOverride()).isEqualTo(16);
        assertThat(plan.dataset().seed()).isEqualTo(3);
    }

    @Test
    void aCaReferenceOfTheConfigNeedsCaCert(@TempDir Path dir) throws Exception {
        Path file =
                config(
                        dir,
                        """
                        target:
                          url: https://llm.example.com:8443
                          tls: {caConfigMapRef: {name: server-ca}, serverName: llm.internal}
                        load: {requestRates: [1], numPrompts: 2}
                        """);
        assertThatThrownBy(() -> resolve("--config", file.toString()))
                .isInstanceOf(Main.UsageError.class)
                .hasMessageContaining("target.tls.caConfigMapRef")
                .hasMessageContaining("--ca-cert FILE");
        // With --insecure-skip-tls-verify the reference is not needed; the server name stays.
        RunPlan plan = resolve("--config", file.toString(), "--insecure-skip-tls-verify").plan();
        assertThat(plan.tls().insecureSkipVerify()).isTrue();
        assertThat(plan.tls().serverName()).isEqualTo("llm.internal");
    }

    @Test
    void aServiceTargetIsNamedAndTheDefaultBaseUrlUsed(@TempDir Path dir) throws Exception {
        Path file =
                config(
                        dir,
                        """
                        target: {service: {name: vllm, port: 8000}, model: m}
                        load: {requestRates: [1], numPrompts: 2}
                        """);
        CommandLinePlan plan = resolve("--config", file.toString());
        assertThat(plan.baseUrl()).isEqualTo(TargetOptions.DEFAULT_BASE_URL);
        assertThat(err.toString()).contains("target.service").contains("--base-url");
        assertThat(
                        resolve("--config", file.toString(), "--base-url", "http://10.0.0.1:80")
                                .baseUrl())
                .isEqualTo("http://10.0.0.1:80");
    }

    @Test
    void anotherBackendFlagDerivesItsOwnApi(@TempDir Path dir) throws Exception {
        Path file =
                config(
                        dir,
                        """
                        target: {url: "http://127.0.0.1:9", backend: openai, api: chat}
                        load: {requestRates: [1], numPrompts: 2}
                        """);
        assertThat(resolve("--config", file.toString()).plan().wire().api()).isEqualTo("chat");
        assertThat(resolve("--config", file.toString(), "--backend", "tgi").plan().wire().path())
                .isEqualTo("/generate_stream");
    }

    @Test
    void infInAConfigsRatesIsEveryRequestAtOnceAsTheFlagIs(@TempDir Path dir) throws Exception {
        Path rates = config(dir, "load: {requestRates: [inf, 5, .inf, Infinity], numPrompts: 7}\n");
        var plan = resolve("--config", rates.toString()).plan();
        assertThat(plan.stages())
                .extracting(StagePlan::requestRate)
                .containsExactly(
                        Double.POSITIVE_INFINITY,
                        5.0,
                        Double.POSITIVE_INFINITY,
                        Double.POSITIVE_INFINITY);
        assertThat(plan.stages()).extracting(StagePlan::numPrompts).containsOnly(7L);
        Path stages =
                config(
                        dir,
                        """
                        load:
                          stages:
                            - {requestRate: inf, numPrompts: 3}
                            - {requestRate: .inf, numPrompts: 4}
                            - {requestRate: 2, numPrompts: 5}
                        """);
        assertThat(resolve("--config", stages.toString()).plan().stages())
                .extracting(StagePlan::requestRate)
                .containsExactly(Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY, 2.0);
        // Flags over such a config still apply to every stage.
        assertThat(resolve("--config", stages.toString(), "--num-prompts", "9").plan().stages())
                .extracting(StagePlan::numPrompts)
                .containsOnly(9L);
        // Other infinities are not rates.
        Path negative = config(dir, "load: {requestRates: [-.inf], numPrompts: 7}\n");
        assertThatThrownBy(() -> resolve("--config", negative.toString()))
                .isInstanceOf(Main.UsageError.class)
                .hasMessageContaining("load.requestRates[0]: must be greater than 0");
        Path word = config(dir, "load: {requestRates: [lots], numPrompts: 7}\n");
        assertThatThrownBy(() -> resolve("--config", word.toString()))
                .isInstanceOf(Main.UsageError.class)
                .hasMessageContaining("load.requestRates[0]")
                .hasMessageContaining("'lots' is not a valid number");
    }

    @Test
    void anAliasOfAStageIsThatStage(@TempDir Path dir) throws Exception {
        Path file =
                config(
                        dir,
                        """
                        load:
                          stages:
                            - &warm {requestRate: 4, numPrompts: 6}
                            - {concurrency: 2, numPrompts: 8}
                            - *warm
                        """);
        var stages = resolve("--config", file.toString()).plan().stages();
        assertThat(stages).hasSize(3);
        assertThat(stages.get(2).requestRate()).isEqualTo(4.0);
        assertThat(stages.get(2).numPrompts()).isEqualTo(6L);
        assertThat(stages.get(1).concurrency()).isEqualTo(2);
        // Scalars and nested anchors too.
        Path nested =
                config(
                        dir,
                        """
                        load:
                          stages:
                            - &outer {requestRate: &rate 3, numPrompts: &n 5}
                            - {requestRate: *rate, numPrompts: *n}
                            - *outer
                        """);
        assertThat(resolve("--config", nested.toString()).plan().stages())
                .allSatisfy(
                        s -> {
                            assertThat(s.requestRate()).isEqualTo(3.0);
                            assertThat(s.numPrompts()).isEqualTo(5L);
                        });
    }
}
