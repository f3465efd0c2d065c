package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --dataset-name multi-turn} against model-sim: every request carries its session's
 * history (the server counts exactly the tokens the turns imply), a session's next turn comes only
 * after the reply and the think time (the server's own arrival times say so), the prefix cache hits
 * exactly the history's full blocks, and the profile's per-turn figures match; refusals name the
 * flag.
 */
class ConversationCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int BLOCK = 16;
    private static final int QUESTION = 20;
    private static final int REPLY = 6;
    private static final int TURNS = 4;

    /** Prompt tokens of turn {@code t} (1-based): t questions and the t - 1 replies between. */
    private static int historyTokens(int t) {
        return t * QUESTION + (t - 1) * REPLY;
    }

    private static List<SimServer.Seen> seen(Path log) throws Exception {
        return SimServer.requestLog(log, 0);
    }

    private static JsonNode onlyProfile(Path results) throws Exception {
        return LpgParityTest.onlyProfile(results);
    }

    /** Runs the conversation workload of {@code flags} against {@code sim}; it exits 0. */
    private static SimServer.Outcome converse(SimServer sim, Path results, String flags) {
        SimServer.Outcome o = SimServer.cli(conversationArgs(sim, results, flags));
        assertThat(o.code()).as(o.err()).isZero();
        return o;
    }

    private static String[] conversationArgs(SimServer sim, Path results, String flags) {
        return argv(
                "run --base-url %s --backend openai --model sim --ignore-eos"
                        + " --dataset-name multi-turn --random-input-len %s --random-output-len %s"
                        + " --turns %s "
                        + flags
                        + " --seed 3 --progress none --cooldown 0 --result-dir %s",
                sim.baseUrl,
                Integer.toString(QUESTION),
                Integer.toString(REPLY),
                Integer.toString(TURNS),
                results.toString());
    }

    @Test
    void oneUserSendsEachTurnAfterTheReplyAndTheThinkTimeWithTheWholeHistory(@TempDir Path dir)
            throws Exception {
        int sessions = 3;
        long thinkNanos = 150_000_000L;
        Path log = dir.resolve("requests.jsonl");
        try (SimServer sim =
                new SimServer(
                        dir.resolve("sim.log"),
                        "--enable-prefix-caching",
                        "--request-log",
                        log.toString())) {
            Path results = dir.resolve("results");
            SimServer.Outcome o =
                    converse(
                            sim,
                            results,
                            "--sessions 1 --num-sessions " + sessions + " --think-time 150ms");

            // One user: the server sees the sessions one after another, each turn with the whole
            // history before it, asking for its reply's length.
            List<SimServer.Seen> seen = seen(log);
            assertThat(seen).hasSize(sessions * TURNS);
            for (int i = 0; i < seen.size(); i++) {
                int turn = i % TURNS + 1;
                assertThat(seen.get(i).promptTokens())
                        .as("request %d", i)
                        .isEqualTo(historyTokens(turn));
                assertThat(seen.get(i).maxTokens()).isEqualTo(REPLY);
                if (i == 0) {
                    continue;
                }
                long gap = seen.get(i).arrivalNanos() - seen.get(i - 1).arrivalNanos();
                if (turn > 1) {
                    // The reply, then the think time, before the session's next turn.
                    assertThat(gap)
                            .as("gap before request %d", i)
                            .isGreaterThanOrEqualTo(thinkNanos);
                } else {
                    // A new session starts as soon as the user is free: no think time.
                    assertThat(gap).as("gap before session start %d", i).isLessThan(thinkNanos);
                }
            }

            // The prefix cache: each turn hits the previous turn's full blocks, no more.
            long hits = 0;
            long queries = 0;
            for (int t = 1; t <= TURNS; t++) {
                queries += historyTokens(t);
                if (t < TURNS) {
                    hits += historyTokens(t) / BLOCK * BLOCK;
                }
            }
            assertThat(sim.counter("vllm:prefix_cache_queries_total"))
                    .isEqualTo((double) sessions * queries);
            assertThat(sim.counter("vllm:prefix_cache_hits_total"))
                    .isEqualTo((double) sessions * hits);

            assertThat(o.err()).contains("stage 1/1: 1 sessions at once, 3 sessions of 4 turns");
            assertThat(o.out())
                    .contains("stage 1 sessions: 3 started, 3 completed, 0 abandoned")
                    .contains("prompt tokens by turn   1: 20  2: 46  3: 72  4: 98");
            JsonNode profile = onlyProfile(results);
            assertThat(profile.at("/dimensions/conversation").asText())
                    .isEqualTo("turns=4 think_time=0.15s fixed");
            assertThat(profile.at("/dimensions/api").asText()).isEqualTo("openai-chat");
            JsonNode conversation = profile.at("/metrics/conversation");
            assertThat(conversation.get("turns_per_session").asInt()).isEqualTo(TURNS);
            assertThat(conversation.get("think_time_s").asDouble()).isEqualTo(0.15);
            assertThat(conversation.get("sessions_started").asInt()).isEqualTo(sessions);
            assertThat(conversation.get("sessions_completed").asInt()).isEqualTo(sessions);
            assertThat(conversation.get("sessions_abandoned").asInt()).isZero();
            assertThat(conversation.get("sessions_cut").asInt()).isZero();
            JsonNode turns = conversation.get("turns");
            assertThat(turns).hasSize(TURNS);
            for (int t = 1; t <= TURNS; t++) {
                JsonNode turn = turns.get(t - 1);
                assertThat(turn.get("turn").asInt()).isEqualTo(t);
                assertThat(turn.get("requests_sent").asInt()).isEqualTo(sessions);
                assertThat(turn.get("completed").asInt()).isEqualTo(sessions);
                assertThat(turn.get("prompt_tokens_mean").asDouble())
                        .isEqualTo((double) historyTokens(t));
                assertThat(turn.get("ttft_ms_p50").asDouble()).isPositive();
            }
            assertThat(profile.at("/metrics/completed").asInt()).isEqualTo(sessions * TURNS);
            assertThat(profile.at("/metrics/num_prompts").asInt()).isEqualTo(sessions * TURNS);
            // The stage's concurrency is its sessions in progress at once.
            assertThat(profile.at("/metrics/max_concurrency").asInt()).isEqualTo(1);
        }
    }

    @Test
    void severalUsersRunEverySessionOnce(@TempDir Path dir) throws Exception {
        int sessions = 12;
        Path log = dir.resolve("requests.jsonl");
        try (SimServer sim =
                new SimServer(dir.resolve("sim.log"), "--request-log", log.toString())) {
            Path results = dir.resolve("results");
            SimServer.Outcome o =
                    converse(
                            sim,
                            results,
                            "--sessions 4 --num-sessions "
                                    + sessions
                                    + " --think-time 20ms --think-time-distribution"
                                    + " exponential");
            List<SimServer.Seen> seen = seen(log);
            assertThat(seen).hasSize(sessions * TURNS);
            for (int t = 1; t <= TURNS; t++) {
                int length = historyTokens(t);
                assertThat(seen.stream().filter(s -> s.promptTokens() == length).count())
                        .as("requests of turn %d", t)
                        .isEqualTo(sessions);
            }
            JsonNode conversation = onlyProfile(results).at("/metrics/conversation");
            assertThat(conversation.get("sessions_completed").asInt()).isEqualTo(sessions);
            assertThat(conversation.get("think_time_distribution").asText())
                    .isEqualTo("exponential");
        }
    }

    @Test
    void sessionsStartAtTheirRateAndDeliveryIsJudgedOnTheirStarts(@TempDir Path dir)
            throws Exception {
        int sessions = 10;
        Path log = dir.resolve("requests.jsonl");
        try (SimServer sim =
                new SimServer(dir.resolve("sim.log"), "--request-log", log.toString())) {
            Path results = dir.resolve("results");
            SimServer.Outcome o =
                    converse(
                            sim,
                            results,
                            "--session-rate 5 --arrival constant --num-sessions "
                                    + sessions
                                    + " --think-time 100ms");
            assertThat(o.err()).contains("stage 1/1: 5.0 sessions/s constant, 10 sessions of 4");
            // Every session's first turn arrived on the schedule, 200 ms apart as the server saw
            // them; their later turns came between, as each session's replies allowed.
            List<SimServer.Seen> seen = seen(log);
            assertThat(seen).hasSize(sessions * TURNS);
            List<Long> firsts =
                    seen.stream()
                            .filter(x -> x.promptTokens() == historyTokens(1))
                            .map(SimServer.Seen::arrivalNanos)
                            .toList();
            assertThat(firsts).hasSize(sessions);
            List<Double> gapsMs = new ArrayList<>();
            for (int i = 1; i < firsts.size(); i++) {
                gapsMs.add((firsts.get(i) - firsts.get(i - 1)) / 1e6);
            }
            gapsMs.sort(null);
            assertThat(gapsMs.get(gapsMs.size() / 2))
                    .isCloseTo(200.0, org.assertj.core.data.Offset.offset(20.0));
            JsonNode profile = onlyProfile(results);
            JsonNode conversation = profile.at("/metrics/conversation");
            assertThat(conversation.get("session_rate").asDouble()).isEqualTo(5.0);
            assertThat(conversation.get("sessions_due").asInt()).isEqualTo(sessions);
            assertThat(conversation.get("scheduled_session_rate").asDouble())
                    .isCloseTo(5.0, org.assertj.core.data.Offset.offset(1e-6));
            assertThat(conversation.get("sessions_completed").asInt()).isEqualTo(sessions);
            // In steady state the sessions ask for their turns this often.
            assertThat(profile.at("/metrics/request_rate").asDouble()).isEqualTo(5.0 * TURNS);
            assertThat(profile.at("/metrics").has("requests_due")).isFalse();
            // Sessions start on the schedule, not when the previous one ends: the second started
            // before the first session's last turn (three think times later) was sent.
            long firstLastTurn =
                    seen.stream()
                            .filter(x -> x.promptTokens() == historyTokens(TURNS))
                            .mapToLong(SimServer.Seen::arrivalNanos)
                            .min()
                            .orElseThrow();
            assertThat(firsts.get(1)).isLessThan(firstLastTurn);
            assertThat(o.out()).contains("5.0 sess/s").doesNotContain("LoadDelivered=False");
        }
    }

    @Test
    void sessionsAtARateStopStartingAtTheStagesEndAndTheOnesInProgressAreCut(@TempDir Path dir)
            throws Exception {
        try (SimServer sim = new SimServer(dir.resolve("sim.log"))) {
            Path results = dir.resolve("results");
            long started = System.nanoTime();
            SimServer.Outcome o =
                    converse(
                            sim,
                            results,
                            "--session-rate 20 --arrival constant --num-sessions 1000"
                                    + " --duration 1s --think-time 300ms");
            assertThat(System.nanoTime() - started).isLessThan(15_000_000_000L);
            JsonNode conversation = onlyProfile(results).at("/metrics/conversation");
            // 20 sessions due in the second, each started on time.
            assertThat(conversation.get("sessions_due").asInt()).isEqualTo(20);
            assertThat(conversation.get("sessions_started").asInt()).isEqualTo(20);
            assertThat(conversation.get("sessions_cut").asInt()).isPositive();
            assertThat(
                            conversation.get("sessions_completed").asInt()
                                    + conversation.get("sessions_cut").asInt())
                    .isEqualTo(20);
            assertThat(o.out()).doesNotContain("LoadDelivered=False");
        }
    }

    @Test
    void aFailedTurnEndsItsSession(@TempDir Path dir) throws Exception {
        int sessions = 5;
        // Turn 3 (72 prompt + 6 output tokens) is over the server's context of 60: refused.
        try (SimServer sim = new SimServer(dir.resolve("sim.log"), "--max-model-len", "60")) {
            Path results = dir.resolve("results");
            SimServer.Outcome o =
                    converse(
                            sim,
                            results,
                            "--sessions 2 --num-sessions " + sessions + " --max-failure-ratio 1");
            JsonNode profile = onlyProfile(results);
            JsonNode conversation = profile.at("/metrics/conversation");
            assertThat(conversation.get("sessions_started").asInt()).isEqualTo(sessions);
            assertThat(conversation.get("sessions_completed").asInt()).isZero();
            assertThat(conversation.get("sessions_abandoned").asInt()).isEqualTo(sessions);
            JsonNode turns = conversation.get("turns");
            assertThat(turns.get(1).get("completed").asInt()).isEqualTo(sessions);
            assertThat(turns.get(2).get("requests_sent").asInt()).isEqualTo(sessions);
            assertThat(turns.get(2).get("failures").asInt()).isEqualTo(sessions);
            assertThat(turns.get(2).has("prompt_tokens_mean")).isFalse();
            // No user asks on after an error: the last turn was never sent.
            assertThat(turns.get(3).get("requests_sent").asInt()).isZero();
            assertThat(profile.at("/metrics/num_prompts_attempted").asInt())
                    .isEqualTo(3 * sessions);
        }
    }

    @Test
    void aStagesDurationCutsTheSessionsInProgressAndSendsNothingAfterIt(@TempDir Path dir)
            throws Exception {
        Path log = dir.resolve("requests.jsonl");
        try (SimServer sim =
                new SimServer(dir.resolve("sim.log"), "--request-log", log.toString())) {
            Path results = dir.resolve("results");
            long started = System.nanoTime();
            SimServer.Outcome o =
                    converse(
                            sim,
                            results,
                            "--sessions 3 --num-sessions 1000 --duration 1s"
                                    + " --think-time 300ms");
            long tookNanos = System.nanoTime() - started;
            // Users in their think time at the end do not hold the stage up.
            assertThat(tookNanos).isLessThan(15_000_000_000L);
            JsonNode profile = onlyProfile(results);
            JsonNode conversation = profile.at("/metrics/conversation");
            long begun = conversation.get("sessions_started").asLong();
            long completed = conversation.get("sessions_completed").asLong();
            long cut = conversation.get("sessions_cut").asLong();
            assertThat(cut).isPositive();
            assertThat(conversation.get("sessions_abandoned").asLong()).isZero();
            assertThat(completed + cut).isEqualTo(begun);
            // Nothing was sent after the stage's end, as the server saw it: the last request
            // arrived within the second after the first.
            List<SimServer.Seen> seen = seen(log);
            assertThat(seen).hasSize(profile.at("/metrics/num_prompts_attempted").asInt());
            assertThat(seen.get(seen.size() - 1).arrivalNanos() - seen.get(0).arrivalNanos())
                    .isLessThan(1_000_000_000L);
        }
    }

    @Test
    void aConfigFileDeclaresConversationsAsTheSpecDoes(@TempDir Path dir) throws Exception {
        Path config = dir.resolve("conversations.yaml");
        Files.writeString(
                config,
                """
                workload:
                  dataset:
                    type: random
                    inputTokens: {type: fixed, mean: 20}
                    outputTokens: {type: fixed, mean: 6}
                    conversation: {turns: 3, thinkTime: 10ms}
                load:
                  cooldown: 0s
                  stages:
                    - {concurrency: 2, numPrompts: 4}
                """);
        try (SimServer sim = new SimServer(dir.resolve("sim.log"))) {
            Path results = dir.resolve("results");
            SimServer.Outcome o =
                    SimServer.cli(
                            argv(
                                    "run --base-url %s --backend openai --model sim --ignore-eos"
                                            + " --config %s --progress none --result-dir %s",
                                    sim.baseUrl, config.toString(), results.toString()));
            assertThat(o.code()).as(o.err()).isZero();
            JsonNode profile = onlyProfile(results);
            assertThat(profile.at("/dimensions/conversation").asText())
                    .isEqualTo("turns=3 think_time=0.01s fixed");
            JsonNode conversation = profile.at("/metrics/conversation");
            assertThat(conversation.get("sessions_completed").asInt()).isEqualTo(4);
            assertThat(conversation.at("/turns/2/prompt_tokens_mean").asDouble())
                    .isEqualTo(3 * 20 + 2 * 6);
            assertThat(profile.at("/metrics/max_concurrency").asInt()).isEqualTo(2);
        }
        // search chooses rates; conversations run a number of sessions.
        SimServer.Outcome search =
                SimServer.cli(
                        argv(
                                "search --base-url http://127.0.0.1:9 --config %s --min-rate 1"
                                        + " --max-rate 2 --goodput ttft:500 --num-prompts 10",
                                config.toString()));
        assertThat(search.code()).isEqualTo(2);
        assertThat(search.err())
                .contains("workload.dataset.conversation: conversations run a number of sessions");
    }

    @Test
    void shareGptConversationsReplayTurnByTurnWithTheirRecordedReplies(@TempDir Path dir)
            throws Exception {
        // Three conversations of two pairs; questions and replies of distinct word counts.
        List<String[]> pairs = new ArrayList<>();
        StringBuilder json = new StringBuilder("[");
        for (int c = 0; c < 3; c++) {
            String q1 = "q ".repeat(3 + c).trim();
            String r1 = "first reply word ".repeat(2 + c).trim();
            String q2 = "w ".repeat(10 + c).trim();
            String r2 = "x".repeat(40 + 8 * c);
            pairs.add(new String[] {q1, r1, q2, r2});
            json.append(c == 0 ? "" : ",")
                    .append(
                            String.format(
                                    "{\"conversations\": [{\"from\": \"human\", \"value\": \"%s\"},"
                                            + " {\"from\": \"gpt\", \"value\": \"%s\"},"
                                            + " {\"from\": \"human\", \"value\": \"%s\"},"
                                            + " {\"from\": \"gpt\", \"value\": \"%s\"}]}",
                                    q1, r1, q2, r2));
        }
        Path file = dir.resolve("sharegpt.json");
        Files.writeString(file, json.append("]").toString());
        Path log = dir.resolve("requests.jsonl");
        try (SimServer sim =
                new SimServer(dir.resolve("sim.log"), "--request-log", log.toString())) {
            Path results = dir.resolve("results");
            SimServer.Outcome o =
                    SimServer.cli(
                            argv(
                                    "run --base-url %s --backend openai --model sim --ignore-eos"
                                            + " --dataset-name sharegpt --dataset-path %s"
                                            + " --multi-turn --turns 2 --sessions 1"
                                            + " --num-sessions 3 --min-input-len 1"
                                            + " --min-output-len 1 --progress none --cooldown 0"
                                            + " --result-dir %s",
                                    sim.baseUrl, file.toString(), results.toString()));
            assertThat(o.code()).as(o.err()).isZero();
            // The server saw each conversation's two turns, the second with the recorded reply.
            java.util.Set<String> expected = new java.util.HashSet<>();
            for (String[] p : pairs) {
                int q1 = p[0].split(" ").length;
                int r1 = p[1].split(" ").length;
                int q2 = p[2].split(" ").length;
                // No tokenizer: a reply's length is its characters / 4.
                expected.add(q1 + "/" + Math.round(p[1].length() / 4.0));
                expected.add((q1 + r1 + q2) + "/" + Math.round(p[3].length() / 4.0));
            }
            List<SimServer.Seen> seen = seen(log);
            assertThat(seen).hasSize(6);
            assertThat(seen.stream().map(x -> x.promptTokens() + "/" + x.maxTokens()).toList())
                    .containsExactlyInAnyOrderElementsOf(expected);
            JsonNode profile = onlyProfile(results);
            assertThat(profile.at("/dimensions/dataset").asText()).isEqualTo("sharegpt");
            assertThat(profile.at("/metrics/conversation/sessions_completed").asInt()).isEqualTo(3);
        }
    }

    private static String refused(String flags) {
        SimServer.Outcome o = SimServer.cli(argv("run --base-url http://127.0.0.1:9 " + flags));
        assertThat(o.code()).as(o.err()).isEqualTo(2);
        return o.err();
    }

    @Test
    void refusalsNameTheFlag() {
        assertThat(refused("--dataset-name multi-turn"))
                .contains("--sessions: required with conversations");
        assertThat(refused("--dataset-name multi-turn --sessions 2 --request-rate 5"))
                .contains(
                        "--request-rate: a conversation workload runs sessions: a number at once"
                                + " (--sessions) or started at a rate (--session-rate)");
        assertThat(refused("--dataset-name multi-turn --sessions 2 --arrival constant"))
                .contains("--arrival: applies to sessions started at a rate (--session-rate)");
        assertThat(refused("--dataset-name multi-turn --session-rate 0"))
                .contains("--session-rate: must be > 0 or 'inf', got 0");
        assertThat(refused("--session-rate 2"))
                .contains("--session-rate: applies only to --dataset-name multi-turn");
        assertThat(refused("--dataset-name multi-turn --sessions 2 --num-prompts 5"))
                .contains("--num-prompts: a conversation workload counts sessions");
        assertThat(refused("--dataset-name multi-turn --sessions 2 --max-concurrency 5"))
                .contains("--max-concurrency: a conversation workload's concurrency");
        assertThat(refused("--turns 3 --num-prompts 5"))
                .contains(
                        "--turns: applies only to --dataset-name multi-turn or sharegpt --multi-turn");
        assertThat(refused("--sessions 3"))
                .contains(
                        "--sessions: applies only to --dataset-name multi-turn or sharegpt --multi-turn");
        assertThat(refused("--multi-turn --sessions 2"))
                .contains("--multi-turn: applies to --dataset-name sharegpt");
        assertThat(refused("--dataset-name multi-turn --sessions 2 --turns 0"))
                .contains("--turns: must be >= 1, got 0");
        assertThat(refused("--dataset-name multi-turn --sessions 2 --think-time soon"))
                .contains("--think-time: 'soon' is not a duration");
        assertThat(refused("--dataset-name multi-turn --sessions 2 --think-time-distribution x"))
                .contains("--think-time-distribution: 'x' is not one of fixed, exponential");
        assertThat(
                        refused(
                                "--dataset-name multi-turn --sessions 2 --turns 1000"
                                        + " --num-sessions 201"))
                .contains(
                        "load.stages[0].numPrompts: 201 sessions of 1000 turns are 201000"
                                + " requests, more than the 200000 a runner prepares");
        assertThat(refused("--dataset-name multi-turn --sessions 2 --api completions"))
                .contains("workload.dataset.conversation: needs the chat API");
    }
}
