package io.inferencebench.profile.compare;

/**
 * Student's t distribution: the upper tail from the regularized incomplete beta function (a
 * continued fraction, Lentz's method), the quantile by bisection on it.
 */
public final class StudentT {

    private StudentT() {}

    /** P(T > t) for {@code df} degrees of freedom (real, > 0). */
    public static double upperTail(double t, double df) {
        if (Double.isNaN(t)) {
            return Double.NaN;
        }
        if (t == Double.POSITIVE_INFINITY) {
            return 0;
        }
        double x = df / (df + t * t);
        double tail = 0.5 * regularizedBeta(x, df / 2, 0.5);
        return t >= 0 ? tail : 1 - tail;
    }

    /** The t with P(T <= t) = {@code p}, for p in (0, 1). */
    public static double quantile(double p, double df) {
        if (!(p > 0 && p < 1)) {
            throw new IllegalArgumentException("probability must be in (0, 1), got " + p);
        }
        if (p < 0.5) {
            return -quantile(1 - p, df);
        }
        double low = 0;
        double high = 1;
        while (1 - upperTail(high, df) < p) {
            high *= 2;
            if (high > 1e12) {
                return high;
            }
        }
        for (int i = 0; i < 200 && high - low > 1e-12 * Math.max(1, high); i++) {
            double mid = (low + high) / 2;
            if (1 - upperTail(mid, df) < p) {
                low = mid;
            } else {
                high = mid;
            }
        }
        return (low + high) / 2;
    }

    /** I_x(a, b). */
    static double regularizedBeta(double x, double a, double b) {
        if (x <= 0) {
            return 0;
        }
        if (x >= 1) {
            return 1;
        }
        double front =
                Math.exp(
                        NoiseTests.logGamma(a + b)
                                - NoiseTests.logGamma(a)
                                - NoiseTests.logGamma(b)
                                + a * Math.log(x)
                                + b * Math.log(1 - x));
        if (x < (a + 1) / (a + b + 2)) {
            return front * continuedFraction(x, a, b) / a;
        }
        return 1 - front * continuedFraction(1 - x, b, a) / b;
    }

    private static double continuedFraction(double x, double a, double b) {
        final double tiny = 1e-300;
        double c = 1;
        double d = 1 - (a + b) * x / (a + 1);
        d = Math.abs(d) < tiny ? tiny : d;
        d = 1 / d;
        double h = d;
        for (int m = 1; m <= 500; m++) {
            int m2 = 2 * m;
            double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
            d = 1 + aa * d;
            d = Math.abs(d) < tiny ? tiny : d;
            c = 1 + aa / c;
            c = Math.abs(c) < tiny ? tiny : c;
            d = 1 / d;
            h *= d * c;
            aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
            d = 1 + aa * d;
            d = Math.abs(d) < tiny ? tiny : d;
            c = 1 + aa / c;
            c = Math.abs(c) < tiny ? tiny : c;
            d = 1 / d;
            double delta = d * c;
            h *= delta;
            if (Math.abs(delta - 1) < 1e-15) {
                break;
            }
        }
        return h;
    }
}
