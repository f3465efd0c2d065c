package io.inferencebench.profile.stats;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * Compact, Jackson-friendly serial form of a {@link MetricRecorder}: exact moments, a compressed
 * HdrHistogram and, while the recorder was exact, the exact standard quantiles.
 *
 * <p>A snapshot of a million values is a few kilobytes. Raw samples are included only where asked
 * ({@link MetricRecorder#snapshotWithSamples}: a runner pod's part, so that the operator's merge of
 * several pods is exact); a profile's snapshot never carries them.
 *
 * @param count number of recorded values
 * @param sum sum of the values
 * @param mean arithmetic mean ({@code 0} when empty)
 * @param m2 sum of squared deviations from the mean (population variance = {@code m2 / count})
 * @param min smallest value ({@code 0} when empty)
 * @param max largest value ({@code 0} when empty)
 * @param sampleCap the recorder's exact-sample cap
 * @param histogram base64 of the compressed {@code DoubleHistogram} encoding ({@code null} when
 *     empty)
 * @param exactQuantiles exact values of {@link MetricRecorder#STANDARD_QUANTILES} keyed by name,
 *     present only when the recorder was exact
 * @param samples the recorder's raw samples, all {@code count} of them in no particular order:
 *     base64 of their deflated IEEE 754 bits, 8 bytes each, little-endian (every bit kept: a
 *     percentile of them is the same double); present only in a snapshot taken with samples of a
 *     recorder that still had them
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RecorderSnapshot(
        long count,
        double sum,
        double mean,
        double m2,
        double min,
        double max,
        int sampleCap,
        String histogram,
        Map<String, Double> exactQuantiles,
        String samples) {

    /**
     * Whether this snapshot carries exact quantiles.
     *
     * @return {@code true} when {@link #exactQuantiles()} is present
     */
    public boolean exact() {
        return exactQuantiles != null;
    }
}
