package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Start-up errors name the flag or field and what is allowed: exit 2, one message, no trace. */
class StartupErrorsTest {

    static TrueNumbersTest.Outcome usage(String... args) {
        TrueNumbersTest.Outcome o = TrueNumbersTest.run(args);
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        assertThat(o.err()).doesNotContain("\tat ").doesNotContain("Exception");
        return o;
    }

    @Test
    void baseUrlNeedsHttpOrHttpsAHostAndAPortWithinRange() {
        assertThat(usage("run", "--base-url", "ftp://127.0.0.1:8000").err())
                .contains("--base-url: scheme 'ftp' is not supported; use http or https");
        assertThat(usage("run", "--base-url", "127.0.0.1:8000").err())
                .contains("--base-url: '127.0.0.1:8000' has no http:// or https:// scheme");
        assertThat(usage("run", "--base-url", "http://127.0.0.1:70000").err())
                .contains("--base-url: port 70000 is outside 1-65535");
        assertThat(usage("run", "--base-url", "http://127.0.0.1:0").err())
                .contains("--base-url: port 0 is outside 1-65535");
        assertThat(usage("run", "--base-url", "http://127.0.0.1:99999999999").err())
                .contains("--base-url: port '99999999999' is not a number within 1-65535");
        assertThat(usage("run", "--base-url", "http://:8000").err()).contains("--base-url");
    }

    @Test
    void zeroRequestTimeoutAndAnIgnoredDatasetPathAreRefused(@TempDir Path dir) throws Exception {
        assertThat(usage("run", "--request-timeout", "0").err())
                .contains("--request-timeout: must be greater than zero");
        Path file = dir.resolve("prompts.jsonl");
        Files.writeString(file, "{\"prompt\": \"hi\"}\n");
        assertThat(usage("run", "--model", "m", "--dataset-path", file.toString()).err())
                .contains("--dataset-path: needs --dataset-name sharegpt or jsonl");
    }

    @Test
    void aJsonlMaxTokensOutsideOneToIntMaxIsRefusedWithFileAndLine(@TempDir Path dir)
            throws Exception {
        Path file = dir.resolve("prompts.jsonl");
        Files.writeString(
                file,
                "{\"prompt\": \"hi\", \"max_tokens\": 16}\n"
                        + "{\"prompt\": \"there\", \"max_tokens\": 99999999999}\n");
        assertThat(
                        usage(
                                        argv(
                                                "run --backend openai --model m --result-dir %s"
                                                        + " --dataset-name jsonl --dataset-path %s",
                                                dir.resolve("r").toString(), file.toString()))
                                .err())
                .contains(
                        "--dataset-path: "
                                + file
                                + " line 2: max_tokens must be a whole number from 1 to 2147483647,"
                                + " got 99999999999");
    }

    @Test
    void configErrorsNameFileLineColumnAndTheYamlFieldPath(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("bench.yaml");
        assertThat(
                        configError(
                                config,
                                """
                load:
                  requestRates: [5]
                  numPrompts: 10
                  requestTimout: 30s
                """))
                .contains("--config " + config + " line 4, column ")
                .contains(": load.requestTimout: ")
                .contains("unknown field 'requestTimout'")
                .contains("requestTimeout");
        assertThat(
                        configError(
                                config,
                                """
                load:
                  requestRates: [5]
                  numPrompts: lots
                """))
                .contains("line 3, column ")
                .contains(": load.numPrompts: 'lots' is not a valid whole number");
        // The YAML's name, not the flag's.
        assertThat(
                        configError(
                                config,
                                """
                load:
                  requestRates: [5]
                  numPrompts: 10
                  requestTimeout: 0s
                """))
                .contains("load.requestTimeout")
                .doesNotContain("--request-timeout");
        assertThat(
                        configError(
                                config,
                                """
                load:
                  requestRates: [0]
                  numPrompts: 10
                """))
                .contains("load.requestRates[0]: must be greater than 0");
        assertThat(configError(config, "load: [1, 2\n")).contains("--config " + config + " line ");
    }

