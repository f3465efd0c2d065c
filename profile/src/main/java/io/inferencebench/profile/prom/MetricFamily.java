package io.inferencebench.profile.prom;

import java.util.List;

/**
 * A metric family: the samples that share one TYPE (a histogram's {@code _bucket}, {@code _sum} and
 * {@code _count} series belong to one family).
 *
 * @param name family name (the name in the TYPE line, or the sample name when untyped)
 * @param type the declared type, {@link MetricType#UNKNOWN} when undeclared
 * @param help the HELP text (unescaped), {@code null} when absent
 * @param unit the OpenMetrics UNIT, {@code null} when absent
 * @param samples the samples in page order, {@code _created} series excluded
 */
public record MetricFamily(
        String name, MetricType type, String help, String unit, List<Sample> samples) {

    /** Defensive copy. */
    public MetricFamily {
        samples = List.copyOf(samples);
    }
}
