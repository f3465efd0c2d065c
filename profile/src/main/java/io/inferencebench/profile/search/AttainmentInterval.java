package io.inferencebench.profile.search;

import java.util.Locale;

/**
 * A 95 % confidence interval of an SLO attainment measured on {@code attempted} requests, of which
 * {@code good} met every objective: the Wilson score interval, which stays inside [0, 1] and keeps
 * its coverage at small counts and at attainments near 0 or 1, where the normal approximation fails
 * (100 of 100 good is not "exactly 100 %").
 *
 * <p>It treats requests as independent draws. Requests of one probe are not quite independent (a
 * queue couples neighbours), so the interval is a floor on the uncertainty, not a bound: a probe
 * whose interval straddles the target is certainly not decided, one whose interval clears it
 * probably is.
 *
 * @param low lower bound, in [0, 1]
 * @param high upper bound, in [0, 1]
 */
public record AttainmentInterval(double low, double high) {

    /** The confidence of the interval. */
    public static final double CONFIDENCE = 0.95;

    /** The standard normal quantile of a two-sided 95 % interval. */
    static final double Z = 1.959963984540054;

    /**
     * The interval of {@code good} of {@code attempted}.
     *
     * @return it; [0, 1] (nothing known) when nothing was attempted
     * @throws IllegalArgumentException when {@code good} is outside [0, attempted]
     */
    public static AttainmentInterval of(long good, long attempted) {
        if (good < 0 || good > attempted) {
            throw new IllegalArgumentException(
                    "good requests must be within [0, " + attempted + "], got " + good);
        }
        if (attempted == 0) {
            return new AttainmentInterval(0, 1);
        }
        double n = attempted;
        double p = good / n;
        double z2 = Z * Z;
        double denominator = 1 + z2 / n;
        double center = (p + z2 / (2 * n)) / denominator;
        double half = Z * Math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator;
        // exact at the ends: no good request puts the low bound at 0, all good the high one at 1
        double low = good == 0 ? 0 : Math.max(0, center - half);
        double high = good == attempted ? 1 : Math.min(1, center + half);
        return new AttainmentInterval(low, high);
    }

    /**
     * Whether the interval leaves the target undecided: it lies strictly inside. A target of 1 (or
     * 0) is decided by the requests themselves: all good meets it, one bad misses it.
     */
    public boolean straddles(double target) {
        return low < target && target < high;
    }

    /** E.g. {@code 95.1–99.6 %}. */
    public String describe() {
        return String.format(Locale.ROOT, "%.1f–%.1f %%", 100 * low, 100 * high);
    }
}
