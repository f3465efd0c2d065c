package io.inferencebench.profile.stats;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;
import org.HdrHistogram.DoubleHistogram;
import org.HdrHistogram.DoubleHistogramIterationValue;

/**
 * Records one metric (for example TTFT in ms) with bounded memory.
 *
 * <p>Count, sum, mean, population SD, min and max are always exact (Welford moments, merged with
 * Chan's parallel formula). Percentiles are exact (numpy's linear interpolation over the raw
 * samples) while at most {@code exactSampleCap} values were recorded; beyond the cap the raw
 * samples are dropped and percentiles come from an HdrHistogram {@link DoubleHistogram} with three
 * significant digits (at most 0.1 % relative error), which is maintained from the first value on.
 * Memory therefore stays flat however many values are recorded.
 *
 * <p>Across recorders (runner pods): merging adds the histograms' bucket counts, so the merge holds
 * the very histogram one recorder of all the values holds, and its histogram percentiles are the
 * same doubles. A {@link RecorderSnapshot} carries no raw samples (it has to fit a ConfigMap), so
 * exact percentiles survive one snapshot (the {@link #STANDARD_QUANTILES}) but not a merge of
 * several: those come from the merged histogram, within one bucket, 2^-10 of the value.
 *
 * <p>Values must be finite. The histogram cannot hold negative values: for percentiles in histogram
 * mode negative values count as {@code 0}; exact mode and the moments are unaffected.
 *
 * <p>Not thread-safe: one recorder per thread, {@link #merge merged} at the end.
 *
 * <p>Serializes (Jackson) as its {@link RecorderSnapshot}.
 */
public final class MetricRecorder {

    /**
     * Names and percentiles of the quantiles kept exactly in a {@link RecorderSnapshot}: every
     * percentile a profile, a Benchmark Report or a run's status reads (min and max are exact
     * anyway), so that a stage assembled from one runner pod's snapshot has the percentiles the pod
     * itself computed.
     */
    public static final Map<String, Double> STANDARD_QUANTILES;

    static {
        Map<String, Double> quantiles = new LinkedHashMap<>();
        quantiles.put("p0.1", 0.1);
        quantiles.put("p1", 1.0);
        quantiles.put("p5", 5.0);
        quantiles.put("p10", 10.0);
        quantiles.put("p25", 25.0);
        quantiles.put("median", 50.0);
        quantiles.put("p75", 75.0);
        quantiles.put("p90", 90.0);
        quantiles.put("p95", 95.0);
        quantiles.put("p99", 99.0);
        quantiles.put("p99.9", 99.9);
        STANDARD_QUANTILES = Collections.unmodifiableMap(quantiles);
    }

    /** Default exact-sample cap: 100,000 values (800 KB of raw samples at most). */
    public static final int DEFAULT_SAMPLE_CAP = 100_000;

    /**
     * The most raw samples a snapshot is restored with (8 MB): a snapshot claiming more (its cap is
     * its own word) is restored from its histogram, so a part cannot make the reader allocate at
     * will.
     */
    static final int MAX_RESTORED_SAMPLES = 1_000_000;

    private static final int SIGNIFICANT_DIGITS = 3;
    private static final int INITIAL_CAPACITY = 64;

    private final int exactSampleCap;

    private long count;
    private double mean;
    private double m2;
    private double sum;
    private double sumCompensation;
    private double min = Double.POSITIVE_INFINITY;
    private double max = Double.NEGATIVE_INFINITY;

    /** Raw samples while exact; {@code null} once the cap has been passed or after a merge. */
    private double[] samples;

    private boolean samplesSorted = true;

    /** Exact standard quantiles restored from a single snapshot; {@code null} otherwise. */
    private Map<String, Double> restoredExactQuantiles;

    private DoubleHistogram histogram;

    /**
     * Creates a recorder.
     *
     * @param exactSampleCap how many raw samples to keep for exact percentiles; {@code 0} means
     *     histogram percentiles from the start
     * @throws IllegalArgumentException when the cap is negative
     */
    public MetricRecorder(int exactSampleCap) {
        if (exactSampleCap < 0) {
            throw new IllegalArgumentException(
                    "exactSampleCap must be >= 0, got " + exactSampleCap);
        }
        this.exactSampleCap = exactSampleCap;
        this.samples = new double[Math.min(INITIAL_CAPACITY, exactSampleCap)];
        this.histogram = newHistogram();
    }

