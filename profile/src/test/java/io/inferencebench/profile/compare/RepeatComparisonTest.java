package io.inferencebench.profile.compare;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Runs with repeated stages are judged across the repeats: on runs whose every repeat wanders by a
 * run-to-run factor of 1 % (the noise a test over one run's requests cannot see), an unchanged
 * target over 10 repeats is no significant change (the repeats can detect a change under the 5 %
 * threshold), a 10 % slower TTFT over 3 repeats a regression, and a 1 % slower one over 3 repeats,
 * whose noise could hide a 5 % change, inconclusive, naming the metric and what they can detect.
 */
class RepeatComparisonTest {

    /** Requests per stage repeat. */
    private static final int REQUESTS = 300;

    /** The TTFT SLO, fixed for every repeat (ms). */
    private static final double SLO_TTFT_MS = 60;

    /**
     * One stage at {@code rate}: {@link #REQUESTS} requests over 30 s whose TTFT ({@code ttft} ms)
     * and inter-token gaps ({@code itl} ms) are this repeat's factor {@code 1 + runNoise *
     * gaussian} times their own ±10 %.
     */
    private static ObjectNode repeat(
            double rate, double ttft, double itl, double runNoise, Random random) {
        double run = 1 + runNoise * random.nextGaussian();
        return ProfileComparisonTest.stage(
                rate, REQUESTS, ttft * run, itl * run, 30, random, 0, SLO_TTFT_MS);
    }

    /** A run of stages at 5 and 10 req/s, {@code repeats} times over, interleaved. */
    private static List<JsonNode> run(int repeats, double ttft, double runNoise, long seed) {
        Random random = new Random(seed);
        List<JsonNode> stages = new ArrayList<>();
        for (int r = 0; r < repeats; r++) {
            for (double rate : new double[] {5, 10}) {
                ObjectNode profile = repeat(rate, ttft, 8, runNoise, random);
                ((ObjectNode) profile.get("metrics")).put("stage_index", stages.size());
                stages.add(profile);
            }
        }
        return stages;
    }

    private static Comparison compare(List<JsonNode> baseline, List<JsonNode> candidate) {
        return ProfileComparison.compare(baseline, candidate, ComparisonOptions.defaults());
    }

    @Test
    void twentySeededPairsOfAnUnchangedTargetWithTenRepeatsAreNoSignificantChange() {
        for (long seed = 1; seed <= 20; seed++) {
            Comparison c = compare(run(10, 40, 0.01, seed), run(10, 40, 0.01, 1000 + seed));
            assertThat(c.verdict())
                    .as("seed %d: %s", seed, c.notes())
                    .isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
            // one comparison per rate, judged across the 10 repeats a side
            assertThat(c.stages()).hasSize(2);
            MetricComparison ttft = metric(c, 0, "ttft_p50");
            assertThat(ttft.test()).isEqualTo(MetricComparison.TEST_REPEATS);
            assertThat(ttft.repeats().baseline()).isEqualTo(10);
            assertThat(ttft.detectable()).isLessThan(0.05);
            assertThat(c.stages().get(0).baselineProfile())
                    .startsWith("baseline profile 1, baseline profile 3, baseline profile 5,")
                    .endsWith("baseline profile 19");
        }
    }

    @Test
    void aTenPercentSlowerTtftIsARegression() {
        Comparison c = compare(run(3, 40, 0.01, 7), run(3, 44, 0.01, 8));
        assertThat(c.verdict()).as("%s", c.notes()).isEqualTo(Verdict.REGRESSION);
        MetricComparison ttft = metric(c, 0, "ttft_p50");
        assertThat(ttft.regressed()).isTrue();
        assertThat(ttft.change()).isBetween(0.07, 0.13);
        assertThat(ttft.pValue()).isLessThan(c.levelPerTest());
    }

    @Test
    void aOnePercentSlowerTtftOverThreeRepeatsIsInconclusiveAndSaysWhatTheyCanDetect() {
        Comparison c = compare(run(3, 40, 0.01, 11), run(3, 40.4, 0.01, 12));
        assertThat(c.verdict()).as("%s", c.notes()).isEqualTo(Verdict.INCONCLUSIVE);
        MetricComparison ttft = metric(c, 0, "ttft_p50");
        assertThat(ttft.significant()).isFalse();
        assertThat(ttft.inconclusive()).isTrue();
        assertThat(ttft.detectable()).isGreaterThan(0.05);
        assertThat(c.notes())
                .anySatisfy(
                        n ->
                                assertThat(n)
                                        .startsWith("inconclusive: ")
                                        .contains("stage 1 ttft_p50")
                                        .containsPattern("beyond ±\\d+\\.\\d %")
                                        .contains("3 repeats a side"));
        JsonNode json = c.toJson();
        JsonNode cell = json.at("/stages/0/metrics/ttft_p50");
        assertThat(json.path("verdict").asText()).isEqualTo("inconclusive");
        assertThat(cell.path("test").asText()).isEqualTo("welch-repeats");
        assertThat(cell.path("repeats").path("candidate").asInt()).isEqualTo(3);
        assertThat(cell.path("detectable_change").asDouble()).isEqualTo(ttft.detectable());
        assertThat(cell.path("inconclusive").asBoolean()).isTrue();
    }

    @Test
    void oneRunAgainstABaselineOfTenRepeatsIsJudgedAgainstTheirNoise() {
        // a quieter target (0.5 % between runs): one run can then rule out a 5 % change
        List<JsonNode> baseline = run(10, 40, 0.005, 31);
        Comparison same = compare(baseline, run(1, 40, 0.005, 32));
        assertThat(same.verdict()).as("%s", same.notes()).isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
        MetricComparison ttft = metric(same, 0, "ttft_p50");
        assertThat(ttft.test()).isEqualTo(MetricComparison.TEST_REPEATS);
        assertThat(ttft.repeats().baseline()).isEqualTo(10);
        assertThat(ttft.repeats().candidate()).isEqualTo(1);
        assertThat(ttft.detectable()).isLessThan(0.05);
        assertThat(same.notes())
                .anySatisfy(
                        n ->
                                assertThat(n)
                                        .contains("10 baseline repeats and one candidate run")
                                        .contains("prediction interval"));
        Comparison slower = compare(baseline, run(1, 44, 0.005, 33));
        // at 1 % between runs, ten repeats and one run cannot rule out 5 %: inconclusive
        Comparison noisy = compare(run(10, 40, 0.01, 31), run(1, 40, 0.01, 32));
        assertThat(noisy.verdict()).isEqualTo(Verdict.INCONCLUSIVE);
        assertThat(slower.verdict()).as("%s", slower.notes()).isEqualTo(Verdict.REGRESSION);
        assertThat(metric(slower, 0, "ttft_p50").regressed()).isTrue();
    }

    @Test
    void aTailDecidesOnlyWithTailsAgainstOneRunOrItsRepeats() {
        // 3 % of the one run's first tokens twice as late (a pause of its client): its TTFT p99
        // doubles while its median stays, far outside ten quiet repeats' spread.
        List<JsonNode> baseline = run(10, 40, 0.005, 31);
        Random random = new Random(35);
        List<JsonNode> paused = paused(1, random);
        Comparison c = compare(baseline, paused);
        MetricComparison p99 = metric(c, 0, "ttft_p99");
        assertThat(p99.test()).isEqualTo(MetricComparison.TEST_REPEATS);
        assertThat(p99.regressed()).isTrue();
        assertThat(metric(c, 0, "ttft_p50").regressed()).isFalse();
        assertThat(c.verdict()).as("%s", c.notes()).isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
        assertThat(c.notes())
                .anySatisfy(n -> assertThat(n).contains("p90/p99 change(s) are not part of"));
        Comparison withTails =
                ProfileComparison.compare(
                        baseline, paused, ComparisonOptions.defaults().withTailsInVerdict(true));
        assertThat(withTails.verdict()).isEqualTo(Verdict.REGRESSION);
        // Repeated on both sides the tail tests significant too, yet still only informs: the
        // repeats of one run share its machine, whose state moves all of them alike.
        List<JsonNode> pausedRepeats = paused(3, random);
        Comparison repeated = compare(baseline, pausedRepeats);
        List<MetricComparison> regressed =
                repeated.stages().stream()
                        .flatMap(s -> s.metrics().stream())
                        .filter(MetricComparison::regressed)
                        .toList();
        assertThat(regressed).isNotEmpty();
        assertThat(regressed)
                .allSatisfy(
                        m -> {
                            assertThat(m.statistic()).isIn("p90", "p99");
                            assertThat(m.repeats().candidate()).isEqualTo(3);
                        });
        assertThat(repeated.verdict())
                .as("%s", repeated.notes())
                .isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
        assertThat(repeated.notes())
                .anySatisfy(
                        n ->
                                assertThat(n)
                                        .contains("p90/p99 change(s) are not part of")
                                        .contains("--tails"));
        assertThat(
                        ProfileComparison.compare(
                                        baseline,
                                        pausedRepeats,
                                        ComparisonOptions.defaults().withTailsInVerdict(true))
                                .verdict())
                .isEqualTo(Verdict.REGRESSION);
    }

    /**
     * A run at 5 and 10 req/s, {@code repeats} times over, whose first 3 % of first tokens in each
     * stage came twice as late.
     */
    private static List<JsonNode> paused(int repeats, Random random) {
        List<JsonNode> stages = new ArrayList<>();
        for (int r = 0; r < repeats; r++) {
            for (double rate : new double[] {5, 10}) {
                ObjectNode profile =
                        ProfileComparisonTest.stage(
                                rate, REQUESTS, 40, 8, 30, random, 0.03, SLO_TTFT_MS);
                ((ObjectNode) profile.get("metrics")).put("stage_index", stages.size());
                stages.add(profile);
            }
        }
        return stages;
    }

    @Test
    void theSameRunsWithoutRepeatsAreJudgedRequestByRequestAsBefore() {
        Comparison c = compare(run(1, 40, 0.01, 21), run(1, 40, 0.01, 22));
        MetricComparison ttft = metric(c, 0, "ttft_p50");
        assertThat(ttft.test()).isEqualTo(MetricComparison.TEST_MANN_WHITNEY);
        assertThat(ttft.repeats()).isNull();
        assertThat(ttft.detectable()).isNull();
        assertThat(c.verdict()).isNotEqualTo(Verdict.INCONCLUSIVE);
    }

    /**
     * 8 repeats of one stage at a nominal 40 req/s whose Poisson schedule drew its own rate each
     * repeat (seed {@code scheduleSeed}: 40 req/s ± 12 %, 100 requests, the stage's throughput
     * following the arrivals drawn), served with TTFT {@code ttft} ms and a run-to-run factor of 1
     * % drawn from {@code serverSeed}.
     */
    private static List<JsonNode> poissonRepeats(long scheduleSeed, long serverSeed, double ttft) {
        Random schedule = new Random(scheduleSeed);
        Random server = new Random(serverSeed);
        List<JsonNode> stages = new ArrayList<>();
        for (int r = 0; r < 8; r++) {
            double drawn = 40 * (1 + 0.12 * schedule.nextGaussian());
            double run = 1 + 0.01 * server.nextGaussian();
            ObjectNode profile =
                    ProfileComparisonTest.stage(
                            40, 100, ttft * run, 5 * run, 99 / drawn, server, 0, SLO_TTFT_MS);
            ObjectNode metrics = (ObjectNode) profile.get("metrics");
            metrics.put("stage_index", r);
            metrics.put("requests_due", 100);
            metrics.put("scheduled_rate", drawn);
            ObjectNode dimensions =
                    profile.has("dimensions")
                            ? (ObjectNode) profile.get("dimensions")
                            : profile.putObject("dimensions");
            dimensions.put("repeat", (r + 1) + "/8");
            stages.add(profile);
        }
        return stages;
    }

    /**
     * Measured on the simulator (bench/repeat_pairs.py): repeats of a Poisson stage draw 29 to 49
     * req/s where 40 were asked, and each repeat's throughput follows its draw, so Welch's test
     * over the repeats could not rule out a 13 to 18 % throughput change between two runs of one
     * unchanged server and every such comparison was inconclusive. Runs with the same seed draw the
     * same schedules repeat by repeat: paired, the draw cancels.
     */
    @Test
    void repeatsThatDrewTheSameSchedulesArePairedSoTheDrawIsNotNoise() {
        List<JsonNode> baseline = poissonRepeats(5, 1, 40);
        Comparison paired = compare(baseline, poissonRepeats(5, 2, 40));
        assertThat(paired.verdict())
                .as("%s", paired.notes())
                .isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
        MetricComparison throughput = metric(paired, 0, "output_throughput");
        assertThat(throughput.test()).isEqualTo(MetricComparison.TEST_PAIRED_REPEATS);
        assertThat(throughput.repeats().degreesOfFreedom()).isEqualTo(7);
        assertThat(throughput.detectable()).isLessThan(0.05);
        assertThat(metric(paired, 0, "ttft_p50").test())
                .isEqualTo(MetricComparison.TEST_PAIRED_REPEATS);
        assertThat(paired.notes())
                .anySatisfy(n -> assertThat(n).contains("drew the same schedules pair by pair"));

        // other draws (another seed): judged side against side, the draw is noise
        Comparison unpaired = compare(baseline, poissonRepeats(6, 2, 40));
        MetricComparison welch = metric(unpaired, 0, "output_throughput");
        assertThat(welch.test()).isEqualTo(MetricComparison.TEST_REPEATS);
        assertThat(welch.detectable()).isGreaterThan(0.05);
        assertThat(unpaired.verdict()).isEqualTo(Verdict.INCONCLUSIVE);

        // repeats that all drew one schedule (constant arrivals) have no draw to cancel
        List<JsonNode> constant = poissonRepeats(5, 1, 40);
        List<JsonNode> constantToo = poissonRepeats(5, 2, 40);
        for (List<JsonNode> side : List.of(constant, constantToo)) {
            for (JsonNode stage : side) {
                ((ObjectNode) stage.get("metrics")).put("scheduled_rate", 40.0);
            }
        }
        assertThat(metric(compare(constant, constantToo), 0, "ttft_p50").test())
                .isEqualTo(MetricComparison.TEST_REPEATS);

        // paired, a first token 10 % later is a regression
        Comparison slower = compare(baseline, poissonRepeats(5, 3, 44));
        assertThat(slower.verdict()).as("%s", slower.notes()).isEqualTo(Verdict.REGRESSION);
        assertThat(metric(slower, 0, "ttft_p50").regressed()).isTrue();
    }

    private static MetricComparison metric(Comparison c, int stage, String name) {
        return c.stages().get(stage).metrics().stream()
                .filter(m -> m.name().equals(name))
                .findFirst()
                .orElseThrow();
    }
}
