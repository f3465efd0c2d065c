package io.inferencebench.profile.stats;

/**
 * One non-empty bucket of a {@link MetricRecorder}'s histogram.
 *
 * @param lowest smallest value that falls into the bucket
 * @param highest largest value that falls into the bucket
 * @param representative the bucket's middle value, which stands for its values
 * @param count how many values the bucket holds (&gt; 0)
 */
public record HistogramBucket(double lowest, double highest, double representative, long count) {}
