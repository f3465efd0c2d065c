package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.cli.SimServer.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * How {@code run} and {@code search} judge whether the client delivered its load, against a real
 * model-sim: on the schedule a stage drew (random arrivals draw more or fewer requests than the
 * nominal rate), never on the nominal rate; a capacity never above what its passing probes
 * achieved; failures named; a probe identified by what it wrote.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class DeliveryJudgementCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static SimServer zeroLatencySim(Path tmp, String... extra) throws Exception {
        List<String> flags =
                new ArrayList<>(
                        List.of(
                                "--time-to-first-token",
                                "0",
                                "--inter-token-latency",
                                "0",
                                "--max-num-seqs",
                                "1000"));
        flags.addAll(List.of(extra));
        return new SimServer(tmp.resolve("sim.log"), flags.toArray(String[]::new));
    }

    private static List<JsonNode> profiles(Path dir) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.sorted().toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".json") && !name.equals("capacity.json")) {
                    out.add(JSON.readTree(f.toFile()));
                }
            }
        }
        return out;
    }

    /**
     * Twenty Poisson draws of about 40 arrivals each (the report's 4 req/s for 10 s, here 20 req/s
     * for 2 s to keep the test short: the same count, so the same spread of the drawn rate). Many
     * draws fall more than 5 % below the nominal rate - the old rule called them undelivered -
     * while the client sent every request on time: none may be called undelivered.
     */
    @Test
    void poissonDrawsBelowTheNominalRateAreNotBlamedOnTheClient(@TempDir Path tmp)
            throws Exception {
        Path results = tmp.resolve("results");
        String rates = String.join(",", java.util.Collections.nCopies(20, "20"));
        Outcome o;
        try (SimServer sim = zeroLatencySim(tmp)) {
            o =
                    SimServer.cli(
                            sim.run(
                                    results,
                                    "--request-rate",
                                    rates,
                                    "--duration",
                                    "2s",
                                    "--arrival",
                                    "poisson",
                                    "--seed",
                                    "7"));
        }
        String context = o.out() + o.err();
        assertThat(o.code()).as(context).isZero();
        List<JsonNode> stages = profiles(results);
        assertThat(stages).hasSize(20);
        int belowNominal = 0;
        for (JsonNode p : stages) {
            JsonNode m = p.get("metrics");
            double achieved = m.get("achieved_rate").asDouble();
            double drawn = m.get("scheduled_rate").asDouble();
            assertThat(m.get("requests_due").asLong()).isEqualTo(m.get("requests_sent").asLong());
            // the achieved rate follows the drawn one (each request sent on its due instant)
            assertThat(achieved / drawn).as(context).isBetween(0.95, 1.05);
            if (achieved < 0.95 * 20) {
                belowNominal++;
            }
        }
        // the test would catch the old rule: some draws are more than 5 % short of 20 req/s
        assertThat(belowNominal).as(context).isGreaterThanOrEqualTo(3);
        // no stage is blamed for the rate its schedule drew (a starved runner on a busy machine
        // may still be, with its own reason)
        assertThat(o.out()).as(context).doesNotContain("RateNotAchieved");
        assertThat(o.out()).contains("drawn");
    }

    @Test
    void aRateWhoseScheduleDoesNotFitTheStageIsRefused(@TempDir Path tmp) {
        Outcome o =
                SimServer.cli(
                        argv(
                                "run --base-url http://127.0.0.1:9 --model m --request-rate 1e-11 --num-prompts 12 --result-dir %s",
                                tmp.toString()));
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--request-rate 1e-11: 12 requests at").contains("7 days");
        o =
                SimServer.cli(
                        argv(
                                "run --base-url http://127.0.0.1:9 --model m --request-rate 0.05 --duration 10s --result-dir %s",
                                tmp.toString()));
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err())
                .contains("--request-rate 0.05")
                .contains("longer than the stage's duration 10s");
        try (Stream<Path> left = Files.list(tmp)) {
            assertThat(left.filter(p -> p.toString().endsWith(".json"))).isEmpty();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * The report: probes of 10 requests from 1 req/s to 1e9 req/s against a zero-latency server
     * found "31380 req/s" while the passing probes achieved 2,019-3,573. A probe now passes only
     * when its schedule was delivered, and the capacity is never above what its probes achieved.
     */
    @Test
    void aSearchWithTinyProbesNeverReportsMoreThanItsProbesAchieved(@TempDir Path tmp)
            throws Exception {
        Path results = tmp.resolve("search");
        Outcome o;
        try (SimServer sim = zeroLatencySim(tmp)) {
            o = search(sim, results, "--num-prompts", "10", "--max-rate", "1e9");
        }
        String context = o.out() + o.err();
        JsonNode capacity = JSON.readTree(results.resolve("capacity.json").toFile());
        context += "\n" + capacity.toPrettyString();
        double highestAchieved = 0;
        for (JsonNode p : capacity.get("probes")) {
            if (p.hasNonNull("achieved_rate")) {
                highestAchieved = Math.max(highestAchieved, p.get("achieved_rate").asDouble());
            }
            if (p.get("verdict").asText().equals("pass")) {
                JsonNode m =
                        JSON.readTree(results.resolve(p.get("profile").asText()).toFile())
                                .get("metrics");
                // delivered: sent over a span within 5 % of the drawn schedule's (or within the
                // timing resolution of it)
                double achieved = m.get("achieved_rate").asDouble();
                double drawn = m.get("scheduled_rate").asDouble();
                assertThat(achieved).as(context).isGreaterThanOrEqualTo(0.95 * drawn);
                assertThat(p.get("load_delivered").asBoolean()).isTrue();
            }
        }
        if (capacity.get("passing_rate").isNull()) {
            // a machine too busy to deliver even 1 req/s: the search must say so, exit 1
            assertThat(o.code()).as(context).isEqualTo(1);
            return;
        }
        if (capacity.get("outcome").asText().equals("indeterminate")) {
            // The top probes stayed too short to judge even when grown (how many microseconds 10
            // requests at 65k req/s take depends on the machine's moment): undecided, said so,
            // exit 1; the rate it reports is still one a passing probe achieved.
            assertThat(o.code()).as(context).isEqualTo(1);
            assertThat(o.out() + o.err()).as(context).contains("outcome indeterminate");
        } else {
            assertThat(o.code()).as(context).isZero();
        }
        double max = capacity.get("max_request_rate").asDouble();
        assertThat(max).as(context).isLessThanOrEqualTo(capacity.get("passing_rate").asDouble());
        // never above what the passing probes achieved (to four significant digits)
        assertThat(max)
                .as(context)
                .isLessThanOrEqualTo(capacity.get("passing_achieved_rate").asDouble() * (1 + 5e-4));
        assertThat(max).as(context).isLessThanOrEqualTo(highestAchieved * (1 + 5e-4));
    }

    @Test
    void aSearchAgainstAServerThatFailsEveryRequestNamesTheFailures(@TempDir Path tmp)
            throws Exception {
        Path results = tmp.resolve("search");
        Outcome o;
        try (SimServer sim =
                zeroLatencySim(
                        tmp,
                        "--failure-injection-rate",
                        "100",
                        "--failure-types",
                        "server_error")) {
            o = search(sim, results, "--num-prompts", "10", "--max-rate", "100");
        }
        String context = o.out() + o.err();
        assertThat(o.code()).as(context).isEqualTo(1);
        JsonNode capacity = JSON.readTree(results.resolve("capacity.json").toFile());
        JsonNode probe = capacity.get("probes").get(0);
        assertThat(probe.get("failed").asLong()).isEqualTo(10);
        assertThat(probe.get("failure_classes").asText()).isEqualTo("http_5xx: 10");
        assertThat(probe.get("passed").asBoolean(true)).isFalse();
        assertThat(capacity.get("max_request_rate").isNull()).isTrue();
        assertThat(capacity.get("message").asText())
                .as(context)
                .contains("10 of 10 requests failed (http_5xx: 10)");
        assertThat(o.out()).contains("10 of 10 requests failed (http_5xx: 10)");
    }

    /**
     * Another process writing profiles into the same directory while the search runs: each probe is
     * judged by the profile it wrote itself, not by what appeared in the directory.
     */
    @Test
    void aSearchSharingItsDirectoryWithAnotherWriterKeepsItsOwnProbes(@TempDir Path tmp)
            throws Exception {
        Path results = tmp.resolve("shared");
        Files.createDirectories(results);
        AtomicBoolean writing = new AtomicBoolean(true);
        Thread other =
                new Thread(
                        () -> {
                            int n = 0;
                            while (writing.get()) {
                                try {
                                    Files.writeString(
                                            results.resolve("other-" + n++ + ".json"),
                                            "{\"metrics\":{\"request_rate\":999}}");
                                    Thread.sleep(5);
                                } catch (Exception e) {
                                    return;
                                }
                            }
                        });
        other.start();
        Outcome o;
        try (SimServer sim = zeroLatencySim(tmp)) {
            o =
                    search(
                            sim,
                            results,
                            "--num-prompts",
                            "20",
                            "--max-rate",
                            "8",
                            "--arrival",
                            "constant");
        } finally {
            writing.set(false);
            other.join();
        }
        String context = o.out() + o.err();
        assertThat(o.code()).as(context).isZero();
        JsonNode capacity = JSON.readTree(results.resolve("capacity.json").toFile());
        Set<String> seen = new HashSet<>();
        for (JsonNode p : capacity.get("probes")) {
            String name = p.get("profile").asText();
            assertThat(name).doesNotStartWith("other-").doesNotContain("/");
            assertThat(seen.add(name)).as(context).isTrue();
            JsonNode m = JSON.readTree(results.resolve(name).toFile()).get("metrics");
            assertThat(m.get("request_rate").asDouble())
                    .isEqualTo(p.get("request_rate").asDouble());
        }
        assertThat(seen).isNotEmpty();
    }

    private static Outcome search(SimServer sim, Path results, String... extra) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "search",
                                "--base-url",
                                sim.baseUrl,
                                "--backend",
                                "openai",
                                "--model",
                                "sim",
                                "--random-input-len",
                                "16",
                                "--random-output-len",
                                "16",
                                "--goodput",
                                "ttft:100",
                                "--min-rate",
                                "1",
                                "--pause",
                                "0s",
                                "--result-dir",
                                results.toString()));
        args.addAll(List.of(extra));
        return SimServer.cli(args.toArray(String[]::new));
    }
}
