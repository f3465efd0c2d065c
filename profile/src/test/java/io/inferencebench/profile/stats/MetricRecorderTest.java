package io.inferencebench.profile.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MetricRecorderTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static MetricRecorder recordAll(double[] values, int cap) {
        MetricRecorder r = new MetricRecorder(cap);
        for (double v : values) {
            r.record(v);
        }
        return r;
    }

    @Test
    void belowTheCapEveryStatisticEqualsNumpy() {
        for (NumpyGolden.Case c : NumpyGolden.cases()) {
            MetricRecorder r = recordAll(c.values(), c.values().length);
            assertThat(r.exact()).isTrue();
            assertThat(r.count()).isEqualTo(c.values().length);
            assertThat(r.mean()).as(c.name()).isEqualTo(c.mean());
            assertThat(r.sd()).as(c.name()).isCloseTo(c.sd(), within(4 * Math.ulp(c.sd())));
            assertThat(r.median()).as(c.name()).isEqualTo(c.median());
            assertThat(r.min()).isEqualTo(Arrays.stream(c.values()).min().orElseThrow());
            assertThat(r.max()).isEqualTo(Arrays.stream(c.values()).max().orElseThrow());
            for (Map.Entry<Double, Double> p : c.percentiles().entrySet()) {
                assertThat(r.percentile(p.getKey()))
                        .as(c.name() + " p" + p.getKey())
                        .isEqualTo(p.getValue());
            }
        }
    }

    @Test
    void aboveTheCapMomentsStayExactAndPercentilesWithinATenthOfAPercent() {
        JsonNode large = NumpyGolden.ROOT.get("large");
        int n = large.get("n").intValue();
        MetricRecorder r = new MetricRecorder(1_000);
        for (long i = 0; i < n; i++) {
            r.record(NumpyGolden.largeValue(i));
        }
        assertThat(r.exact()).isFalse();
        assertThat(r.count()).isEqualTo(n);
        assertThat(r.min()).isEqualTo(large.get("min").doubleValue());
        assertThat(r.max()).isEqualTo(large.get("max").doubleValue());
        double mean = large.get("mean").doubleValue();
        assertThat(r.mean()).isCloseTo(mean, within(mean * 1e-12));
        assertThat(r.sum() / n).isCloseTo(mean, within(mean * 1e-12));
        double sd = large.get("sd").doubleValue();
        assertThat(r.sd()).isCloseTo(sd, within(sd * 1e-9));
        Map<Double, Double> expected = NumpyGolden.percentiles(large);
        for (Map.Entry<Double, Double> p : expected.entrySet()) {
            double exact = p.getValue();
            assertThat(r.percentile(p.getKey()))
                    .as("p" + p.getKey())
                    .isCloseTo(exact, within(exact * 0.001));
        }
        assertThat(r.median()).isCloseTo(large.get("median").doubleValue(), within(0.02));
    }

    @Test
    void memoryStaysFlatPastTheCap() {
        MetricRecorder r = new MetricRecorder(1_000);
        int i = 0;
        for (; i < 1_000; i++) {
            r.record(valueOfPattern(i));
        }
        assertThat(r.exact()).isTrue();
        assertThat(r.retainedSampleSlots()).isEqualTo(1_000);

        for (; i < 10_000; i++) {
            r.record(valueOfPattern(i));
        }
        assertThat(r.exact()).isFalse();
        assertThat(r.retainedSampleSlots()).isZero();
        long bytesPastCap = r.retainedBytes();
        int snapshotPastCap = serializedSize(r);

        for (; i < 2_010_000; i++) {
            r.record(valueOfPattern(i));
        }
        assertThat(r.count()).isEqualTo(2_010_000);
        assertThat(r.retainedSampleSlots()).isZero();
        // 200x more values, same heap: nothing per value is kept.
        assertThat(r.retainedBytes()).isEqualTo(bytesPastCap);
        // The compressed histogram only widens its counts; it does not grow with the value count.
        assertThat(serializedSize(r)).isLessThan(snapshotPastCap * 3 / 2).isLessThan(16_384);
    }

    private static double valueOfPattern(int i) {
        return 1 + (i % 997) + (i % 7) / 8.0;
    }

    @Test
    void snapshotOfAMillionValuesIsAFewKilobytes() throws Exception {
        MetricRecorder r = new MetricRecorder(100_000);
        for (long i = 0; i < 1_000_000; i++) {
            r.record(NumpyGolden.largeValue(i) / 10.0);
        }
        String json = JSON.writeValueAsString(r);
        assertThat(json.length()).isLessThan(16_384);
        MetricRecorder back = JSON.readValue(json, MetricRecorder.class);
        assertThat(back.count()).isEqualTo(r.count());
        assertThat(back.mean()).isEqualTo(r.mean());
        assertThat(back.sd()).isEqualTo(r.sd());
        assertThat(back.percentile(99)).isEqualTo(r.percentile(99));
    }

    @Test
    void exactSnapshotRoundTripKeepsExactStandardQuantiles() throws Exception {
        NumpyGolden.Case c =
                NumpyGolden.cases().stream()
                        .filter(x -> x.name().equals("lognormal_latency_ms_1000"))
                        .findFirst()
                        .orElseThrow();
        MetricRecorder r = recordAll(c.values(), 10_000);
        RecorderSnapshot snapshot =
                JSON.readValue(JSON.writeValueAsString(r.snapshot()), RecorderSnapshot.class);
        assertThat(snapshot.exact()).isTrue();
        assertThat(snapshot.exactQuantiles()).containsKeys("median", "p90", "p95", "p99", "p99.9");

        MetricRecorder back = MetricRecorder.fromSnapshot(snapshot);
        assertThat(back.exact()).isTrue();
        assertThat(back.percentile(90)).isEqualTo(c.percentiles().get(90.0));
        assertThat(back.percentile(99)).isEqualTo(c.percentiles().get(99.0));
        assertThat(back.percentile(50)).isEqualTo(c.median());
        assertThat(back.mean()).isCloseTo(c.mean(), within(c.mean() * 1e-13));
        assertThat(back.sd()).isCloseTo(c.sd(), within(c.sd() * 1e-12));
        assertThat(back.min()).isEqualTo(r.min());
        assertThat(back.max()).isEqualTo(r.max());
        // A non-standard percentile comes from the histogram, still within 0.1 %.
        double p75 = c.percentiles().get(75.0);
        assertThat(back.percentile(75)).isCloseTo(p75, within(p75 * 0.002));
    }

    @Test
    void mergingTwoRecordersEqualsRecordingEverythingInOne() {
        NumpyGolden.Case c =
                NumpyGolden.cases().stream()
                        .filter(x -> x.name().equals("per_token_latency_s_4097"))
                        .findFirst()
                        .orElseThrow();
        double[] v = c.values();
        double[] left = Arrays.copyOfRange(v, 0, 1500);
        double[] right = Arrays.copyOfRange(v, 1500, v.length);

        MetricRecorder exactMerge = recordAll(left, 10_000).merge(recordAll(right, 10_000));
        assertThat(exactMerge.exact()).isTrue();
        assertThat(exactMerge.count()).isEqualTo(v.length);
        assertThat(exactMerge.percentile(99)).isEqualTo(c.percentiles().get(99.0));
        assertThat(exactMerge.median()).isEqualTo(c.median());

        MetricRecorder momentMerge = recordAll(left, 100).merge(recordAll(right, 100));
        assertThat(momentMerge.exact()).isFalse();
        assertThat(momentMerge.count()).isEqualTo(v.length);
        assertThat(momentMerge.mean()).isCloseTo(c.mean(), within(c.mean() * 1e-13));
        assertThat(momentMerge.sd()).isCloseTo(c.sd(), within(c.sd() * 1e-12));
        assertThat(momentMerge.min()).isEqualTo(Arrays.stream(v).min().orElseThrow());
        assertThat(momentMerge.max()).isEqualTo(Arrays.stream(v).max().orElseThrow());
        double p90 = c.percentiles().get(90.0);
        assertThat(momentMerge.percentile(90)).isCloseTo(p90, within(p90 * 0.001));
    }

    /**
     * Twenty runner parts, each past its exact-sample cap, travel as JSON snapshots (as in part
     * ConfigMaps) and merge: counts and moments equal the union's, and every reported percentile is
     * within the histogram's stated 0.1 % of numpy's percentile of the union of all samples.
     */
    @Test
    void twentyRunnerPartsMergeToTheUnionsPercentilesWithinTheHistogramError() throws Exception {
        ObjectMapper json = new ObjectMapper();
        java.util.Random random = new java.util.Random(20);
        int perRunner = 3_000;
        double[] union = new double[20 * perRunner];
        MetricRecorder merged = null;
        for (int runner = 0; runner < 20; runner++) {
            MetricRecorder part = new MetricRecorder(500);
            // runners see different latencies (a slower node, a warmer cache)
            double scale = 150 + 10 * runner;
            for (int i = 0; i < perRunner; i++) {
                double v = scale * Math.exp(0.6 * random.nextGaussian());
                part.record(v);
                union[runner * perRunner + i] = v;
            }
            RecorderSnapshot carried =
                    json.readValue(
                            json.writeValueAsString(part.snapshot()), RecorderSnapshot.class);
            MetricRecorder back = MetricRecorder.fromSnapshot(carried);
            merged = merged == null ? back : merged.merge(back);
        }
        double[] sorted = union.clone();
        Arrays.sort(sorted);
        assertThat(merged.exact()).isFalse();
        assertThat(merged.count()).isEqualTo(union.length);
        assertThat(merged.mean())
                .isCloseTo(NumpyStats.mean(union), within(NumpyStats.mean(union) * 1e-12));
        assertThat(merged.sd())
                .isCloseTo(NumpyStats.sd(union), within(NumpyStats.sd(union) * 1e-9));
        assertThat(merged.min()).isEqualTo(sorted[0]);
        assertThat(merged.max()).isEqualTo(sorted[sorted.length - 1]);
        for (double p : new double[] {50, 90, 95, 99, 99.9}) {
            double truth = NumpyStats.percentile(sorted, p);
            assertThat(merged.percentile(p)).as("p%s", p).isCloseTo(truth, within(truth * 0.001));
        }
    }

    @Test
    void mergingSnapshotsOfManyRunnersIsExactInMomentsAndFlagsHistogramPercentiles() {
        NumpyGolden.Case c =
                NumpyGolden.cases().stream()
                        .filter(x -> x.name().equals("lognormal_latency_ms_1000"))
                        .findFirst()
                        .orElseThrow();
        double[] v = c.values();
        RecorderSnapshot a = recordAll(Arrays.copyOfRange(v, 0, 333), 1000).snapshot();
        RecorderSnapshot b = recordAll(Arrays.copyOfRange(v, 333, 700), 1000).snapshot();
        RecorderSnapshot d = recordAll(Arrays.copyOfRange(v, 700, 1000), 1000).snapshot();

        MetricRecorder one = MetricRecorder.mergeSnapshots(List.of(a), 1000);
        assertThat(one.exact()).isTrue();
        assertThat(one.percentile(99)).isEqualTo(a.exactQuantiles().get("p99"));

        MetricRecorder all = MetricRecorder.mergeSnapshots(List.of(a, b, d), 1000);
        assertThat(all.exact()).isFalse();
        assertThat(all.count()).isEqualTo(1000);
        assertThat(all.mean()).isCloseTo(c.mean(), within(c.mean() * 1e-13));
        assertThat(all.sd()).isCloseTo(c.sd(), within(c.sd() * 1e-12));
        for (double p : new double[] {50, 90, 99}) {
            double exact = c.percentiles().get(p);
            assertThat(all.percentile(p)).as("p" + p).isCloseTo(exact, within(exact * 0.001));
        }
    }

    @Test
    void emptyRecorderReportsZerosAndAnEmptySnapshot() throws Exception {
        MetricRecorder r = new MetricRecorder(10);
        assertThat(r.mean()).isZero();
        assertThat(r.sd()).isZero();
        assertThat(r.min()).isZero();
        assertThat(r.max()).isZero();
        assertThat(r.percentile(99)).isZero();
        String json = JSON.writeValueAsString(r);
        assertThat(json).doesNotContain("Infinity").doesNotContain("NaN");
        MetricRecorder back = JSON.readValue(json, MetricRecorder.class);
        assertThat(back.count()).isZero();
        back.record(3.0);
        assertThat(back.exact()).isTrue();
        assertThat(back.percentile(50)).isEqualTo(3.0);
    }

    @Test
    void rejectsNonFiniteValuesAndBadPercentiles() {
        MetricRecorder r = new MetricRecorder(10);
        assertThatThrownBy(() -> r.record(Double.NaN))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("finite");
        assertThatThrownBy(() -> r.record(Double.POSITIVE_INFINITY))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MetricRecorder(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exactSampleCap");
        assertThatThrownBy(() -> r.percentile(101)).isInstanceOf(IllegalArgumentException.class);
        assertThat(r.count()).isZero();
    }

    @Test
    void aSnapshotWithSamplesRestoresARecorderWhoseMergeIsExact() throws Exception {
        java.util.Random random = new java.util.Random(7);
        double[] all = new double[3_000];
        for (int i = 0; i < all.length; i++) {
            // heavy-tailed, every bit of the mantissa used
            all[i] = 20 * Math.exp(random.nextGaussian() * 0.8);
        }
        MetricRecorder single = recordAll(all, MetricRecorder.DEFAULT_SAMPLE_CAP);
        MetricRecorder a = recordAll(Arrays.copyOfRange(all, 0, 700), 100_000);
        MetricRecorder b = recordAll(Arrays.copyOfRange(all, 700, all.length), 100_000);

        String withSamples = JSON.writeValueAsString(a.snapshotWithSamples(10_000));
        assertThat(JSON.readTree(withSamples).has("samples")).isTrue();
        assertThat(JSON.readTree(JSON.writeValueAsString(a)).has("samples"))
                .as("a profile's snapshot carries no samples")
                .isFalse();
        MetricRecorder restoredA =
                MetricRecorder.fromSnapshot(JSON.readValue(withSamples, RecorderSnapshot.class));
        MetricRecorder restoredB = MetricRecorder.fromSnapshot(b.snapshotWithSamples(10_000));
        MetricRecorder merged = new MetricRecorder().merge(restoredA).merge(restoredB);

        assertThat(merged.exact()).isTrue();
        for (double p : new double[] {0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 100}) {
            assertThat(Double.doubleToRawLongBits(merged.percentile(p)))
                    .as("p%s: %s against %s", p, merged.percentile(p), single.percentile(p))
                    .isEqualTo(Double.doubleToRawLongBits(single.percentile(p)));
        }
        assertThat(merged.median()).isEqualTo(single.median());
        // without samples the same merge places percentiles within their buckets only
        MetricRecorder bucketed =
                new MetricRecorder()
                        .merge(MetricRecorder.fromSnapshot(a.snapshot()))
                        .merge(MetricRecorder.fromSnapshot(b.snapshot()));
        assertThat(bucketed.exact()).isFalse();
        assertThat(bucketed.percentile(99)).isNotEqualTo(single.percentile(99));
    }

    @Test
    void samplesAreLeftOutPastTheLimitAndARecorderPastItsCapHasNone() {
        MetricRecorder r = recordAll(new double[] {1, 2, 3, 4}, 10);
        assertThat(r.snapshotWithSamples(4).samples()).isNotNull();
        assertThat(r.snapshotWithSamples(3).samples()).isNull();
        MetricRecorder pastCap = recordAll(new double[] {1, 2, 3, 4}, 3);
        assertThat(pastCap.snapshotWithSamples(Integer.MAX_VALUE).samples()).isNull();
        assertThat(new MetricRecorder(5).snapshotWithSamples(10).samples()).isNull();
    }

    @Test
    void samplesThatDoNotMatchTheSnapshotAreIgnoredNotTrusted() {
        MetricRecorder r = recordAll(new double[] {5, 1, 4, 2, 3}, 10);
        RecorderSnapshot good = r.snapshotWithSamples(10);
        RecorderSnapshot other = recordAll(new double[] {9, 9, 9}, 10).snapshotWithSamples(10);
        List<String> wrong =
                List.of(other.samples(), "not base64!", "bm90IGRlZmxhdGVk", good.samples() + "AA");
        for (String samples : wrong) {
            RecorderSnapshot bad =
                    new RecorderSnapshot(
                            good.count(),
                            good.sum(),
                            good.mean(),
                            good.m2(),
                            good.min(),
                            good.max(),
                            good.sampleCap(),
                            good.histogram(),
                            good.exactQuantiles(),
                            samples);
            MetricRecorder restored = MetricRecorder.fromSnapshot(bad);
            // restored from its exact quantiles as a snapshot without samples is
            assertThat(restored.percentile(50)).as(samples).isEqualTo(3.0);
            assertThat(restored.merge(recordAll(new double[] {6}, 10)).exact())
                    .as(samples)
                    .isFalse();
        }
        assertThat(MetricRecorder.fromSnapshot(good).merge(recordAll(new double[] {6}, 10)).exact())
                .isTrue();
    }

    @Test
    void corruptSnapshotHistogramIsAClearError() {
        RecorderSnapshot bad =
                new RecorderSnapshot(3, 6, 2, 2, 1, 3, 10, "bm90IGEgaGlzdG9ncmFt", null, null);
        assertThatThrownBy(() -> MetricRecorder.fromSnapshot(bad))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("corrupt histogram");
    }

    private static int serializedSize(MetricRecorder r) {
        try {
            return JSON.writeValueAsString(r).length();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void valuesSpanningMoreThanTheHistogramRangeNeverFail() {
        double[] values = {1e-12, 1e12, 0.0, 5e-300, 1e300, 3.0, 42.0};
        MetricRecorder r = new MetricRecorder(0);
        for (double v : values) {
            r.record(v);
        }
        assertThat(r.count()).isEqualTo(values.length);
        assertThat(r.min()).isZero();
        assertThat(r.max()).isEqualTo(1e300);
        double previous = -1;
        for (double p = 0; p <= 100; p += 5) {
            double value = r.percentile(p);
            assertThat(value).isBetween(0.0, 1e300).isGreaterThanOrEqualTo(previous);
            previous = value;
        }

        MetricRecorder small = new MetricRecorder(0);
        MetricRecorder large = new MetricRecorder(0);
        for (int i = 1; i <= 100; i++) {
            small.record(i * 1e-9);
            large.record(i * 1e9);
        }
        small.merge(large);
        assertThat(small.count()).isEqualTo(200);
        assertThat(small.percentile(100)).isEqualTo(1e11);
        // the large half is intact to 0.1 % despite the 20 orders of magnitude:
        // numpy p75 of the 200 values: index 149.25 -> 50e9 + 0.25 * (51e9 - 50e9) = 50.25e9
        assertThat(small.percentile(75)).isCloseTo(50.25e9, within(50.25e9 * 0.001));
        RecorderSnapshot snapshot = small.snapshot();
        assertThat(MetricRecorder.fromSnapshot(snapshot).count()).isEqualTo(200);
    }
}
