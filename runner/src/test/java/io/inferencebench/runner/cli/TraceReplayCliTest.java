package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --dataset-name trace} against model-sim with its request log and prefix cache: the
 * server sees each recorded request at its recorded offset times the time scale, with its recorded
 * lengths, and counts exactly the prefix-cache hits the trace's hash ids imply.
 */
class TraceReplayCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Tokens per hash id in the generated trace, and the server's cache block. */
    private static final int TRACE_BLOCK = 32;

    private static final int SIM_BLOCK = 16;

    /** One recorded request of the generated trace. */
    private record Recorded(long millis, List<Long> hashes, int output) {
        int input() {
            return hashes.size() * TRACE_BLOCK;
        }
    }

    /**
     * 40 requests over about 2.4 s in four groups that share a 64-token system prompt (two hashes),
     * half of them a third shared block, each with one or two blocks of its own.
     */
    private static List<Recorded> mooncakeTrace() {
        Random random = new Random(11);
        List<Recorded> trace = new ArrayList<>();
        long t = 1_000;
        for (int i = 0; i < 40; i++) {
            int group = i % 4;
            List<Long> hashes = new ArrayList<>(List.of(group * 100L + 1, group * 100L + 2));
            if (random.nextBoolean()) {
                hashes.add(group * 100L + 3);
            }
            int own = 1 + random.nextInt(2);
            for (int k = 0; k < own; k++) {
                hashes.add(1_000L + i * 10L + k);
            }
            trace.add(new Recorded(t, hashes, 2 + i % 4));
            t += 30 + random.nextInt(61);
        }
        return trace;
    }

    private static Path writeMooncake(Path file, List<Recorded> trace) throws Exception {
        StringBuilder sb = new StringBuilder();
        for (Recorded r : trace) {
            sb.append(
                    String.format(
                            "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d,"
                                    + " \"hash_ids\": %s}%n",
                            r.millis(), r.input(), r.output(), r.hashes()));
        }
        return Files.writeString(file, sb.toString());
    }

    /**
     * The hits a vLLM-style cache of {@value #SIM_BLOCK}-token blocks counts for the trace sent in
     * order, from the hash ids alone: a request hits its leading blocks (all but the one holding
     * its last token) that an earlier request with the same hashes up to them cached.
     */
    private static long expectedHits(List<Recorded> trace) {
        Set<String> cached = new HashSet<>();
        long hits = 0;
        for (Recorded r : trace) {
            int tokens = r.input();
            for (int k = 0; k < (tokens - 1) / SIM_BLOCK; k++) {
                if (!cached.contains(chain(r, k))) {
                    break;
                }
                hits += SIM_BLOCK;
            }
            for (int k = 0; k < tokens / SIM_BLOCK; k++) {
                cached.add(chain(r, k));
            }
        }
        return hits;
    }

    /** The identity of block {@code k} with everything before it. */
    private static String chain(Recorded r, int k) {
        int perHash = TRACE_BLOCK / SIM_BLOCK;
        return r.hashes().subList(0, k / perHash + 1) + "#" + k;
    }

    private static List<SimServer.Seen> seen(Path log) throws Exception {
        return SimServer.requestLog(log, 0);
    }

    /** The requests the server logged after its first {@code skip}, by arrival. */
    private static List<SimServer.Seen> seen(Path log, int skip) throws Exception {
        return SimServer.requestLog(log, skip);
    }

    /**
     * {@code run} of the trace in {@code file} against {@code sim} with {@code flags}; it exits 0.
     */
    private static SimServer.Outcome replay(SimServer sim, Path file, Path results, String flags) {
        SimServer.Outcome o =
                SimServer.cli(
                        argv(
                                "run --base-url %s --backend openai --model sim --ignore-eos"
                                        + " --dataset-name trace --dataset-path %s "
                                        + flags
                                        + " --progress none --cooldown 0 --result-dir %s",
                                sim.baseUrl,
                                file.toString(),
                                results.toString()));
        assertThat(o.code()).as(o.err()).isZero();
        return o;
    }

    private static JsonNode onlyProfile(Path results) throws Exception {
        return LpgParityTest.onlyProfile(results);
    }

    @Test
    void aMooncakeTraceArrivesOnItsScaledClockWithItsLengthsAndItsCacheReuse(@TempDir Path dir)
            throws Exception {
        List<Recorded> trace = mooncakeTrace();
        Path file = writeMooncake(dir.resolve("trace.jsonl"), trace);
        Path log = dir.resolve("requests.jsonl");
        try (SimServer sim =
                new SimServer(
                        dir.resolve("sim.log"),
                        "--enable-prefix-caching",
                        "--request-log",
                        log.toString())) {
            Path results = dir.resolve("results");
            SimServer.Outcome o =
                    replay(sim, file, results, "--trace-block-size 32 --trace-time-scale 0.5");
            assertThat(o.err()).contains("trace: 40 requests to replay (mooncake)");

            // Every recorded request, in its order, with its lengths.
            List<SimServer.Seen> seen = seen(log);
            assertThat(seen).hasSize(trace.size());
            for (int i = 0; i < trace.size(); i++) {
                assertThat(seen.get(i).promptTokens())
                        .as("request %d", i)
                        .isEqualTo(trace.get(i).input());
                assertThat(seen.get(i).maxTokens())
                        .as("request %d", i)
                        .isEqualTo(trace.get(i).output());
            }
            // On the trace's clock at half its pace, as the server saw the arrivals.
            double[] errorsMs = new double[trace.size()];
            for (int i = 0; i < trace.size(); i++) {
                double dueMs = (trace.get(i).millis() - trace.get(0).millis()) * 0.5;
                double atMs = (seen.get(i).arrivalNanos() - seen.get(0).arrivalNanos()) / 1e6;
                errorsMs[i] = Math.abs(atMs - dueMs);
            }
            double[] sorted = errorsMs.clone();
            Arrays.sort(sorted);
            assertThat(sorted[sorted.length / 2]).as(Arrays.toString(errorsMs)).isLessThan(5.0);
            assertThat(sorted[sorted.length - 1]).as(Arrays.toString(errorsMs)).isLessThan(100.0);

            // The reuse the hash ids imply, exactly, on the server's own counters.
            long tokens = trace.stream().mapToLong(Recorded::input).sum();
            assertThat(sim.counter("vllm:prefix_cache_queries_total")).isEqualTo((double) tokens);
            long hits = expectedHits(trace);
            assertThat(hits).isGreaterThan(0);
            assertThat(sim.counter("vllm:prefix_cache_hits_total")).isEqualTo((double) hits);

            JsonNode profile = onlyProfile(results);
            assertThat(profile.at("/dimensions/dataset").asText()).isEqualTo("trace");
            assertThat(profile.at("/dimensions/trace").asText())
                    .isEqualTo("format=mooncake time_scale=0.5 requests=40");
            assertThat(profile.at("/metrics/completed").asInt()).isEqualTo(40);
            assertThat(profile.at("/metrics/avg_input_len").asDouble())
                    .isEqualTo((double) tokens / trace.size());

            // A window of the trace's clock and a cap: the first 5 requests at or after 1 s.
            int before = seen.size();
            Path windowed = dir.resolve("windowed");
            replay(
                    sim,
                    file,
                    windowed,
                    "--trace-format mooncake --trace-start 1s --num-prompts 5"
                            + " --trace-time-scale 0.5");
            List<Recorded> expected =
                    trace.stream()
                            .filter(r -> r.millis() - trace.get(0).millis() >= 1_000)
                            .limit(5)
                            .toList();
            assertThat(seen(log, before).stream().map(SimServer.Seen::promptTokens).toList())
                    .isEqualTo(expected.stream().map(Recorded::input).toList());
            assertThat(onlyProfile(windowed).at("/dimensions/trace").asText())
                    .isEqualTo("format=mooncake time_scale=0.5 start=1s requests=5");
        }
    }

    @Test
    void aBurstGptTraceLeavesOutItsFailuresAndSaysSo(@TempDir Path dir) throws Exception {
        Path file =
                Files.writeString(
                        dir.resolve("burst.csv"),
                        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                                + "5,ChatGPT,47,3,50,Conversation log\n"
                                + "6,ChatGPT,108,0,108,Conversation log\n"
                                + "8,GPT-4,41,6,47,API log\n"
                                + "9,ChatGPT,12,2,14,Conversation log\n");
        Path log = dir.resolve("requests.jsonl");
        try (SimServer sim =
                new SimServer(dir.resolve("sim.log"), "--request-log", log.toString())) {
            Path results = dir.resolve("results");
            SimServer.Outcome o = replay(sim, file, results, "--trace-time-scale 0.05");
            assertThat(o.err())
                    .contains("trace: 3 requests to replay (burstgpt)")
                    .contains("1 left out: they recorded 0 input or output tokens");
            assertThat(seen(log).stream().map(s -> s.promptTokens() + "/" + s.maxTokens()).toList())
                    .isEqualTo(List.of("47/3", "41/6", "12/2"));
            assertThat(onlyProfile(results).at("/dimensions/trace").asText())
                    .isEqualTo("format=burstgpt time_scale=0.05 requests=3 skipped_zero_tokens=1");
        }
    }

    private static String refused(String flags) {
        SimServer.Outcome o =
                SimServer.cli(argv("run --base-url http://127.0.0.1:9 --progress none " + flags));
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        return o.err();
    }

    @Test
    void refusalsNameTheFlagOrTheLine(@TempDir Path dir) throws Exception {
        Path trace =
                Files.writeString(
                        dir.resolve("t.jsonl"),
                        "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 2}\n"
                                + "{\"timestamp\": 10, \"input_length\": 8}\n");
        String base = "--dataset-name trace --dataset-path " + trace + " ";
        assertThat(refused(base + "--request-rate 5"))
                .contains(
                        "--request-rate: a trace sets its own arrival times; scale them with"
                                + " --trace-time-scale");
        assertThat(refused(base + "--arrival constant")).contains("--arrival: a trace sets");
        assertThat(refused(base + "--trace-time-scale 0"))
                .contains("--trace-time-scale: must be within [0.0001, 10000]");
        assertThat(refused(base + "--trace-format alibaba"))
                .contains("--trace-format: 'alibaba' is not one of mooncake, azure, burstgpt");
        assertThat(refused(base + "--trace-start 2s --trace-end 1s"))
                .contains("--trace-start: must be before the end (2s is not before 1s)");
        assertThat(refused(base + "--random-input-len 64"))
                .contains("--random-input-len: a trace's requests keep their recorded lengths");
        assertThat(refused(base + "--output-len 64"))
                .contains("--output-len: a trace's requests ask for their recorded output length");
        assertThat(refused("--trace-time-scale 2"))
                .contains("--trace-time-scale: applies only to --dataset-name trace");
        assertThat(refused("--dataset-name trace"))
                .contains("--dataset-path: required for --dataset-name trace");
        assertThat(refused(base))
                .contains("--dataset-path: " + trace + " line 2: output_length is missing");
        // A search chooses rates: a trace, by flag or in a --config, is refused by name.
        String search =
                "search --base-url http://127.0.0.1:9 --goodput ttft:500 --min-rate 1 --max-rate 8 ";
        SimServer.Outcome o = SimServer.cli(argv(search + base));
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--dataset-name: trace sets its own arrival times");
        Path config =
                Files.writeString(
                        dir.resolve("trace.yaml"),
                        "workload:\n  dataset:\n    type: trace\n    source: {url: \""
                                + trace.toUri()
                                + "\"}\n");
        o = SimServer.cli(argv(search + "--config " + config));
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err())
                .contains(
                        "--config "
                                + config
                                + ": workload.dataset.type: trace sets its own arrival times");
    }
}
