package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.br.BenchmarkReportWriter;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.PartJson;
import io.inferencebench.profile.lpg.ProfileContext;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.stats.MetricRecorder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Percentiles of a stage split across runner pods against those of one process that recorded the
 * same requests (docs/formats.md, "Percentiles across runner pods").
 *
 * <p>The same 6,000 seeded requests with heavy-tailed latencies are recorded once in one {@link
 * StageResult} and once split unevenly across 7 pods, each pod's result taken through the JSON the
 * runner writes into its part ConfigMap ({@link PartJson}) and the operator parses back ({@link
 * ProfileAssembly#parse}), then merged as the operator merges them. A part carries its recorders'
 * raw samples while they fit, so every percentile is the same double as the single process's: from
 * the samples where it held them, from the merged histogram (whose bucket counts add) where it was
 * past its cap (ITL, about 220,000 gaps). A part without samples (a pod's stage too large for them)
 * can only place a percentile the single process computed from its samples within one histogram
 * bucket, 2^-10 of its value; min, max and counts are always exact.
 */
class PodMergeExactnessTest {

    private static final int REQUESTS = 6_000;
    private static final int PODS = 7;

    /** Uneven shares of the requests, as pods that start or run at different speeds get. */
    private static final int[] POD_WEIGHTS = {1, 2, 3, 5, 8, 13, 21};

    /**
     * Widest bucket of a three-significant-digit HdrHistogram relative to the values in it (2,048
     * sub-buckets per power of two, so a bucket spans at most 1/1,024 of its lowest value).
     */
    private static final double BUCKET_WIDTH = 1.0 / 1024;

    /** Every percentile a profile, Benchmark Report or run status takes from a recorder. */
    private static final double[] PERCENTILES = {
        0, 0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 100
    };

    /** A stage result's JSON without samples, as a part too large for them carries it. */
    private static final ObjectMapper POD_JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /** One successful streamed request as the runner would have measured it. */
    private record SimulatedRequest(
            int inputTokens,
            double ttftMs,
            double[] gapsMs,
            double afterLastTokenMs,
            double scheduleLagMs,
            double slotWaitMs) {

        int outputTokens() {
            return gapsMs.length + 1;
        }

        double latencyMs() {
            double latency = ttftMs;
            for (double gap : gapsMs) {
                latency += gap;
            }
            return latency + afterLastTokenMs;
        }
    }

    @Test
    void sevenPodsGiveEveryPercentileOfTheSingleProcessBitForBit() throws JsonProcessingException {
        StageResult single = recordAll(requests(new Random(25)));
        StageResult merged = mergedAcrossPods(requests(new Random(25)), new Random(4), true);

        assertThat(single.itlMs.exact()).isFalse();
        Map<String, MetricRecorder> singleRecorders = single.recorders();
        merged.recorders()
                .forEach(
                        (name, m) -> {
                            MetricRecorder s = singleRecorders.get(name);
                            assertThat(m.count()).as(name).isEqualTo(s.count()).isPositive();
                            // exact where the single process was: every pod carried its samples
                            assertThat(m.exact()).as(name).isEqualTo(s.exact());
                            for (double p : PERCENTILES) {
                                assertBitForBit(name + " p" + p, m.percentile(p), s.percentile(p));
                            }
                            assertBitForBit(name + " median", m.median(), s.median());
                            assertThat(m.mean())
                                    .as(name)
                                    .isCloseTo(s.mean(), within(s.mean() * 1e-12));
                        });
        assertProfileFigures(lpgFigures(single), lpgFigures(merged), path -> true);
        assertProfileFigures(reportFigures(single), reportFigures(merged), path -> true);
    }

    @Test
    void partsWithoutSamplesGiveTheHistogramPercentilesBitForBitAndTheExactOnesWithinABucket()
            throws JsonProcessingException {
        StageResult single = recordAll(requests(new Random(25)));
        StageResult merged = mergedAcrossPods(requests(new Random(25)), new Random(4), false);

        // The regimes the claim distinguishes are both present: ITL past the cap, the rest exact.
        assertThat(single.itlMs.count()).isGreaterThan(MetricRecorder.DEFAULT_SAMPLE_CAP);
        assertThat(single.itlMs.exact()).isFalse();
        single.recorders()
                .forEach(
                        (name, r) -> {
                            if (r != single.itlMs) {
                                assertThat(r.exact()).as(name).isTrue();
                            }
                        });

        Map<String, MetricRecorder> singleRecorders = single.recorders();
        merged.recorders()
                .forEach(
                        (name, m) -> {
                            MetricRecorder s = singleRecorders.get(name);
                            assertThat(m.count()).as(name).isEqualTo(s.count()).isPositive();
                            // The reason histogram percentiles merge exactly: bucket counts add.
                            assertThat(m.histogramBuckets())
                                    .as(name)
                                    .isEqualTo(s.histogramBuckets());
                            // More than one pod: every recorder answers from its histogram.
                            assertThat(m.exact()).as(name).isFalse();
                            assertMergedPercentiles(name, m, s, PERCENTILES);
                            // Not percentiles, but in the profile too: equal up to rounding.
                            assertThat(m.mean())
                                    .as(name)
                                    .isCloseTo(s.mean(), within(s.mean() * 1e-12));
                            assertThat(m.sd()).as(name).isCloseTo(s.sd(), within(s.sd() * 1e-9));
                        });
    }

    @Test
    void onePodGivesEveryPercentileOfTheSingleProcessBitForBit() throws JsonProcessingException {
        List<SimulatedRequest> requests = requests(new Random(26));
        StageResult single = recordAll(requests);
        StageResult carried = ProfileAssembly.parse(POD_JSON.writeValueAsString(single));

        single.recorders()
                .forEach(
                        (name, s) -> {
                            MetricRecorder c = carried.recorders().get(name);
                            for (double p : PERCENTILES) {
                                assertBitForBit(name + " p" + p, c.percentile(p), s.percentile(p));
                            }
                            assertBitForBit(name + " median", c.median(), s.median());
                        });
        assertProfileFigures(lpgFigures(single), lpgFigures(carried), path -> true);
        assertProfileFigures(reportFigures(single), reportFigures(carried), path -> true);
    }

    @Test
    void withoutSamplesEveryPercentileOfTheProfileAndTheBenchmarkReportFollowsTheSameRule()
            throws JsonProcessingException {
        List<SimulatedRequest> requests = requests(new Random(27));
        StageResult merged = mergedAcrossPods(requests, new Random(5), false);
        StageResult single = recordAll(requests);
        assertThat(single.itlMs.exact()).isFalse();

        assertProfileFigures(
                lpgFigures(single), lpgFigures(merged), path -> path.contains("itl_ms"));
        assertProfileFigures(
                reportFigures(single),
                reportFigures(merged),
                path -> path.contains("inter_token_latency"));
    }

    /** The statistics of the stage's LPG profile ({@code metrics}), by dotted path. */
    private static Map<String, Double> lpgFigures(StageResult stage) {
        ProfileContext context =
                new ProfileContext(
                        "vllm",
                        "acme/model",
                        null,
                        "vllm",
                        Instant.EPOCH,
                        "run",
                        "ns",
                        PODS,
                        "operator",
                        Map.of());
        return numbers(
                LpgProfileWriter.write(stage, context, null).get("metrics"),
                Pattern.compile("(median|p90|p95|p99|p999|min|max|count)_.+"));
    }

    /** The statistics of the stage's Benchmark Report, by dotted path. */
    private static Map<String, Double> reportFigures(StageResult stage) {
        return numbers(
                BenchmarkReportWriter.write(stage, "eid"),
                Pattern.compile("p0p1|p1|p5|p10|p25|p50|p75|p90|p95|p99|p99p9|min|max"));
    }

    /**
     * Same keys; a figure of the metric past its cap or a min, max or count is the same double,
     * every other percentile within one bucket.
     */
    private static void assertProfileFigures(
            Map<String, Double> single, Map<String, Double> merged, Predicate<String> pastCap) {
        assertThat(merged.keySet()).isEqualTo(single.keySet());
        assertThat(single.keySet().stream().filter(pastCap)).hasSizeGreaterThan(4);
        assertThat(single).hasSizeGreaterThan(40);
        single.forEach(
                (path, s) -> {
                    double m = merged.get(path);
                    String key = path.substring(path.lastIndexOf('.') + 1);
                    if (pastCap.test(path) || key.matches("(min|max|count)(_.*)?")) {
                        assertBitForBit(path, m, s);
                    } else {
                        assertWithinOneBucket(path, m, s);
                    }
                });
    }

    private static void assertMergedPercentiles(
            String name, MetricRecorder merged, MetricRecorder single, double[] percentiles) {
        for (double p : percentiles) {
            String what = name + " p" + p;
            if (!single.exact() || p == 0 || p == 100) {
                assertBitForBit(what, merged.percentile(p), single.percentile(p));
            } else {
                assertWithinOneBucket(what, merged.percentile(p), single.percentile(p));
            }
        }
        if (!single.exact()) {
            assertBitForBit(name + " median", merged.median(), single.median());
        } else {
            assertWithinOneBucket(name + " median", merged.median(), single.median());
        }
    }

    private static void assertBitForBit(String what, double actual, double expected) {
        assertThat(Double.doubleToRawLongBits(actual))
                .as("%s: %s against the single process's %s", what, actual, expected)
                .isEqualTo(Double.doubleToRawLongBits(expected));
    }

    private static void assertWithinOneBucket(String what, double actual, double expected) {
        assertThat(expected).as(what).isGreaterThanOrEqualTo(0.0);
        assertThat(Math.abs(actual - expected))
                .as("%s: %s against the single process's %s", what, actual, expected)
                .isLessThanOrEqualTo(expected * BUCKET_WIDTH);
    }

    /** Numeric leaves whose key matches {@code keys}, by dotted path. */
    private static Map<String, Double> numbers(JsonNode node, Pattern keys) {
        Map<String, Double> out = new TreeMap<>();
        collect(node, "", keys, out);
        return out;
    }

    private static void collect(JsonNode node, String path, Pattern keys, Map<String, Double> out) {
        node.properties()
                .forEach(
                        e -> {
                            String child = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
                            if (e.getValue().isObject()
                                    && !e.getKey().equals(LpgProfileWriter.HISTOGRAMS_KEY)) {
                                collect(e.getValue(), child, keys, out);
                            } else if (e.getValue().isNumber()
                                    && keys.matcher(e.getKey()).matches()) {
                                out.put(child, e.getValue().doubleValue());
                            }
                        });
    }

    /**
     * Requests of a loaded server: lognormal bodies with Pareto tails (queued first tokens, stalled
     * decodes), 1 to 512 output tokens, a schedule that is mostly on time.
     */
    private static List<SimulatedRequest> requests(Random random) {
        List<SimulatedRequest> requests = new ArrayList<>(REQUESTS);
        for (int i = 0; i < REQUESTS; i++) {
            double ttft = 35 * Math.exp(0.6 * random.nextGaussian());
            if (random.nextDouble() < 0.03) {
                ttft += 200 * pareto(random, 1.5);
            }
            int outputTokens = (int) Math.min(512, 1 + 30 * Math.exp(0.7 * random.nextGaussian()));
            double decodeSpeed = 12 * Math.exp(0.3 * random.nextGaussian());
            double[] gaps = new double[outputTokens - 1];
            for (int g = 0; g < gaps.length; g++) {
                gaps[g] = decodeSpeed * Math.exp(0.25 * random.nextGaussian());
                if (random.nextDouble() < 0.005) {
                    gaps[g] += 50 * pareto(random, 1.2);
                }
            }
            double lag =
                    random.nextDouble() < 0.3
                            ? 0
                            : 0.05
                                    * Math.exp(1.2 * random.nextGaussian())
                                    * (random.nextDouble() < 0.01 ? 100 : 1);
            double slotWait = random.nextDouble() < 0.6 ? 0 : -20 * Math.log(random.nextDouble());
            requests.add(
                    new SimulatedRequest(
                            64 + (int) (400 * Math.exp(0.9 * random.nextGaussian())),
                            ttft,
                            gaps,
                            0.1 + 0.9 * random.nextDouble(),
                            lag,
                            slotWait));
        }
        return requests;
    }

    private static double pareto(Random random, double alpha) {
        return Math.pow(1 - random.nextDouble(), -1 / alpha);
    }

    private static StageResult recordAll(List<SimulatedRequest> requests) {
        StageResult result = new StageResult();
        requests.forEach(q -> record(result, q));
        return result;
    }

    /**
     * Each request to one pod, drawn by {@link #POD_WEIGHTS}; each pod's result through the part
     * ConfigMap's JSON (with its samples as the runner writes it, or without as a part too large
     * for them is), then merged.
     */
    private static StageResult mergedAcrossPods(
            List<SimulatedRequest> requests, Random random, boolean withSamples)
            throws JsonProcessingException {
        int totalWeight = 0;
        for (int w : POD_WEIGHTS) {
            totalWeight += w;
        }
        List<StageResult> pods = new ArrayList<>();
        for (int p = 0; p < PODS; p++) {
            pods.add(new StageResult());
        }
        for (SimulatedRequest q : requests) {
            int draw = random.nextInt(totalWeight);
            int pod = 0;
            while (draw >= POD_WEIGHTS[pod]) {
                draw -= POD_WEIGHTS[pod++];
            }
            record(pods.get(pod), q);
        }
        List<StageResult> parts = new ArrayList<>();
        for (StageResult pod : pods) {
            assertThat(pod.completed).isPositive();
            String json = withSamples ? PartJson.write(pod) : POD_JSON.writeValueAsString(pod);
            assertThat(json.contains("\"samples\"")).isEqualTo(withSamples);
            parts.add(ProfileAssembly.parse(json));
        }
        return StageResult.merge(parts);
    }

    /**
     * What the runner's stage recorder records for a successful streamed request (the order of the
     * recorders does not matter: each sees its values in request order).
     */
    private static void record(StageResult result, SimulatedRequest q) {
        int in = q.inputTokens();
        int out = q.outputTokens();
        result.sent++;
        result.completed++;
        result.totalInputTokens += in;
        result.totalOutputTokens += out;
        result.inputLen.record(in);
        result.outputLen.record(out);
        result.scheduleLagMs.record(q.scheduleLagMs());
        result.slotWaitMs.record(q.slotWaitMs());
        for (double gap : q.gapsMs()) {
            result.itlMs.record(gap);
        }
        double latency = q.latencyMs();
        result.ttftMs.record(q.ttftMs());
        result.latencyMs.record(latency);
        result.perOutputTokenLatencyMs.record(latency / out);
        result.perTokenLatencySec.record(latency / 1000.0 / (in + out));
        if (out > 1) {
            result.tpotMs.record((latency - q.ttftMs()) / (out - 1));
        }
    }
}
