package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.runner.cli.SimServer.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code compare} on real runs against model-sim on loopback: two runs of the same unchanged server
 * are no significant change, a server whose first token comes 40 % later is a regression.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class CompareCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** 50 ms to the first token, then 15 tokens 8 ms apart (with jitter), no queueing. */
    private static final String[] SIM_FLAGS = {
        "--time-to-first-token", "50", "--time-to-first-token-std-dev", "3",
        "--inter-token-latency", "8", "--inter-token-latency-std-dev", "1",
        "--max-num-seqs", "64"
    };

    /**
     * Stages of 30 and 15 s: a few seconds of a busy machine (other builds on the same two cores)
     * then delay a few per cent of a stage's requests, which its p90 does not feel, instead of a
     * tenth of them.
     */
    private static final String[] LOAD = {
        "--request-rate", "20,40", "--num-prompts", "600", "--seed", "1", "--num-warmups", "10"
    };

    @Test
    void sameServerIsNoChangeAndASlowerFirstTokenIsARegression(@TempDir Path tmp) throws Exception {
        Path first = tmp.resolve("first");
        Path second = tmp.resolve("second");
        Path slower = tmp.resolve("slower");
        try (SimServer sim = new SimServer(tmp.resolve("sim.log"), SIM_FLAGS)) {
            // The runs share this JVM, so the first one would also pay for compiling the hot path
            // (its first stage's tail came out 40 % slower than the second run's, significantly):
            // a throwaway run first, so that both compared runs start as warm. Runs of the
            // command line, one JVM each, start equally cold.
            assertRan(
                    SimServer.cli(
                            sim.run(
                                    tmp.resolve("jit-warm-up"),
                                    argv("--request-rate 40 --num-prompts 300 --seed 2"))));
            assertRan(SimServer.cli(sim.run(first, LOAD)));
            assertRan(SimServer.cli(sim.run(second, LOAD)));
        }
        String[] slowFlags = SIM_FLAGS.clone();
        slowFlags[1] = "70";
        try (SimServer sim = new SimServer(tmp.resolve("sim-slow.log"), slowFlags)) {
            assertRan(SimServer.cli(sim.run(slower, LOAD)));
        }

        Path sameJson = tmp.resolve("same.json");
        Outcome same =
                SimServer.cli(
                        "compare", first.toString(), second.toString(), "-o", sameJson.toString());
        assertThat(same.code()).as(same.out() + same.err()).isZero();
        assertThat(same.out()).contains("verdict: no significant change");
        JsonNode sameDoc = JSON.readTree(sameJson.toFile());
        assertThat(sameDoc.get("verdict").asText()).isEqualTo("no significant change");
        assertThat(sameDoc.get("stage_matching").asText()).isEqualTo("request_rate");
        assertThat(sameDoc.get("stages")).hasSize(2);

        Path slowJson = tmp.resolve("slow.json");
        Outcome slow =
                SimServer.cli(
                        "compare",
                        first.toString(),
                        slower.toString(),
                        "--output",
                        slowJson.toString());
        assertThat(slow.code()).as(slow.out() + slow.err()).isEqualTo(1);
        assertThat(slow.out()).contains("verdict: regression");
        JsonNode doc = JSON.readTree(slowJson.toFile());
        assertThat(doc.get("verdict").asText()).isEqualTo("regression");
        List<JsonNode> baseProfiles = profiles(first);
        for (JsonNode stage : doc.get("stages")) {
            JsonNode ttft = stage.get("metrics").get("ttft_p50");
            assertThat(ttft.get("significant").asBoolean()).as(stage.toString()).isTrue();
            assertThat(ttft.get("worse").asText()).isEqualTo("candidate");
            // 50 -> 70 ms plus the client's and loopback's share, the same in both runs
            assertThat(ttft.get("change").asDouble()).isBetween(0.25, 0.45);
            JsonNode baseProfile =
                    baseProfiles.stream()
                            .filter(
                                    p ->
                                            p.get("metrics").get("request_rate").asDouble()
                                                    == stage.get("baseline_request_rate")
                                                            .asDouble())
                            .findFirst()
                            .orElseThrow();
            assertThat(ttft.get("baseline").asDouble())
                    .isEqualTo(baseProfile.get("metrics").get("median_ttft_ms").asDouble());
            // the inter-token gaps did not change: no significant ITL change
            assertThat(stage.get("metrics").get("itl_p50").get("significant").asBoolean())
                    .isFalse();
        }
    }

    @Test
    void aProfileWithoutHistogramsIsComparedByThresholdAndSaysSo(@TempDir Path tmp)
            throws Exception {
        Path run = tmp.resolve("run");
        try (SimServer sim = new SimServer(tmp.resolve("sim.log"), SIM_FLAGS)) {
            assertRan(SimServer.cli(sim.run(run, "--request-rate", "20", "--num-prompts", "40")));
        }
        Path profile;
        try (Stream<Path> files = Files.list(run)) {
            profile = files.filter(p -> p.toString().endsWith(".json")).findFirst().orElseThrow();
        }
        ObjectNode stripped = (ObjectNode) JSON.readTree(profile.toFile());
        ((ObjectNode) stripped.get("metrics")).remove("histograms");
        Path old = tmp.resolve("old.json");
        JSON.writeValue(old.toFile(), stripped);
        Outcome o = SimServer.cli("compare", old.toString(), profile.toString());
        assertThat(o.code()).as(o.out() + o.err()).isZero();
        assertThat(o.out())
                .contains("baseline old.json has no histogram")
                .contains("threshold only")
                .contains("threshold-only")
                .contains("verdict: no significant change");
    }

    @Test
    void badInputExitsTwoNamingTheArgument(@TempDir Path tmp) throws Exception {
        Path missing = tmp.resolve("nope.json");
        Path notJson = tmp.resolve("garbage.json");
        Files.writeString(notJson, "{not json");
        Path notProfile = tmp.resolve("other.json");
        Files.writeString(notProfile, "{\"a\": 1}");
        Path empty = Files.createDirectory(tmp.resolve("empty"));

        Outcome o = SimServer.cli("compare", missing.toString(), notProfile.toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("BASELINE: no such file or directory: " + missing);

        o = SimServer.cli("compare", notProfile.toString(), notJson.toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("BASELINE: " + notProfile + " is not an LPG profile");

        o = SimServer.cli("compare", empty.toString(), notJson.toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("BASELINE: no LPG profile").doesNotContain("Exception");

        Path profile = tmp.resolve("p.json");
        Files.writeString(profile, "{\"metrics\": {\"request_rate\": 5.0, \"median_ttft_ms\": 1}}");
        o = SimServer.cli("compare", profile.toString(), notJson.toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("CANDIDATE: " + notJson + " is not valid JSON");

        o =
                SimServer.cli(
                        "compare",
                        "--threshold",
                        "ttft=fast",
                        profile.toString(),
                        profile.toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--threshold: 'ttft=fast'");
        o =
                SimServer.cli(
                        "compare",
                        "--threshold",
                        "speed=5%",
                        profile.toString(),
                        profile.toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--threshold: unknown metric 'speed'").contains("ttft, itl");
        o = SimServer.cli("compare", "--alpha", "2", profile.toString(), profile.toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--alpha");
    }

    @Test
    void thresholdsApplyPerMetric(@TempDir Path tmp) throws Exception {
        Path base = tmp.resolve("base.json");
        Path cand = tmp.resolve("cand.json");
        // no histograms: the threshold alone decides, which is what this checks
        Files.writeString(
                base,
                "{\"metrics\": {\"request_rate\": 5.0, \"median_ttft_ms\": 100, \"stage_index\": 0}}");
        Files.writeString(
                cand,
                "{\"metrics\": {\"request_rate\": 5.0, \"median_ttft_ms\": 108, \"stage_index\": 0}}");
        assertThat(SimServer.cli("compare", base.toString(), cand.toString()).code()).isEqualTo(1);
        Outcome loose =
                SimServer.cli(
                        "compare", "--threshold", "ttft=10%", base.toString(), cand.toString());
        assertThat(loose.code()).as(loose.out()).isZero();
        Outcome looseAll =
                SimServer.cli("compare", "--threshold", "10", base.toString(), cand.toString());
        assertThat(looseAll.code()).as(looseAll.out()).isZero();
        Outcome strictTtft =
                SimServer.cli(
                        "compare",
                        "--threshold",
                        "10%",
                        "--threshold",
                        "ttft=5%",
                        base.toString(),
                        cand.toString());
        assertThat(strictTtft.code()).isEqualTo(1);
        assertThat(strictTtft.out()).contains("ttft p50 (ms)").contains("+8.0 %");
    }

    /** A profile without histograms: the threshold alone decides, so the verdict is known. */
    private static Path profile(Path dir, String name, double rate, int stage, double ttftMs)
            throws Exception {
        Files.createDirectories(dir);
        return Files.writeString(
                dir.resolve(name),
                String.format(
                        java.util.Locale.ROOT,
                        "{\"metrics\": {\"request_rate\": %s, \"stage_index\": %d,"
                                + " \"completed\": 50, \"median_ttft_ms\": %s}}",
                        rate,
                        stage,
                        ttftMs));
    }

    /**
     * Several baseline runs before the candidate are pooled: each run's stage at a rate is a repeat
     * of it, so the candidate is judged against the spread between those runs. Three runs 0.2 %
     * apart: the same TTFT is no change, 30 % slower a regression; three runs 4 % apart cannot rule
     * out a 5 % change, so 1 % slower is inconclusive.
     */
    @Test
    void severalBaselineRunsArePooledAsTheNoiseFloor(@TempDir Path tmp) throws Exception {
        List<String> quiet = nights(tmp, "quiet", 100, 100.2, 99.8);
        Path same = tmp.resolve("same");
        profile(same, "s.json", 20, 0, 100.1);
        Outcome o = compare(quiet, same);
        assertThat(o.code()).as(o.out() + o.err()).isZero();
        assertThat(o.out())
                .contains("baseline:  " + quiet.get(1) + " (")
                .contains(
                        "baseline:  3 runs pooled: each run's stages are repeats of the same"
                                + " stages\ncandidate: "
                                + same)
                .contains("3 baseline repeats and one candidate run")
                .contains("verdict: no significant change");

        Path slower = tmp.resolve("slower");
        profile(slower, "s.json", 20, 0, 130);
        o = compare(quiet, slower);
        assertThat(o.code()).as(o.out() + o.err()).isEqualTo(1);
        assertThat(o.out()).contains("verdict: regression");

        List<String> noisy = nights(tmp, "noisy", 100, 104, 96);
        Path onePercent = tmp.resolve("one-percent");
        profile(onePercent, "s.json", 20, 0, 101);
        o = compare(noisy, onePercent);
        assertThat(o.code()).as(o.out() + o.err()).isZero();
        assertThat(o.out())
                .contains("verdict: inconclusive")
                .contains("can be told from the noise of 3 baseline and 1 candidate repeats");

        // A pooled run holding two runs is refused as a lone baseline is, naming which.
        profile(tmp.resolve("noisy-2"), "extra.json", 20, 1, 100);
        o = compare(noisy, onePercent);
        assertThat(o.code()).as(o.out() + o.err()).isEqualTo(2);
        assertThat(o.err()).contains("BASELINE 2: ").contains("holds more than one run");
    }

    /** One-stage runs {@code <prefix>-1..} at 20 req/s with these median TTFTs (ms). */
    private static List<String> nights(Path tmp, String prefix, double... ttftMs) throws Exception {
        List<String> dirs = new java.util.ArrayList<>();
        for (int i = 0; i < ttftMs.length; i++) {
            Path dir = tmp.resolve(prefix + "-" + (i + 1));
            profile(dir, "n.json", 20, 0, ttftMs[i]);
            dirs.add(dir.toString());
        }
        return dirs;
    }

    private static Outcome compare(List<String> baselines, Path candidate) throws Exception {
        List<String> argv = new java.util.ArrayList<>(List.of("compare"));
        argv.addAll(baselines);
        argv.add(candidate.toString());
        return SimServer.cli(argv.toArray(String[]::new));
    }

    @Test
    void aStageIsComparedWithTheStageOfItsRateNotTheStageAtItsPosition(@TempDir Path tmp)
            throws Exception {
        // The first token takes longer the higher the rate, in both runs alike.
        Path one = tmp.resolve("one");
        profile(one, "b20.json", 20, 0, 100);
        Path sweep = tmp.resolve("sweep");
        profile(sweep, "c10.json", 10, 0, 50);
        profile(sweep, "c20.json", 20, 1, 100);
        profile(sweep, "c40.json", 40, 2, 200);
        // Before: 20 req/s against 10 req/s, "improvement"; the other way round "regression".
        Outcome o = SimServer.cli("compare", one.toString(), sweep.toString());
        assertThat(o.code()).as(o.out() + o.err()).isZero();
        assertThat(o.out())
                .contains("stage 1: 20.0 req/s  (baseline b20.json, candidate c20.json)")
                .contains("candidate stage 1 (10.0 req/s, c10.json) has no baseline stage")
                .contains("candidate stage 3 (40.0 req/s, c40.json) has no baseline stage")
                .contains("verdict: no significant change");
        o = SimServer.cli("compare", sweep.toString(), one.toString());
        assertThat(o.code()).as(o.out() + o.err()).isZero();
        assertThat(o.out())
                .contains("stage 1: 20.0 req/s  (baseline c20.json, candidate b20.json)")
                .contains("baseline stage 3 (40.0 req/s, c40.json) has no candidate stage")
                .contains("verdict: no significant change");

        // No rate in common: refused, naming both runs' rates.
        Path other = tmp.resolve("other");
        profile(other, "d25.json", 25, 0, 100);
        o = SimServer.cli("compare", one.toString(), other.toString());
        assertThat(o.code()).as(o.out() + o.err()).isEqualTo(2);
        assertThat(o.err())
                .contains("nothing to pair")
                .contains("baseline (20.0 req/s)")
                .contains("candidate (25.0 req/s)")
                .doesNotContain("Exception");
    }

    @Test
    void closedLoopSweepsAreComparedStageByConcurrency(@TempDir Path tmp) throws Exception {
        // --concurrency 4,8: every stage at an unbounded rate, told apart by its concurrency.
        Path base = tmp.resolve("base");
        Path cand = tmp.resolve("cand");
        for (Path dir : List.of(base, cand)) {
            Files.createDirectories(dir);
            // The candidate ran them the other way round.
            int first = dir.equals(base) ? 4 : 8;
            int second = dir.equals(base) ? 8 : 4;
            for (int stage = 0; stage < 2; stage++) {
                int concurrency = stage == 0 ? first : second;
                Files.writeString(
                        dir.resolve("c" + concurrency + ".json"),
                        "{\"metrics\": {\"request_rate\": \"inf\", \"max_concurrency\": "
                                + concurrency
                                + ", \"stage_index\": "
                                + stage
                                + ", \"completed\": 50, \"median_ttft_ms\": "
                                + 25 * concurrency
                                + "}}");
            }
        }
        // Before: refused, the directories "hold more than one run" (two profiles at rate inf).
        Outcome o = SimServer.cli("compare", base.toString(), cand.toString());
        assertThat(o.code()).as(o.out() + o.err()).isZero();
        assertThat(o.out())
                .contains("stage 1: concurrency 4  (baseline c4.json, candidate c4.json)")
                .contains("stage 2: concurrency 8  (baseline c8.json, candidate c8.json)")
                .contains("verdict: no significant change");
    }

    @Test
    void runsWithoutASuccessfulRequestHaveNothingToCompare(@TempDir Path tmp) throws Exception {
        java.util.concurrent.atomic.AtomicInteger posts =
                new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger failAfter =
                new java.util.concurrent.atomic.AtomicInteger(Integer.MAX_VALUE);
        io.inferencebench.runner.stub.OpenAiStub ok =
                new io.inferencebench.runner.stub.OpenAiStub(1, 0, true);
        try (io.inferencebench.runner.stub.StubServer server =
                new io.inferencebench.runner.stub.StubServer(
                        (req, ex) -> {
                            if (posts.incrementAndGet() > failAfter.get()) {
                                ex.respond(
                                        500,
                                        "application/json",
                                        "{\"error\":{\"message\":\"down\"}}");
                            } else {
                                ok.handle(req, ex);
                            }
                        })) {
            java.util.function.BiFunction<Path, String, Outcome> run =
                    (dir, rates) ->
                            SimServer.cli(
                                    argv(
                                            "run --base-url %s --backend openai --model m"
                                                    + " --random-input-len 8 --random-output-len 4 --no-self-warmup"
                                                    + " --cooldown 0 --progress none --request-rate %s"
                                                    + " --num-prompts 5 --result-dir %s",
                                            server.baseUrl(), rates, dir.toString()));
            Path good = tmp.resolve("good");
            assertRan(run.apply(good, "50,100"));
            failAfter.set(0);
            Path failedA = tmp.resolve("failed-a");
            Path failedB = tmp.resolve("failed-b");
            assertThat(run.apply(failedA, "50,100").code()).isEqualTo(1);
            assertThat(run.apply(failedB, "50,100").code()).isEqualTo(1);
            // Before: "verdict: no significant change", exit 0.
            Outcome o = SimServer.cli("compare", failedA.toString(), failedB.toString());
            assertThat(o.code()).as(o.out() + o.err()).isEqualTo(2);
            assertThat(o.err())
                    .contains("nothing to compare")
                    .contains("neither the baseline nor the candidate has a successful request");
            o = SimServer.cli("compare", good.toString(), failedB.toString());
            assertThat(o.code()).as(o.out() + o.err()).isEqualTo(2);
            assertThat(o.err())
                    .contains("nothing to compare")
                    .contains("the candidate has no successful request");

            // Its second stage failed throughout: that pair is not comparable, not a change.
            posts.set(0);
            failAfter.set(5);
            Path half = tmp.resolve("half");
            assertThat(run.apply(half, "50,100").code()).isEqualTo(1);
            Path json = tmp.resolve("half.json");
            // (a threshold no noise reaches: the first stage, five requests, is no change)
            o =
                    SimServer.cli(
                            "compare",
                            "--threshold",
                            "1000%",
                            good.toString(),
                            half.toString(),
                            "-o",
                            json.toString());
            assertThat(o.code()).as(o.out() + o.err()).isZero();
            assertThat(o.out())
                    .containsPattern(
                            "stage 2: 100\\.0 req/s  \\(baseline .*, candidate .*\\): not"
                                    + " comparable: the candidate has no successful request")
                    .contains("verdict: no significant change");
            JsonNode doc = JSON.readTree(json.toFile());
            assertThat(doc.at("/stages/0/comparable").asBoolean()).isTrue();
            assertThat(doc.at("/stages/1/comparable").asBoolean()).isFalse();
            assertThat(doc.at("/stages/1/not_comparable").asText())
                    .isEqualTo("the candidate has no successful request");
            assertThat(doc.at("/stages/1/metrics")).isEmpty();
        }
    }

    @Test
    void anOutputThatWouldOverwriteOrJoinAnInputIsRefused(@TempDir Path tmp) throws Exception {
        Path base = tmp.resolve("base");
        Path cand = tmp.resolve("cand");
        Path baseProfile = profile(base, "p.json", 5, 0, 100);
        Path candProfile = profile(cand, "p.json", 5, 0, 100);
        String before = Files.readString(candProfile);

        Outcome o =
                SimServer.cli(
                        "compare",
                        "-o",
                        base.resolve("x.json").toString(),
                        base.toString(),
                        cand.toString());
        assertThat(o.code()).as(o.out() + o.err()).isEqualTo(2);
        assertThat(o.err()).contains("--output").contains("BASELINE");
        assertThat(base.resolve("x.json")).doesNotExist();

        o =
                SimServer.cli(
                        "compare",
                        "--output",
                        candProfile.toString(),
                        baseProfile.toString(),
                        candProfile.toString());
        assertThat(o.code()).as(o.out() + o.err()).isEqualTo(2);
        assertThat(o.err()).contains("--output").contains("CANDIDATE");
        assertThat(candProfile).hasContent(before);

        // The input directory through a symbolic link is still the input directory.
        Path link = Files.createSymbolicLink(tmp.resolve("link"), cand);
        o =
                SimServer.cli(
                        "compare",
                        "-o",
                        link.resolve("y.json").toString(),
                        base.toString(),
                        cand.toString());
        assertThat(o.code()).as(o.out() + o.err()).isEqualTo(2);
        assertThat(cand.resolve("y.json")).doesNotExist();

        // A file no input reads is fine, also beside the profiles.
        o =
                SimServer.cli(
                        "compare",
                        "-o",
                        base.resolve("comparison.txt").toString(),
                        base.toString(),
                        cand.toString());
        assertThat(o.code()).as(o.out() + o.err()).isZero();
        assertThat(base.resolve("comparison.txt")).exists();

        o = SimServer.cli("report", "-o", base.resolve("x.json").toString(), base.toString());
        assertThat(o.code()).as(o.out() + o.err()).isEqualTo(2);
        assertThat(o.err()).contains("--output").contains("RUN 1");
        assertThat(base.resolve("x.json")).doesNotExist();
        o =
                SimServer.cli(
                        "report",
                        "-o",
                        candProfile.toString(),
                        baseProfile.toString(),
                        candProfile.toString());
        assertThat(o.code()).as(o.out() + o.err()).isEqualTo(2);
        assertThat(o.err()).contains("--output").contains("RUN 2");
        assertThat(candProfile).hasContent(before);
        o = SimServer.cli("report", "-o", base.resolve("report.html").toString(), base.toString());
        assertThat(o.code()).as(o.out() + o.err()).isZero();
        assertThat(base.resolve("report.html")).exists();
    }

    private static void assertRan(Outcome o) {
        assertThat(o.code()).as(o.out() + o.err()).isZero();
    }

    private static List<JsonNode> profiles(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".json"))
                    .map(
                            p -> {
                                try {
                                    return JSON.readTree(p.toFile());
                                } catch (java.io.IOException e) {
                                    throw new java.io.UncheckedIOException(e);
                                }
                            })
                    .toList();
        }
    }
}