    /** Creates a recorder with {@link #DEFAULT_SAMPLE_CAP}. */
    public MetricRecorder() {
        this(DEFAULT_SAMPLE_CAP);
    }

    private static DoubleHistogram newHistogram() {
        DoubleHistogram h = new DoubleHistogram(SIGNIFICANT_DIGITS);
        h.setAutoResize(true);
        return h;
    }

    /**
     * Records one value.
     *
     * @param value a finite value
     * @throws IllegalArgumentException when the value is NaN or infinite
     */
    public void record(double value) {
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException("recorded value must be finite, got " + value);
        }
        histogram = recordInto(histogram, value, 1);
        count++;
        double delta = value - mean;
        mean += delta / count;
        m2 += delta * (value - mean);
        addToSum(value);
        if (value < min) {
            min = value;
        }
        if (value > max) {
            max = value;
        }
        restoredExactQuantiles = null;
        if (samples != null) {
            if (count > exactSampleCap) {
                samples = null; // past the cap: from now on memory stays flat
            } else {
                if (samples.length < count) {
                    samples =
                            Arrays.copyOf(
                                    samples,
                                    (int)
                                            Math.min(
                                                    exactSampleCap,
                                                    Math.max(count, samples.length * 2L)));
                }
                samples[(int) count - 1] = value;
                samplesSorted = false;
            }
        }
    }

    /**
     * Records into a histogram, which covers a dynamic range of about 2^52. When a value does not
     * fit beside those already held, the large values win (they make the tail percentiles): a value
     * too small is recorded as 0; a value too large starts a new histogram into which the old
     * values are re-recorded, the smallest of them as 0. This only happens when one metric spans
     * more than 15 orders of magnitude; percentiles are clamped to the exact min and max anyway.
     *
     * @return the histogram now holding the value ({@code h} or a replacement)
     */
    private static DoubleHistogram recordInto(DoubleHistogram h, double value, long count) {
        double v = Math.max(0.0, value);
        try {
            h.recordValueWithCount(v, count);
            return h;
        } catch (ArrayIndexOutOfBoundsException tooWide) {
            // handled below
        }
        if (v <= h.getMaxValue()) {
            h.recordValueWithCount(0.0, count);
            return h;
        }
        DoubleHistogram fresh = newHistogram();
        fresh.recordValueWithCount(v, count);
        for (DoubleHistogramIterationValue old : h.recordedValues()) {
            fresh =
                    recordInto(
                            fresh,
                            h.medianEquivalentValue(old.getValueIteratedTo()),
                            old.getCountAddedInThisIterationStep());
        }
        return fresh;
    }

    /**
     * {@code a + b}; when their ranges cannot combine, the larger values win as in {@link
     * #recordInto}.
     */
    private static DoubleHistogram addHistograms(DoubleHistogram a, DoubleHistogram b) {
        DoubleHistogram sum = a.copy();
        sum.setAutoResize(true);
        try {
            sum.add(b);
            return sum;
        } catch (ArrayIndexOutOfBoundsException tooWide) {
            DoubleHistogram big = a.getMaxValue() >= b.getMaxValue() ? a : b;
            DoubleHistogram small = big == a ? b : a;
            sum = big.copy();
            sum.setAutoResize(true);
            for (DoubleHistogramIterationValue v : small.recordedValues()) {
                sum =
                        recordInto(
                                sum,
                                small.medianEquivalentValue(v.getValueIteratedTo()),
                                v.getCountAddedInThisIterationStep());
            }
            return sum;
        }
    }

    private void addToSum(double value) {
        // Neumaier's compensated summation keeps sum() exact to the last bits for long runs.
        double t = sum + value;
        if (Math.abs(sum) >= Math.abs(value)) {
            sumCompensation += (sum - t) + value;
        } else {
            sumCompensation += (value - t) + sum;
        }
        sum = t;
    }

    /**
     * Adds everything {@code other} recorded. Moments merge exactly; raw samples are kept (and
     * percentiles stay exact) only when both sides still have theirs and the total stays within
     * this recorder's cap; otherwise percentiles come from the merged histograms.
     *
     * @param other another recorder (not modified)
     * @return this recorder
     */
    public MetricRecorder merge(MetricRecorder other) {
        if (other.count == 0) {
            return this;
        }
        if (count == 0 && samples != null && other.samples == null) {
            // adopting the other's state as-is keeps a single restored snapshot's exact quantiles
            restoredExactQuantiles = other.restoredExactQuantiles;
        } else {
            restoredExactQuantiles = null;
        }
        long n = count + other.count;
        double delta = other.mean - mean;
        double newMean = mean + delta * ((double) other.count / n);
        m2 = m2 + other.m2 + delta * delta * ((double) count * other.count / n);
        mean = newMean;
        addToSum(other.sum);
        addToSum(other.sumCompensation);
        min = Math.min(min, other.min);
        max = Math.max(max, other.max);
        histogram = addHistograms(histogram, other.histogram);
        if (samples != null && other.samples != null && n <= exactSampleCap) {
            if (samples.length < n) {
                samples = Arrays.copyOf(samples, (int) n);
            }
            System.arraycopy(other.samples, 0, samples, (int) count, (int) other.count);
            samplesSorted = false;
        } else {
            samples = null;
        }
        count = n;
        return this;
    }

    /**
     * Number of recorded values.
     *
     * @return the count
     */
    public long count() {
        return count;
    }

    /**
     * Exact sum of the recorded values.
     *
     * @return the sum, {@code 0} when empty
     */
    public double sum() {
        return sum + sumCompensation;
    }

    /**
     * Mean; while exact computed like {@code np.mean} from the samples, otherwise from the merged
     * moments (exact up to rounding).
     *
     * @return the mean, {@code 0} when empty
     */
    public double mean() {
        if (count == 0) {
            return 0.0;
        }
        if (samples != null) {
            return NumpyStats.mean(samples, (int) count);
        }
        return mean;
    }

    /**
     * Population standard deviation ({@code ddof = 0}).
     *
     * @return the SD, {@code 0} when empty
     */
    public double sd() {
        if (count == 0) {
            return 0.0;
        }
        if (samples != null) {
            return NumpyStats.sd(samples, (int) count);
        }
        return Math.sqrt(Math.max(0.0, m2 / count));
    }

    /**
     * Smallest recorded value.
     *
     * @return the minimum, {@code 0} when empty
     */
    public double min() {
        return count == 0 ? 0.0 : min;
    }

    /**
     * Largest recorded value.
     *
     * @return the maximum, {@code 0} when empty
     */
    public double max() {
        return count == 0 ? 0.0 : max;
    }

    /**
     * Whether {@link #percentile} is exact: the raw samples are still held, or this recorder was
     * restored from one exact snapshot (then only the {@link #STANDARD_QUANTILES} are exact).
     *
     * @return {@code true} for exact percentiles
     */
    public boolean exact() {
        return samples != null || restoredExactQuantiles != null;
    }

    /**
     * The exact-sample cap this recorder was created with.
     *
     * @return the cap
     */
    public int exactSampleCap() {
        return exactSampleCap;
    }

    /**
     * How many raw sample slots this recorder currently retains in memory; {@code 0} once the cap
     * has been passed. Lets callers (and tests) check that memory is bounded.
     *
     * @return the retained sample array length
     */
    public int retainedSampleSlots() {
        return samples == null ? 0 : samples.length;
    }

    /**
     * Estimated heap held for percentiles: the raw sample array plus the histogram's counts. Does
     * not grow with the number of values once the cap is passed (only with their dynamic range).
     *
     * @return bytes
     */
    public long retainedBytes() {
        return 8L * retainedSampleSlots() + histogram.getEstimatedFootprintInBytes();
    }

    /**
     * Percentile with numpy's linear interpolation: exact over the raw samples while {@link
     * #exact()}, otherwise interpolated between histogram order statistics (bucket midpoints,
     * clamped to the exact min and max), within 0.1 % of the exact value.
     *
     * @param p percentile in {@code [0, 100]}
     * @return the value, {@code 0} when empty
     * @throws IllegalArgumentException when {@code p} is outside {@code [0, 100]}
     */
    public double percentile(double p) {
        NumpyStats.checkPercentile(p);
        if (count == 0) {
            return 0.0;
        }
        if (samples != null) {
            sortSamples();
            return NumpyStats.percentile(samples, (int) count, p);
        }
        if (restoredExactQuantiles != null) {
            for (Map.Entry<String, Double> e : STANDARD_QUANTILES.entrySet()) {
                if (e.getValue() == p && restoredExactQuantiles.containsKey(e.getKey())) {
                    return restoredExactQuantiles.get(e.getKey());
                }
            }
        }
        if (p == 0.0) {
            return min;
        }
        if (p == 100.0) {
            return max;
        }
        double virtualIndex = (count - 1) * (p / 100.0);
        long lo = (long) Math.floor(virtualIndex);
        double gamma = virtualIndex - lo;
        long hi = Math.min(lo + 1, count - 1);
        double[] values = histogramOrderStatistics(lo, hi);
        return clamp(NumpyStats.lerp(values[0], values[1], gamma));
    }

    /**
     * Median ({@code percentile(50)} in histogram mode, {@code np.median} when exact).
     *
     * @return the median, {@code 0} when empty
     */
    public double median() {
        if (count == 0) {
            return 0.0;
        }
        if (samples != null) {
            sortSamples();
            return NumpyStats.median(samples, (int) count);
        }
        return percentile(50.0);
    }

    private double clamp(double v) {
        return Math.max(min, Math.min(max, v));
    }

    /** Values of the 0-based order statistics {@code lo <= hi} from the histogram buckets. */
    private double[] histogramOrderStatistics(long lo, long hi) {
        double[] out = new double[2];
        long seen = 0;
        boolean loFound = false;
        for (DoubleHistogramIterationValue v : histogram.recordedValues()) {
            seen += v.getCountAddedInThisIterationStep();
            double value = histogram.medianEquivalentValue(v.getValueIteratedTo());
            if (!loFound && seen > lo) {
                out[0] = value;
                loFound = true;
            }
            if (seen > hi) {
                out[1] = value;
                return out;
            }
        }
        // cannot happen while histogram count == count; fall back to the exact extremes
        if (!loFound) {
            out[0] = max;
        }
        out[1] = max;
        return out;
    }

    /**
     * The histogram's non-empty buckets in increasing order of value. Every recorded value is in
     * exactly one bucket (negative values in the bucket of {@code 0}); a bucket is at most 0.1 %
     * wide relative to its values.
     *
     * @return the buckets, empty when nothing was recorded
     */
    public List<HistogramBucket> histogramBuckets() {
        List<HistogramBucket> buckets = new ArrayList<>();
        if (count == 0) {
            return buckets;
        }
        for (DoubleHistogramIterationValue v : histogram.recordedValues()) {
            double value = v.getValueIteratedTo();
            buckets.add(
                    new HistogramBucket(
                            histogram.lowestEquivalentValue(value),
                            histogram.highestEquivalentValue(value),
                            histogram.medianEquivalentValue(value),
                            v.getCountAddedInThisIterationStep()));
        }
        return buckets;
    }

    private void sortSamples() {
        if (!samplesSorted) {
            Arrays.sort(samples, 0, (int) count);
            samplesSorted = true;
        }
    }

    /**
     * A compact serial form; see {@link RecorderSnapshot}.
     *
     * @return the snapshot
     */
    @JsonValue
    public RecorderSnapshot snapshot() {
        return snapshot(false);
    }

    /**
     * The snapshot with the raw samples while this recorder still has them and holds at most {@code
     * maxSamples} values; else the same as {@link #snapshot()}. Restored, such a snapshot is a
     * recorder with the same samples, so merging several of them is exact as long as the total
     * stays within the cap (what a single process recording all the values would hold).
     *
     * @param maxSamples the most samples to include
     * @return the snapshot
     */
    public RecorderSnapshot snapshotWithSamples(int maxSamples) {
        return snapshot(samples != null && count > 0 && count <= maxSamples);
    }

    private RecorderSnapshot snapshot(boolean withSamples) {
        Map<String, Double> exactQuantiles = null;
        if (count > 0 && exact()) {
            exactQuantiles = new LinkedHashMap<>();
            for (Map.Entry<String, Double> e : STANDARD_QUANTILES.entrySet()) {
                exactQuantiles.put(
                        e.getKey(),
                        e.getKey().equals("median") ? median() : percentile(e.getValue()));
            }
        }
        String encoded = null;
        if (count > 0) {
            ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
            int length =
                    histogram.encodeIntoCompressedByteBuffer(buffer, Deflater.BEST_COMPRESSION);
            encoded = Base64.getEncoder().encodeToString(Arrays.copyOf(buffer.array(), length));
        }
        return new RecorderSnapshot(
                count,
                sum(),
                count == 0 ? 0.0 : mean,
                m2,
                min(),
                max(),
                exactSampleCap,
                encoded,
                exactQuantiles,
                withSamples ? encodeSamples(samples, (int) count) : null);
    }

    /** The first {@code n} samples as {@link RecorderSnapshot#samples()} carries them. */
    private static String encodeSamples(double[] values, int n) {
        ByteBuffer raw = ByteBuffer.allocate(n * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) {
            raw.putDouble(values[i]);
        }
        Deflater deflater = new Deflater(Deflater.BEST_SPEED);
        try {
            deflater.setInput(raw.array());
            deflater.finish();
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(n * 4 + 64);
            byte[] chunk = new byte[8192];
            while (!deflater.finished()) {
                out.write(chunk, 0, deflater.deflate(chunk));
            }
            return Base64.getEncoder().encodeToString(out.toByteArray());
        } finally {
            deflater.end();
        }
    }

    /**
     * The samples a snapshot carries, or {@code null} when they are not {@code count} finite values
     * (a snapshot from elsewhere is then restored without them).
     */
    private static double[] decodeSamples(String encoded, long count) {
        if (encoded == null || count > MAX_RESTORED_SAMPLES) {
            return null;
        }
        Inflater inflater = new Inflater();
        try {
            inflater.setInput(Base64.getDecoder().decode(encoded));
            byte[] raw = new byte[(int) count * Double.BYTES];
            int read = 0;
            while (read < raw.length && !inflater.finished()) {
                int n = inflater.inflate(raw, read, raw.length - read);
                if (n == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
                    return null;
                }
                read += n;
            }
            if (read != raw.length || !inflater.finished() || inflater.getRemaining() > 0) {
                return null;
            }
            double[] values = new double[(int) count];
            ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(values);
            for (double v : values) {
                if (!Double.isFinite(v)) {
                    return null;
                }
            }
            return values;
        } catch (DataFormatException | IllegalArgumentException e) {
            return null;
        } finally {
            inflater.end();
        }
    }

    /**
     * Restores a recorder from a snapshot. With the snapshot's raw samples (all of them, within the
     * cap) the result is the recorder that held them: exact, and exact when merged. Without, the
     * result has no raw samples: if the snapshot was exact its standard quantiles stay exact until
     * something else is recorded or merged in.
     *
     * @param snapshot a snapshot from {@link #snapshot()}
     * @return the restored recorder
     * @throws IllegalArgumentException when the histogram encoding is corrupt
     */
    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    public static MetricRecorder fromSnapshot(RecorderSnapshot snapshot) {
        MetricRecorder r = new MetricRecorder(Math.max(0, snapshot.sampleCap()));
        r.samples = null;
        if (snapshot.count() == 0) {
            // keep an empty restored recorder able to become exact again
            r.samples = new double[Math.min(INITIAL_CAPACITY, r.exactSampleCap)];
            return r;
        }
        r.count = snapshot.count();
        r.sum = snapshot.sum();
        r.mean = snapshot.mean();
        r.m2 = snapshot.m2();
        r.min = snapshot.min();
        r.max = snapshot.max();
        if (snapshot.histogram() != null) {
            try {
                DoubleHistogram decoded =
                        DoubleHistogram.decodeFromCompressedByteBuffer(
                                ByteBuffer.wrap(Base64.getDecoder().decode(snapshot.histogram())),
                                2);
                decoded.setAutoResize(true);
                r.histogram = decoded;
            } catch (DataFormatException | RuntimeException e) {
                throw new IllegalArgumentException(
                        "recorder snapshot has a corrupt histogram: " + e.getMessage(), e);
            }
        }
        double[] samples =
                snapshot.count() <= r.exactSampleCap
                        ? decodeSamples(snapshot.samples(), snapshot.count())
                        : null;
        if (samples != null) {
            r.samples = samples;
            r.samplesSorted = false;
        } else if (snapshot.exactQuantiles() != null) {
            r.restoredExactQuantiles = Map.copyOf(snapshot.exactQuantiles());
        }
        return r;
    }

    /**
     * Merges snapshots (for example one per runner pod). A single snapshot keeps its exact
     * quantiles; two or more non-empty ones give exact moments and histogram percentiles.
     *
     * @param snapshots the snapshots
     * @param exactSampleCap cap of the returned recorder
     * @return a new recorder holding the union
     */
    public static MetricRecorder mergeSnapshots(
            Iterable<RecorderSnapshot> snapshots, int exactSampleCap) {
        MetricRecorder merged = new MetricRecorder(exactSampleCap);
        for (RecorderSnapshot s : snapshots) {
            merged.merge(fromSnapshot(s));
        }
        return merged;
    }
}
