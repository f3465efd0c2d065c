package io.inferencebench.profile.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ProfileComparisonTest {

    private static final ProfileContext CONTEXT =
            new ProfileContext(
                    "vllm",
                    "m",
                    null,
                    "vllm",
                    Instant.parse("2026-01-01T00:00:00Z"),
                    null,
                    null,
                    1,
                    "test",
                    Map.of());

    /**
     * A stage of {@code n} requests whose TTFT is {@code ttft * (1 + 0.1 * gaussian)} ms and whose
     * 16 output tokens come {@code itl} ms apart, over a stage of {@code seconds}.
     */
    static ObjectNode profile(
            double rate, int n, double ttft, double itl, double seconds, long seed) {
        return profile(rate, n, ttft, itl, seconds, seed, 0, 1.2);
    }

    /**
     * The same, with the first token of the first {@code slowShare} of the requests twice as late,
     * and a TTFT SLO of {@code sloFactor} times {@code ttft}.
     */
    static ObjectNode profile(
            double rate,
            int n,
            double ttft,
            double itl,
            double seconds,
            long seed,
            double slowShare,
            double sloFactor) {
        return stage(rate, n, ttft, itl, seconds, new Random(seed), slowShare, ttft * sloFactor);
    }

    /**
     * A stage of {@code n} requests drawn from {@code random}: TTFT {@code ttft * (1 + 0.1 *
     * gaussian)} ms (twice that for the first {@code slowShare}), 16 output tokens {@code itl * (1
     * + 0.1 * gaussian)} ms apart, over {@code seconds}, a TTFT SLO of {@code sloTtftMs}.
     */
    static ObjectNode stage(
            double rate,
            int n,
            double ttft,
            double itl,
            double seconds,
            Random random,
            double slowShare,
            double sloTtftMs) {
        StageResult s = new StageResult();
        s.requestedRate = rate;
        s.firstDispatchEpochNanos = 1_000_000_000L;
        s.lastDispatchEpochNanos = s.firstDispatchEpochNanos + (long) (seconds * 1e9);
        s.lastCompletionEpochNanos = s.lastDispatchEpochNanos;
        s.sloTtftMs = sloTtftMs;
        for (int i = 0; i < n; i++) {
            double first = ttft * (1 + 0.1 * random.nextGaussian()) * (i < slowShare * n ? 2 : 1);
            double latency = first;
            for (int t = 1; t < 16; t++) {
                double gap = itl * (1 + 0.1 * random.nextGaussian());
                s.itlMs.record(gap);
                latency += gap;
            }
            s.sent++;
            s.completed++;
            s.ttftMs.record(first);
            s.latencyMs.record(latency);
            s.tpotMs.record((latency - first) / 15);
            s.perTokenLatencySec.record(latency / 1000 / 32);
            s.perOutputTokenLatencyMs.record(latency / 16);
            s.inputLen.record(16);
            s.outputLen.record(16);
            s.totalInputTokens += 16;
            s.totalOutputTokens += 16;
            s.scheduleLagMs.record(0.1);
            s.slotWaitMs.record(0);
            if (first <= s.sloTtftMs) {
                s.goodputRequests++;
            }
        }
        return LpgProfileWriter.write(s, CONTEXT);
    }

    /** Compares one baseline stage with one candidate stage under the default thresholds. */
    private static Comparison compareDefaults(JsonNode baseline, JsonNode candidate) {
        return ProfileComparison.compare(
                List.of(baseline), List.of(candidate), ComparisonOptions.defaults());
    }

    @Test
    void theSameDistributionIsNoSignificantChange() {
        Comparison c =
                ProfileComparison.compare(
                        List.of(profile(5, 400, 50, 10, 80, 1), profile(10, 400, 50, 10, 40, 2)),
                        List.of(profile(5, 400, 50, 10, 80, 3), profile(10, 400, 50, 10, 40, 4)),
                        ComparisonOptions.defaults());
        assertThat(c.verdict()).isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
        assertThat(c.stageMatching()).isEqualTo(Comparison.MATCHED_BY_RATE);
        assertThat(c.stages()).hasSize(2);
        MetricComparison ttft = c.stages().get(0).metric("ttft_p50");
        assertThat(ttft.test()).isEqualTo(MetricComparison.TEST_MANN_WHITNEY);
        assertThat(ttft.pValue()).isGreaterThan(0.0);
        assertThat(c.stages().get(0).metric("itl_p99").test())
                .isEqualTo(MetricComparison.TEST_QUANTILE);
        assertThat(c.stages().get(0).metric("goodput").test())
                .isEqualTo(MetricComparison.TEST_TWO_PROPORTION);
    }

    @Test
    void aSlowerTailAloneIsShownButDecidesTheVerdictOnlyWhenTailsAreIncluded() {
        // 8 % of the candidate's first tokens twice as late, as a few busy seconds on the client
        // machine make them: p90/p99 significantly worse, the median not beyond 5 %
        // (an SLO all of them meet: goodput, which does decide the verdict, stays the same)
        List<JsonNode> base = List.of(profile(5, 600, 50, 10, 120, 1, 0, 3));
        List<JsonNode> cand = List.of(profile(5, 600, 50, 10, 120, 2, 0.08, 3));
        Comparison byDefault = ProfileComparison.compare(base, cand, ComparisonOptions.defaults());
        assertThat(byDefault.stages().get(0).metric("ttft_p99").regressed()).isTrue();
        assertThat(byDefault.stages().get(0).metric("ttft_p50").significant()).isFalse();
        assertThat(byDefault.regressions()).extracting(MetricComparison::name).isEmpty();
        assertThat(byDefault.verdict()).isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
        assertThat(byDefault.notes()).anyMatch(n -> n.contains("not part of the verdict"));

        Comparison withTails =
                ProfileComparison.compare(
                        base, cand, ComparisonOptions.defaults().withTailsInVerdict(true));
        assertThat(withTails.verdict()).isEqualTo(Verdict.REGRESSION);
        assertThat(withTails.regressions()).extracting(MetricComparison::name).contains("ttft_p99");
    }

    @Test
    void slowerFirstTokensAreARegressionOfTheCandidate() {
        JsonNode base = profile(5, 400, 50, 10, 80, 1);
        JsonNode slow = profile(5, 400, 65, 10, 80, 2);
        Comparison c = compareDefaults(base, slow);
        assertThat(c.verdict()).isEqualTo(Verdict.REGRESSION);
        StageComparison stage = c.stages().get(0);
        for (String name : List.of("ttft_p50", "ttft_p90")) {
            MetricComparison m = stage.metric(name);
            assertThat(m.significant()).as(name).isTrue();
            assertThat(m.worse()).as(name).isEqualTo(Side.CANDIDATE);
            assertThat(m.change()).as(name).isBetween(0.2, 0.4);
            String key = (name.endsWith("p50") ? "median" : name.substring(5)) + "_ttft_ms";
            assertThat(m.baseline()).isEqualTo(base.get("metrics").get(key).asDouble());
        }
        assertThat(stage.metric("itl_p50").significant()).isFalse();
        // p99 of 400 requests rests on the slowest four: +30 % is beyond the threshold but not
        // proven (0 of 400 against 8 of 400 above the pooled p99); with 4,000 it is.
        MetricComparison tail = stage.metric("ttft_p99");
        assertThat(tail.beyondThreshold()).isTrue();
        assertThat(tail.beyondNoise()).isFalse();
        Comparison large =
                compareDefaults(profile(5, 4000, 50, 10, 800, 1), profile(5, 4000, 65, 10, 800, 2));
        assertThat(large.stages().get(0).metric("ttft_p99").significant()).isTrue();
        assertThat(c.regressions()).extracting(MetricComparison::name).contains("ttft_p50");
        JsonNode json = c.toJson();
        assertThat(json.get("verdict").asText()).isEqualTo("regression");
        JsonNode cell = json.get("stages").get(0).get("metrics").get("ttft_p90");
        assertThat(cell.get("significant").asBoolean()).isTrue();
        assertThat(cell.get("baseline").asDouble()).isEqualTo(stage.metric("ttft_p90").baseline());
        assertThat(cell.get("change").asDouble()).isEqualTo(stage.metric("ttft_p90").change());

        Comparison reversed = compareDefaults(slow, base);
        assertThat(reversed.verdict()).isEqualTo(Verdict.IMPROVEMENT);
    }

    @Test
    void aChangeWithinTheThresholdIsNotSignificantEvenWhenTheTestSeesIt() {
        // 20,000 requests: a 3 % shift is far beyond sampling noise but below the 5 % threshold
        Comparison c =
                compareDefaults(
                        profile(5, 20000, 50, 10, 80, 1), profile(5, 20000, 51.5, 10, 80, 2));
        MetricComparison ttft = c.stages().get(0).metric("ttft_p50");
        assertThat(ttft.beyondNoise()).isTrue();
        assertThat(ttft.beyondThreshold()).isFalse();
        assertThat(c.verdict()).isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
        Comparison strict =
                ProfileComparison.compare(
                        List.of(profile(5, 20000, 50, 10, 80, 1)),
                        List.of(profile(5, 20000, 51.5, 10, 80, 2)),
                        ComparisonOptions.defaults().withThreshold(Metric.TTFT, 0.01));
        assertThat(strict.verdict()).isEqualTo(Verdict.REGRESSION);
        assertThat(strict.stages().get(0).metric("ttft_p50").threshold()).isEqualTo(0.01);
    }

    @Test
    void aLargeChangeOfATinySampleIsWithinTheNoise() {
        // p99 of 12 requests is their maximum: one slow request moves it far, and proves nothing
        ObjectNode base = profile(5, 12, 50, 10, 3, 1);
        ObjectNode cand = profile(5, 12, 50, 10, 3, 2);
        Comparison c = compareDefaults(base, cand);
        MetricComparison p99 = c.stages().get(0).metric("ttft_p99");
        assertThat(p99.test()).isEqualTo(MetricComparison.TEST_QUANTILE);
        assertThat(p99.beyondNoise()).isFalse();
        assertThat(p99.significant()).isFalse();
    }

    @Test
    void withoutHistogramsTheThresholdDecidesAndTheNotesSaySo() {
        ObjectNode base = profile(5, 400, 50, 10, 80, 1);
        ((ObjectNode) base.get("metrics")).remove(LpgProfileWriter.HISTOGRAMS_KEY);
        ObjectNode cand = profile(5, 400, 65, 10, 80, 2);
        Comparison c =
                ProfileComparison.compareLabeled(
                        List.of(new LabeledProfile("old.json", base)),
                        List.of(new LabeledProfile("new.json", cand)),
                        ComparisonOptions.defaults());
        MetricComparison ttft = c.stages().get(0).metric("ttft_p50");
        assertThat(ttft.test()).isEqualTo(MetricComparison.TEST_THRESHOLD_ONLY);
        assertThat(ttft.beyondNoise()).isNull();
        assertThat(ttft.significant()).isTrue();
        assertThat(c.notes())
                .anySatisfy(
                        n ->
                                assertThat(n)
                                        .contains("ttft")
                                        .contains("baseline old.json has no histogram"));
        assertThat(c.verdict()).isEqualTo(Verdict.REGRESSION);
    }

    /** {@code profile} as stage {@code index} (0-based) of its run. */
    static ObjectNode atStage(ObjectNode profile, int index) {
        ((ObjectNode) profile.get("metrics")).put("stage_index", index);
        return profile;
    }

    /** {@code profile} as a closed-loop stage: unbounded rate, {@code concurrency} in flight. */
    static ObjectNode closedLoop(ObjectNode profile, int concurrency) {
        ((ObjectNode) profile.get("metrics")).put("request_rate", "inf");
        ((ObjectNode) profile.get("metrics")).put("max_concurrency", concurrency);
        return profile;
    }

    /** A stage of {@code n} requests at {@code rate} that all failed (HTTP 5xx). */
    static ObjectNode allFailed(double rate, int n) {
        StageResult s = new StageResult();
        s.requestedRate = rate;
        s.firstDispatchEpochNanos = 1_000_000_000L;
        s.lastDispatchEpochNanos = s.firstDispatchEpochNanos + 2_000_000_000L;
        s.lastCompletionEpochNanos = s.lastDispatchEpochNanos;
        s.sloTtftMs = 60.0;
        for (int i = 0; i < n; i++) {
            s.sent++;
            s.countFailure("http_5xx");
        }
        return LpgProfileWriter.write(s, CONTEXT);
    }

    @Test
    void aStageIsPairedWithTheStageOfItsRateNotWithTheStageAtItsPosition() {
        // One stage at 20 req/s against a sweep 10, 20, 40 whose latency grows with the rate:
        // by position 20 met 10 (a 2x "regression"); by rate it meets 20 (unchanged).
        List<LabeledProfile> one =
                List.of(
                        new LabeledProfile(
                                "b20.json", atStage(profile(20, 400, 100, 10, 20, 1), 0)));
        List<LabeledProfile> sweep =
                List.of(
                        new LabeledProfile("c10.json", atStage(profile(10, 400, 50, 10, 40, 2), 0)),
                        new LabeledProfile(
                                "c20.json", atStage(profile(20, 400, 100, 10, 20, 3), 1)),
                        new LabeledProfile(
                                "c40.json", atStage(profile(40, 400, 200, 10, 10, 4), 2)));
        for (boolean reversed : List.of(false, true)) {
            Comparison c =
                    reversed
                            ? ProfileComparison.compareLabeled(
                                    sweep, one, ComparisonOptions.defaults())
                            : ProfileComparison.compareLabeled(
                                    one, sweep, ComparisonOptions.defaults());
            assertThat(c.stageMatching()).isEqualTo(Comparison.MATCHED_BY_RATE);
            assertThat(c.stages()).hasSize(1);
            StageComparison s = c.stages().get(0);
            assertThat(s.baselineRate()).isEqualTo(20.0);
            assertThat(s.candidateRate()).isEqualTo(20.0);
            assertThat(reversed ? s.baselineProfile() : s.candidateProfile()).isEqualTo("c20.json");
            assertThat(c.verdict())
                    .as(c.toJson().toString())
                    .isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
            String side = reversed ? "baseline" : "candidate";
            assertThat(c.notes())
                    .anySatisfy(
                            n ->
                                    assertThat(n)
                                            .contains(side + " stage 1 (10.0 req/s, c10.json)")
                                            .contains(
                                                    "no "
                                                            + (reversed ? "candidate" : "baseline")
                                                            + " stage"))
                    .anySatisfy(
                            n -> assertThat(n).contains(side + " stage 3 (40.0 req/s, c40.json)"));
        }
    }

    @Test
    void stagesWithoutACommonRateAreRefusedNotPairedByPosition() {
        assertThatThrownBy(
                        () ->
                                ProfileComparison.compare(
                                        List.of(
                                                atStage(profile(5, 200, 50, 10, 40, 1), 0),
                                                atStage(profile(10, 200, 50, 10, 20, 2), 1)),
                                        List.of(
                                                atStage(profile(6, 200, 50, 10, 40, 3), 0),
                                                atStage(profile(12, 200, 50, 10, 10, 4), 1)),
                                        ComparisonOptions.defaults()))
                .isInstanceOf(NotComparableException.class)
                .hasMessageContaining("no stage of the baseline (5.0 req/s, 10.0 req/s)")
                .hasMessageContaining("candidate (6.0 req/s, 12.0 req/s)");
        // The same rate twice on one side and once on the other: the two are repeats of that
        // stage, and the one run is judged against their spread.
        Comparison repeats =
                ProfileComparison.compare(
                        List.of(
                                atStage(profile(5, 200, 50, 10, 40, 1), 0),
                                atStage(profile(5, 200, 50, 10, 40, 2), 1)),
                        List.of(atStage(profile(5, 200, 50, 10, 40, 3), 0)),
                        ComparisonOptions.defaults());
        assertThat(repeats.stages()).singleElement();
        assertThat(repeats.stages().get(0).metrics())
                .allMatch(m -> m.test().equals(MetricComparison.TEST_REPEATS));
        assertThat(repeats.notes())
                .anySatisfy(
                        n -> assertThat(n).contains("2 baseline repeats and one candidate run"));
    }

    @Test
    void closedLoopStagesArePairedByTheirConcurrency() {
        // Both runs at concurrency 4 and 8 (unbounded rate), the candidate in the other order;
        // twice the requests in flight, twice the first-token time.
        List<LabeledProfile> base =
                List.of(
                        new LabeledProfile(
                                "b4.json",
                                atStage(closedLoop(profile(1, 400, 50, 10, 40, 1), 4), 0)),
                        new LabeledProfile(
                                "b8.json",
                                atStage(closedLoop(profile(1, 400, 100, 10, 40, 2), 8), 1)));
        List<LabeledProfile> cand =
                List.of(
                        new LabeledProfile(
                                "c8.json",
                                atStage(closedLoop(profile(1, 400, 100, 10, 40, 3), 8), 0)),
                        new LabeledProfile(
                                "c4.json",
                                atStage(closedLoop(profile(1, 400, 50, 10, 40, 4), 4), 1)));
        Comparison c = ProfileComparison.compareLabeled(base, cand, ComparisonOptions.defaults());
        assertThat(c.stages())
                .extracting(StageComparison::baselineProfile, StageComparison::candidateProfile)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("b4.json", "c4.json"),
                        org.assertj.core.groups.Tuple.tuple("b8.json", "c8.json"));
        assertThat(c.verdict()).isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
    }

    @Test
    void twoRunsWithoutASuccessfulRequestHaveNothingToCompare() {
        assertThatThrownBy(() -> compareDefaults(allFailed(5, 20), allFailed(5, 20)))
                .isInstanceOf(NotComparableException.class)
                .hasMessageContaining("nothing to compare")
                .hasMessageContaining(
                        "neither the baseline nor the candidate has a successful" + " request");
        assertThatThrownBy(() -> compareDefaults(profile(5, 200, 50, 10, 40, 1), allFailed(5, 20)))
                .isInstanceOf(NotComparableException.class)
                .hasMessageContaining("nothing to compare")
                .hasMessageContaining("the candidate has no successful request");
    }

    @Test
    void aStageWithoutASuccessfulRequestOnOneSideIsNotComparableAndNoChange() {
        List<JsonNode> base =
                List.of(
                        atStage(profile(5, 200, 50, 10, 40, 1), 0),
                        atStage(profile(10, 200, 50, 10, 20, 2), 1));
        List<JsonNode> cand =
                List.of(atStage(profile(5, 200, 50, 10, 40, 3), 0), atStage(allFailed(10, 20), 1));
        Comparison c = ProfileComparison.compare(base, cand, ComparisonOptions.defaults());
        assertThat(c.stages()).hasSize(2);
        assertThat(c.stages().get(1).metrics()).isEmpty();
        assertThat(c.verdict()).isEqualTo(Verdict.NO_SIGNIFICANT_CHANGE);
        assertThat(c.notes())
                .anySatisfy(
                        n ->
                                assertThat(n)
                                        .contains("stage 2 (10.0 req/s)")
                                        .contains("not comparable")
                                        .contains("the candidate has no successful request"));
        JsonNode stage = c.toJson().get("stages").get(1);
        assertThat(stage.get("comparable").asBoolean()).isFalse();
        assertThat(stage.get("not_comparable").asText())
                .isEqualTo("the candidate has no successful request");
        assertThat(c.toJson().get("stages").get(0).get("comparable").asBoolean()).isTrue();
    }

    @Test
    void aStatisticOneSideLacksIsAbsentWithItsReasonNeverZeroAndOutOfTheVerdict() {
        ObjectNode ours = profile(10, 300, 50, 5, 30, 1);
        // another tool's stage: p50 and p99 only, TTFT much worse; no p90, no TPOT at all
        ObjectNode peer = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        ObjectNode m = peer.putObject("metrics");
        m.put("request_rate", 10.0);
        m.put("median_ttft_ms", 80.0);
        m.put("p99_ttft_ms", 120.0);
        m.put("median_itl_ms", 5.0);
        m.put(
                "output_tokens_per_min",
                ours.path("metrics").path("output_tokens_per_min").asDouble());
        ObjectNode source = peer.putObject("source");
        source.put("kind", "vllm-bench-serve");
        source.put("tool", "vllm bench serve");
        source.put("version", "0.33.0");
        Comparison c =
                ProfileComparison.compareLabeled(
                        List.of(new LabeledProfile("ours.json", ours)),
                        List.of(new LabeledProfile("vllm.json", peer)),
                        ComparisonOptions.defaults().withTailsInVerdict(true));
        StageComparison s = c.stages().get(0);
        MetricComparison p90 = s.metric("ttft_p90");
        assertThat(p90.baseline()).isNotNull();
        assertThat(p90.candidate()).isNull();
        assertThat(p90.change()).isNull();
        assertThat(p90.significant()).isFalse();
        assertThat(p90.absent())
                .isEqualTo(
                        "candidate: vllm bench serve 0.33.0 (vllm.json) does not report ttft p90");
        // what both have is compared, and decides
        assertThat(s.metric("ttft_p50").candidate()).isEqualTo(80.0);
        assertThat(s.metric("ttft_p50").absent()).isNull();
        assertThat(c.verdict()).isEqualTo(Verdict.REGRESSION);
        assertThat(c.regressions()).extracting(MetricComparison::name).doesNotContain("ttft_p90");
        // a family only one side has
        assertThat(s.metric("tpot_p50").candidate()).isNull();
        assertThat(s.metric("tpot_p50").absent()).contains("does not report tpot p50");
        assertThat(
                        c.toJson()
                                .path("stages")
                                .get(0)
                                .path("metrics")
                                .path("ttft_p90")
                                .path("absent")
                                .asText())
                .contains("vllm bench serve 0.33.0");
        assertThat(
                        c.toJson()
                                .path("stages")
                                .get(0)
                                .path("metrics")
                                .path("ttft_p90")
                                .path("candidate")
                                .isNull())
                .isTrue();
    }

    @Test
    void throughputHigherIsBetter() {
        // the same requests over half the time: twice the output throughput
        Comparison c =
                compareDefaults(profile(5, 400, 50, 10, 80, 1), profile(5, 400, 50, 10, 40, 1));
        MetricComparison t = c.stages().get(0).metric("output_throughput");
        assertThat(t.worse()).isEqualTo(Side.BASELINE);
        assertThat(t.significant()).isTrue();
        assertThat(t.change()).isBetween(0.9, 1.1);
        assertThat(c.verdict()).isEqualTo(Verdict.IMPROVEMENT);
    }

    @Test
    void aDocumentThatIsNotAProfileIsRefusedByName() {
        ObjectNode notAProfile =
                new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode();
        assertThatThrownBy(
                        () ->
                                ProfileComparison.compareLabeled(
                                        List.of(new LabeledProfile("x.json", notAProfile)),
                                        List.of(
                                                new LabeledProfile(
                                                        "y.json", profile(5, 10, 50, 10, 2, 1))),
                                        ComparisonOptions.defaults()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("x.json")
                .hasMessageContaining("metrics");
        assertThatThrownBy(() -> ComparisonOptions.defaults().withThreshold(Metric.ITL, -1))
                .hasMessageContaining("itl threshold");
    }

    /**
     * A random schedule that drew 17.4 req/s where 20 were asked for, sent on time, is delivered:
     * the client is held to the schedule it drew (issue: every Poisson stage of 100 requests was
     * noted "not delivered" by compare). The same achieved rate against a schedule that drew 20
     * req/s, or in a file without the drawn rate (another tool's), is not.
     */
    @Test
    void deliveryIsJudgedAgainstTheScheduleTheStageDrew() {
        ObjectNode poisson = profile(20, 100, 50, 10, 99 / 17.4, 1);
        assertThat(poisson.at("/metrics/achieved_rate").asDouble()).isCloseTo(17.4, within(1e-6));
        ((ObjectNode) poisson.get("metrics")).put("scheduled_rate", 17.41);
        Comparison drewLess = compareDefaults(poisson, poisson.deepCopy());
        assertThat(drewLess.notes()).noneMatch(n -> n.contains("not delivered"));

        ObjectNode fellBehind = poisson.deepCopy();
        ((ObjectNode) fellBehind.get("metrics")).put("scheduled_rate", 20.02);
        assertThat(compareDefaults(poisson, fellBehind).notes())
                .anySatisfy(
                        n ->
                                assertThat(n)
                                        .endsWith(
                                                ": achieved 17.4 req/s of the 20.0 its schedule"
                                                        + " drew (20.0 requested): the load was not"
                                                        + " delivered, its latencies do not describe"
                                                        + " that rate"));

        ObjectNode noSchedule = poisson.deepCopy();
        ((ObjectNode) noSchedule.get("metrics")).remove("scheduled_rate");
        assertThat(compareDefaults(poisson, noSchedule).notes())
                .anySatisfy(
                        n ->
                                assertThat(n)
                                        .endsWith(
                                                ": achieved 17.4 of 20.0 req/s requested: the load"
                                                        + " was not delivered, its latencies do not"
                                                        + " describe that rate"));
    }

    /** The profile with a declared cache state and, when not null, a measured hit rate. */
    private static ObjectNode cached(ObjectNode profile, String state, Double hitRate) {
        if (state != null) {
            ((ObjectNode) profile.get("dimensions")).put("prefix_cache", state);
        }
        if (hitRate != null) {
            ((ObjectNode) profile.get("metrics"))
                    .putObject("prefix_cache")
                    .put("hit_rate", hitRate);
        }
        return profile;
    }

    @Test
    void stagesWhosePrefixCachesWereNotInTheSameStateSaySo() {
        Comparison declared =
                compareDefaults(
                        cached(profile(5, 200, 50, 10, 40, 1), "cold", null),
                        cached(profile(5, 200, 50, 10, 40, 2), null, null));
        assertThat(declared.notes())
                .anySatisfy(
                        n ->
                                assertThat(n)
                                        .startsWith(
                                                "stage 1 (5.0 req/s): the prefix-cache state differs (")
                                        .contains(": cold; ")
                                        .contains(": not declared)")
                                        .contains("--reset-prefix-cache"));

        Comparison measured =
                compareDefaults(
                        cached(profile(5, 200, 50, 10, 40, 1), "cold", 0.72),
                        cached(profile(5, 200, 50, 10, 40, 2), "cold", 0.97));
        assertThat(measured.notes())
                .anySatisfy(
                        n ->
                                assertThat(n)
                                        .contains("the servers' prefix-cache hit rate differs (")
                                        .contains(": 0.720; ")
                                        .contains(": 0.970)"));

        // Within the tolerance, or neither side declaring nor measuring anything: no note.
        for (Comparison quiet :
                List.of(
                        compareDefaults(
                                cached(profile(5, 200, 50, 10, 40, 1), "cold", 0.72),
                                cached(profile(5, 200, 50, 10, 40, 2), "cold", 0.74)),
                        compareDefaults(
                                profile(5, 200, 50, 10, 40, 1), profile(5, 200, 50, 10, 40, 2)))) {
            assertThat(quiet.notes()).noneMatch(n -> n.contains("prefix-cache"));
        }
    }
}
