package io.inferencebench.profile.stats;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Map;

/**
 * Compact, Jackson-friendly serial form of a {@link MetricRecorder}: exact moments, a compressed
 * HdrHistogram and, while the recorder was exact, the exact standard quantiles.
 *
 * <p>A snapshot of a million values is a few kilobytes: raw samples are never included.
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
        Map<String, Double> exactQuantiles) {

    /**
     * Whether this snapshot carries exact quantiles.
     *
     * @return {@code true} when {@link #exactQuantiles()} is present
     */
    public boolean exact() {
        return exactQuantiles != null;
    }
}
