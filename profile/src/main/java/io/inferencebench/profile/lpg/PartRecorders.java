package io.inferencebench.profile.lpg;

import io.inferencebench.profile.stats.MetricRecorder;

/**
 * Merging the recorders of a part of a stage (a ramp's window, a conversation's turn) that several
 * runner pods report, as the stage's own recorders merge.
 */
final class PartRecorders {

    private PartRecorders() {}

    /** {@code part} added to {@code into}, or a copy of {@code part} when {@code into} is null. */
    static MetricRecorder mergeInto(MetricRecorder into, MetricRecorder part) {
        if (into == null) {
            MetricRecorder copy = new MetricRecorder(part.exactSampleCap());
            return copy.merge(part);
        }
        return into.merge(part);
    }

    /** The merged recorder's percentile, or {@code null} when it holds no value. */
    static Double percentile(MetricRecorder r, double p) {
        return r == null || r.count() == 0 ? null : r.percentile(p);
    }
}
