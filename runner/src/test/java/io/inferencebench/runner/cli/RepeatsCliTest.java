package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.cli.SimServer.Outcome;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --repeats N} against model-sim on loopback runs the stages N times over, interleaved,
 * each repeat a profile; {@code compare} then judges each statistic across the repeats (Welch's
 * t-test), so a server whose first token comes 30 % later is a regression of every repeat's median,
 * found by the repeat test.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RepeatsCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final String[] LOAD =
            argv(
                    "--request-rate 20,40 --num-prompts 60 --arrival constant --repeats 3 --seed 1"
                            + " --num-warmups 10");

    @Test
    void repeatsRunInterleavedAndCompareJudgesAcrossThem(@TempDir Path tmp) throws Exception {
        Path first = tmp.resolve("first");
        Path slower = tmp.resolve("slower");
        try (SimServer sim =
                new SimServer(
                        tmp.resolve("sim.log"),
                        argv("--time-to-first-token 20 --inter-token-latency 2"))) {
            Outcome run = SimServer.cli(sim.run(first, LOAD));
            assertRan(run);
            // the summary gives each figure's interval across the three repeats, per stage
            assertThat(run.out())
                    .contains("across repeats (mean ± 95 % interval of each repeat's value):")
                    .containsPattern("(?m)^\\s*1\\s+20\\.0\\s+3\\s+[0-9.]+ ± [0-9.]+")
                    .containsPattern("(?m)^\\s*2\\s+40\\.0\\s+3\\s+[0-9.]+ ± [0-9.]+");
        }
        try (SimServer sim =
                new SimServer(
                        tmp.resolve("sim-slow.log"),
                        argv("--time-to-first-token 26 --inter-token-latency 2"))) {
            assertRan(SimServer.cli(sim.run(slower, LOAD)));
        }
        // six stages: 20, 40, 20, 40, 20, 40 req/s, each its own profile
        List<JsonNode> stages = profiles(first);
        assertThat(stages).hasSize(6);
        List<String> rates = new ArrayList<>();
        for (JsonNode p : stages) {
            rates.add(p.at("/metrics/request_rate").asText());
            assertThat(p.at("/metrics/completed").asLong()).isEqualTo(60);
        }
        assertThat(rates).containsExactly("20.0", "40.0", "20.0", "40.0", "20.0", "40.0");
        assertThat(stages.stream().map(p -> p.at("/dimensions/repeat").asText()).toList())
                .containsExactly("1/3", "1/3", "2/3", "2/3", "3/3", "3/3");

        Path json = tmp.resolve("compare.json");
        Outcome o =
                SimServer.cli(
                        "compare", first.toString(), slower.toString(), "-o", json.toString());
        assertThat(o.code()).as(o.out() + o.err()).isEqualTo(1);
        assertThat(o.out())
                .contains("verdict: regression")
                .contains("3 repeats a side")
                .contains("welch-repeats p=");
        JsonNode doc = JSON.readTree(json.toFile());
        assertThat(doc.get("stages")).hasSize(2);
        JsonNode ttft = doc.at("/stages/0/metrics/ttft_p50");
        assertThat(ttft.path("test").asText()).isEqualTo("welch-repeats");
        assertThat(ttft.path("repeats").path("baseline").asInt()).isEqualTo(3);
        assertThat(ttft.path("significant").asBoolean()).isTrue();
        assertThat(ttft.path("change").asDouble()).isBetween(0.15, 0.45);
    }

    @Test
    void badRepeatsAreRefusedNamingTheFlag(@TempDir Path tmp) {
        Outcome zero =
                SimServer.cli(
                        argv(
                                "run --base-url http://127.0.0.1:9 --model m --request-rate 5"
                                        + " --num-prompts 5 --repeats 0 --result-dir "
                                        + tmp.resolve("r")));
        assertThat(zero.code()).isEqualTo(2);
        assertThat(zero.err()).contains("--repeats: must be 1 to 50, got 0");
        Outcome tooMany =
                SimServer.cli(
                        argv(
                                "run --base-url http://127.0.0.1:9 --model m --request-rate 1,2,3"
                                        + " --num-prompts 5 --repeats 17 --result-dir "
                                        + tmp.resolve("r2")));
        assertThat(tooMany.code()).isEqualTo(2);
        assertThat(tooMany.err()).contains("repeats times the stages").contains("17 x 3");
        Outcome search =
                SimServer.cli(
                        argv(
                                "search --base-url http://127.0.0.1:9 --model m --min-rate 1"
                                        + " --max-rate 8 --goodput ttft:500 --repeats 3"
                                        + " --result-dir "
                                        + tmp.resolve("s")));
        assertThat(search.code()).isEqualTo(2);
        assertThat(search.err()).contains("--repeats: search decides its probes as it goes");
    }

    private static void assertRan(Outcome o) {
        assertThat(o.code()).as(o.out() + o.err()).isZero();
    }

    /** The profiles of a result folder, by stage. */
    private static List<JsonNode> profiles(Path dir) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : files.filter(f -> f.toString().endsWith(".json")).toList()) {
                JsonNode doc = JSON.readTree(p.toFile());
                if (doc.has("metrics")) {
                    out.add(doc);
                }
            }
        }
        out.sort(Comparator.comparingInt(d -> d.at("/metrics/stage_index").asInt()));
        return out;
    }
}
