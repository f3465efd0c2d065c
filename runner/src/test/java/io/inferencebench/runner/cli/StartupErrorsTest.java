package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
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
                                        "run",
                                        "--backend",
                                        "openai",
                                        "--model",
                                        "m",
                                        "--result-dir",
                                        dir.resolve("r").toString(),
                                        "--dataset-name",
                                        "jsonl",
                                        "--dataset-path",
                                        file.toString())
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
        Files.writeString(
                config,
                """
                load:
                  requestRates: [5]
                  numPrompts: 10
                  requestTimout: 30s
                """);
        assertThat(usage("run", "--config", config.toString()).err())
                .contains("--config " + config + " line 4, column ")
                .contains(": load.requestTimout: ")
                .contains("unknown field 'requestTimout'")
                .contains("requestTimeout");
        Files.writeString(
                config,
                """
                load:
                  requestRates: [5]
                  numPrompts: lots
                """);
        assertThat(usage("run", "--config", config.toString()).err())
                .contains("line 3, column ")
                .contains(": load.numPrompts: 'lots' is not a valid whole number");
        Files.writeString(
                config,
                """
                load:
                  requestRates: [5]
                  numPrompts: 10
                  requestTimeout: 0s
                """);
        // The YAML's name, not the flag's.
        assertThat(usage("run", "--config", config.toString()).err())
                .contains("load.requestTimeout")
                .doesNotContain("--request-timeout");
        Files.writeString(
                config,
                """
                load:
                  requestRates: [0]
                  numPrompts: 10
                """);
        assertThat(usage("run", "--config", config.toString()).err())
                .contains("load.requestRates[0]: must be greater than 0");
        Files.writeString(config, "load: [1, 2\n");
        assertThat(usage("run", "--config", config.toString()).err())
                .contains("--config " + config + " line ");
    }

    @Test
    void aShareGptFileOfTheWrongShapeSaysSo(@TempDir Path dir) throws Exception {
        Path jsonl = dir.resolve("prompts.jsonl");
        Files.writeString(jsonl, "{\"prompt\": \"hello there\"}\n{\"prompt\": \"again\"}\n");
        assertThat(
                        usage(
                                        "run",
                                        "--model",
                                        "m",
                                        "--dataset-name",
                                        "sharegpt",
                                        "--dataset-path",
                                        jsonl.toString())
                                .err())
                .contains("not a ShareGPT file")
                .contains("--dataset-name jsonl");
        Path array = dir.resolve("array.json");
        Files.writeString(array, "[{\"prompt\": \"hello there\"}, {\"prompt\": \"again\"}]");
        assertThat(
                        usage(
                                        "run",
                                        "--model",
                                        "m",
                                        "--dataset-name",
                                        "sharegpt",
                                        "--dataset-path",
                                        array.toString())
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
                        "run",
                        "--base-url",
                        "http://127.0.0.1:" + port,
                        "--result-dir",
                        dir.toString(),
                        "--no-self-warmup",
                        "--num-prompts",
                        "1");
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
}