    @Test
    void aShareGptFileOfTheWrongShapeSaysSo(@TempDir Path dir) throws Exception {
        Path jsonl = dir.resolve("prompts.jsonl");
        Files.writeString(jsonl, "{\"prompt\": \"hello there\"}\n{\"prompt\": \"again\"}\n");
        assertThat(
                        usage(
                                        argv(
                                                "run --model m --result-dir %s --dataset-name sharegpt"
                                                        + " --dataset-path %s",
                                                dir.resolve("results").toString(),
                                                jsonl.toString()))
                                .err())
                .contains("not a ShareGPT file")
                .contains("--dataset-name jsonl");
        Path array = dir.resolve("array.json");
        Files.writeString(array, "[{\"prompt\": \"hello there\"}, {\"prompt\": \"again\"}]");
        assertThat(
                        usage(
                                        argv(
                                                "run --model m --result-dir %s --dataset-name sharegpt"
                                                        + " --dataset-path %s",
                                                dir.resolve("results").toString(),
                                                array.toString()))
                                .err())
                .contains("not a ShareGPT file: none of its 2 entries has a \"conversations\"")
                .contains("(the first has: prompt)");
    }

    @Test
    void aServerThatIsDownIsAConnectFailureNotAModelFlagError(@TempDir Path dir) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        TrueNumbersTest.Outcome o =
                TrueNumbersTest.run(
                        argv(
                                "run --base-url %s --result-dir %s --no-self-warmup"
                                        + " --num-prompts 1",
                                "http://127.0.0.1:" + port, dir.toString()));
        assertThat(o.code()).as(o.err()).isEqualTo(1);
        assertThat(o.err())
                .contains("cannot reach http://127.0.0.1:" + port)
                .contains("connect")
                .doesNotContain("--model");
    }

    @Test
    void argumentErrorsAreOneLineAndHelpShowsTheDefaults() throws Exception {
        TrueNumbersTest.Outcome o = usage("run", "--request-rat", "5");
        assertThat(o.err()).contains("--request-rat").contains("--help");
        assertThat(o.err().lines().count()).isLessThan(8);
        TrueNumbersTest.Outcome help = TrueNumbersTest.run("run", "--help");
        assertThat(help.code()).isZero();
        assertThat(help.out())
                .contains("--base-url")
                .contains("default http://127.0.0.1:8000")
                .contains("default 0.1");
    }

    @Test
    void aConfigKeyGivenTwiceIsRefusedNamingTheKeyAndBothLines(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("bench.yaml");
        // Jackson kept the last value: this sent 50,000 requests.
        assertThat(
                        configError(
                                config,
                                """
                load:
                  requestRates: [5]
                  numPrompts: 5
                  numPrompts: 50000
                """))
                .contains("--config " + config + " line 4, column 3: load.numPrompts: ")
                .contains("duplicate key 'numPrompts' (first on line 3)");
        assertThat(
                        configError(
                                config,
                                """
                load:
                  stages:
                    - {requestRate: 1, numPrompts: 2, requestRate: 3}
                """))
                .contains("line 3, column ")
                .contains("load.stages[0].requestRate: duplicate key 'requestRate'");
        assertThat(configError(config, "load: {requestRates: [1], numPrompts: 2}\nload: {}\n"))
                .contains("line 2, column 1: load: duplicate key 'load' (first on line 1)");
    }

    @Test
    void anIntegerFieldTakesIntegersAndNullIsNotTheDefault(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("bench.yaml");
        assertThat(configError(config, "load:\n  requestRates: [5]\n  numPrompts: 5.9\n"))
                .contains("--config " + config + " line 3, column ")
                .contains("load.numPrompts: '5.9' is not a valid whole number");
        // null used to mean "unset", so the run sent the default 1000 requests.
        assertThat(configError(config, "load:\n  requestRates: [5]\n  numPrompts: null\n"))
                .contains("--config " + config + " line 3, column ")
                .contains("load.numPrompts: null is not a value here");
        assertThat(configError(config, "load:\n  requestRates: [5]\n  numPrompts:\n"))
                .contains("load.numPrompts: null is not a value here");
        assertThat(
                        configError(
                                config,
                                "workload:\n  dataset:\n    seed: 1.5\nload: {requestRates: [1], numPrompts: 2}\n"))
                .contains("workload.dataset.seed: '1.5' is not a valid whole number");
        // 2.0 is a whole number written as a float: still not an integer in YAML.
        assertThat(configError(config, "load:\n  requestRates: [5]\n  numPrompts: 2.0\n"))
                .contains("load.numPrompts: '2.0' is not a valid whole number");
    }

    @Test
    void aTabInTheConfigIsNamedAtItsLineAndColumn(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("bench.yaml");
        assertThat(configError(config, "load:\n\trequestRates: [5]\n  numPrompts: 5\n"))
                .contains("--config " + config + " line 2, column 1: ")
                .contains("tabs are not allowed in YAML");
        assertThat(configError(config, "load:\n  requestRates: [5]\n  numPrompts:\t5\n"))
                .contains("--config " + config + " line 3, column 14: ")
                .contains("tabs are not allowed in YAML");
    }

    @Test
    void aliasesAreExpandedWithinSnakeYamlsLimits(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("bench.yaml");
        // A "billion laughs": each level aliases the one before it ten times.
        StringBuilder laughs = new StringBuilder("a0: &a0 [lol, lol, lol, lol, lol, lol]\n");
        for (int level = 1; level <= 9; level++) {
            laughs.append("a").append(level).append(": &a").append(level).append(" [");
            for (int i = 0; i < 10; i++) {
                laughs.append(i == 0 ? "" : ", ").append("*a").append(level - 1);
            }
            laughs.append("]\n");
        }
        assertThat(
                        configError(
                                config,
                                "metadata:\n  annotations:\n"
                                        + laughs.toString().indent(4)
                                        + "load: {requestRates: [1], numPrompts: 2}\n"))
                .contains("--config " + config + " line ")
                .contains("metadata.annotations")
                .contains("aliases expand to more than 100000 YAML nodes");
        // SnakeYAML's own limit: 50 aliases of collections.
        StringBuilder many = new StringBuilder("metadata:\n  x: &x [1]\n  y: [");
        for (int i = 0; i < 51; i++) {
            many.append(i == 0 ? "" : ", ").append("*x");
        }
        assertThat(configError(config, many + "]\nload: {requestRates: [1], numPrompts: 2}\n"))
                .contains("more than 50 aliases of mappings or lists");
        assertThat(
                        configError(
                                config,
                                "load:\n  stages:\n    - *stage\n    - &stage {requestRate: 1, numPrompts: 2}\n"))
                .contains("line 3, column 7: ")
                .contains("alias *stage has no anchor &stage before it");
        assertThat(configError(config, "load: &load\n  stages: [*load]\n"))
                .contains("alias *load refers to the node that contains it");
    }

    @Test
    void aBinaryConfigIsNotUtf8TextAndAByteOrderMarkIsAccepted(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("bench.yaml");
        byte[] text = "load:\n  requestRates: [5]\n  numPrompts: 5\n".getBytes();
        byte[] binary = java.util.Arrays.copyOf(text, text.length + 4);
        binary[text.length] = (byte) 0x89;
        binary[text.length + 1] = 'P';
        Files.write(config, binary);
        assertThat(usage("run", "--config", config.toString()).err())
                .contains(
                        "--config "
                                + config
                                + ": not UTF-8 text: byte 0x89 at byte offset "
                                + text.length
                                + " (line 4)")
                .doesNotContain("Input length");
        Files.write(config, new byte[] {0x1f, (byte) 0x8b, 8, 0, 0, 0});
        assertThat(usage("run", "--config", config.toString()).err())
                .contains("not UTF-8 text: byte 0x8B at byte offset 1 (line 1)");
        byte[] bom = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};
        byte[] withBom = java.util.Arrays.copyOf(bom, bom.length + text.length);
        System.arraycopy(text, 0, withBom, bom.length, text.length);
        Files.write(config, withBom);
        CommandLinePlan plan =
                CommandLinePlan.resolve(
                        config,
                        new TargetOptions(),
                        new WorkloadOptions(),
                        new LoadOptions(),
                        new SloOptions(),
                        new java.io.PrintWriter(new java.io.StringWriter()));
        assertThat(plan.plan().stages()).hasSize(1);
        assertThat(plan.plan().stages().get(0).numPrompts()).isEqualTo(5);
    }

    @Test
    void noCommandPrintsTheUsageAndExitsTwo() {
        TrueNumbersTest.Outcome o = TrueNumbersTest.run();
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("a command is required").contains("Commands:").contains("run");
    }

    @Test
    void anEmptyPathFlagIsRefusedNamingTheFlag(@TempDir Path dir) throws Exception {
        for (String flag :
                List.of(
                        argv(
                                "--result-dir --config --dataset-path --tokenizer --ca-cert"
                                        + " --api-key-file"))) {
            assertThat(usage("run", flag, "").err())
                    .as(flag)
                    .contains(flag)
                    .contains("the path is empty");
        }
        assertThat(
                        usage(
                                        argv(
                                                "search --min-rate 1 --max-rate 2 --goodput ttft:9"
                                                        + " --result-dir %s",
                                                ""))
                                .err())
                .contains("--result-dir")
                .contains("the path is empty");
    }

    @Test
    void aBinaryOrEmptyDatasetIsAUsageErrorNamingTheFile(@TempDir Path dir) throws Exception {
        Path binary = dir.resolve("prompts.jsonl");
        Files.write(binary, new byte[] {'{', '"', (byte) 0xFE, (byte) 0xFF, 0, 0});
        String err =
                usage(
                                argv(
                                        "run --model m --result-dir %s --dataset-name jsonl"
                                                + " --dataset-path %s",
                                        dir.resolve("results").toString(), binary.toString()))
                        .err();
        assertThat(err)
                .contains(
                        "--dataset-path: "
                                + binary
                                + ": not UTF-8 text: byte 0xFE at byte"
                                + " offset 2 (line 1)")
                .doesNotContain("Input length");
        Path empty = dir.resolve("empty.json");
        Files.writeString(empty, "[]");
        assertThat(
                        usage(
                                        argv(
                                                "run --model m --result-dir %s --dataset-name sharegpt"
                                                        + " --dataset-path %s",
                                                dir.resolve("results").toString(),
                                                empty.toString()))
                                .err())
                .contains("--dataset-path: " + empty + ": the file has no prompts");
    }

    @Test
    void workloadFlagsAreCheckedWithTheirOwnNames(@TempDir Path dir) throws Exception {
        Path jsonl = dir.resolve("prompts.jsonl");
        Files.writeString(jsonl, "{\"prompt\": \"hello there\"}\n");
        String[] file = {"--dataset-name", "jsonl", "--dataset-path", jsonl.toString()};
        // Named the spec's field before: workload.dataset.outputTokens.mean.
        assertThat(usage(concat(file, "--output-len", "0")).err())
                .contains("--output-len: must be >= 1, got 0")
                .doesNotContain("workload.");
        assertThat(usage(concat(file, "--random-output-len", "0")).err())
                .contains("--random-output-len: must be >= 1, got 0");
        assertThat(usage(concat(file, "--min-input-len", "5", "--max-input-len", "2")).err())
                .contains("--min-input-len: 5 is greater than --max-input-len 2");
        assertThat(usage(concat(file, "--max-output-len", "0")).err())
                .contains("--max-output-len: must be >= 1, got 0");
        // Accepted and sent before; a BenchmarkRun's schema refuses them.
        assertThat(usage("run", "--model", "m", "--top-p", "5").err())
                .contains("--top-p: must be within (0, 1], got 5.0");
        assertThat(usage("run", "--model", "m", "--top-k", "-2").err())
                .contains("--top-k: must be >= -1");
        assertThat(usage("run", "--model", "m", "--seed", "-1").err())
                .contains("--seed: must be >= 0, got -1");
        // Ignored before: the random dataset has no lengths to filter.
        assertThat(usage("run", "--model", "m", "--min-input-len", "10").err())
                .contains("--min-input-len: applies to --dataset-name sharegpt or jsonl");
        Path config = dir.resolve("bench.yaml");
        assertThat(
                        configError(
                                config,
                                """
                workload:
                  sampling: {topP: 1.5}
                  dataset: {seed: -3}
                load: {requestRates: [1], numPrompts: 2}
                """))
                .contains("workload.sampling.topP: must be within (0, 1], got 1.5")
                .contains("workload.dataset.seed: must not be negative, got -3");
    }

    /**
     * What {@code run --config} says (on stderr, exiting 2) of a file {@code config} holding {@code
     * yaml}.
     */
    private static String configError(Path config, String yaml) throws IOException {
        Files.writeString(config, yaml);
        return usage("run", "--config", config.toString()).err();
    }

    private static String[] concat(String[] first, String... more) {
        List<String> all = new java.util.ArrayList<>(List.of("run", "--model", "m"));
        all.addAll(List.of(first));
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }
}
