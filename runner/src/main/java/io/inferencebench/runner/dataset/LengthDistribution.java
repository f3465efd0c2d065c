package io.inferencebench.runner.dataset;

import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A token-length distribution: fixed, uniform in [min, max], or normal(mean, sd) clamped to [min,
 * max]. Lengths are at least 1.
 */
public record LengthDistribution(Kind kind, int mean, int min, int max, double stddev) {

    public enum Kind {
        FIXED,
        UNIFORM,
        NORMAL;

        public static Kind parse(String text) {
            try {
                return valueOf(text.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "length distribution must be fixed, uniform or normal; got '" + text + "'");
            }
        }
    }

    public LengthDistribution {
        if (mean < 1) {
            throw new IllegalArgumentException("length must be >= 1, got " + mean);
        }
        min = Math.max(1, min);
        max = Math.max(min, max);
    }

    public static LengthDistribution fixed(int length) {
        return new LengthDistribution(Kind.FIXED, length, length, length, 0);
    }

    /** vLLM's --random-range-ratio: uniform in [len * (1 - r), len * (1 + r)]. */
    public static LengthDistribution rangeRatio(int length, double ratio) {
        if (ratio <= 0) {
            return fixed(length);
        }
        return new LengthDistribution(
                Kind.UNIFORM,
                length,
                (int) Math.floor(length * (1 - ratio)),
                (int) Math.ceil(length * (1 + ratio)),
                0);
    }

    public static LengthDistribution normal(int mean, double stddev) {
        return new LengthDistribution(
                Kind.NORMAL, mean, 1, (int) Math.ceil(mean + 6 * stddev), stddev);
    }

    public int sample(SplittableRandom random) {
        return switch (kind) {
            case FIXED -> mean;
            case UNIFORM -> min + random.nextInt(max - min + 1);
            case NORMAL -> {
                double u1 = 1.0 - random.nextDouble();
                double u2 = random.nextDouble();
                double z = Math.sqrt(-2.0 * Math.log(u1)) * Math.cos(2.0 * Math.PI * u2);
                yield (int) Math.max(min, Math.min(max, Math.round(mean + stddev * z)));
            }
        };
    }
}
