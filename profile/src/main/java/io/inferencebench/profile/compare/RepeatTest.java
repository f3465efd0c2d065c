package io.inferencebench.profile.compare;

import java.util.List;

/**
 * Welch's t-test of one statistic over repeats: each repeat of a stage gives one value (its p50
 * TTFT, its output throughput), so the test measures the run-to-run noise, which a test over one
 * run's requests cannot see (a busy machine delays many requests of one run together).
 *
 * @param baselineMean the mean of the baseline's repeat values
 * @param candidateMean the mean of the candidate's repeat values
 * @param standardError the standard error of the difference of the means
 * @param degreesOfFreedom Welch–Satterthwaite degrees of freedom
 */
record RepeatTest(
        double baselineMean, double candidateMean, double standardError, double degreesOfFreedom) {

    /**
     * The test of two sides' repeat values. With two or more a side it is Welch's test. With one
     * value on a side (a single run against another's repeats), that value is judged against the
     * other side's spread: the difference's standard error is {@code s * sqrt(1/n + 1)}, with the
     * {@code n - 1} degrees of freedom of {@code s} (a prediction interval).
     *
     * @throws IllegalArgumentException when neither side has two values
     */
    static RepeatTest of(List<Double> baseline, List<Double> candidate) {
        int nb = baseline.size();
        int nc = candidate.size();
        if (nb < 1 || nc < 1 || (nb < 2 && nc < 2)) {
            throw new IllegalArgumentException(
                    "a test over repeats needs a value a side and two or more on one");
        }
        double mb = mean(baseline);
        double mc = mean(candidate);
        if (nb < 2 || nc < 2) {
            List<Double> spread = nb >= 2 ? baseline : candidate;
            int n = spread.size();
            double s2 = variance(spread, mean(spread));
            return new RepeatTest(mb, mc, Math.sqrt(s2 * (1.0 / n + 1.0)), n - 1);
        }
        double vb = variance(baseline, mb) / nb;
        double vc = variance(candidate, mc) / nc;
        double se = Math.sqrt(vb + vc);
        double df;
        if (vb + vc == 0) {
            df = nb + nc - 2;
        } else {
            df = (vb + vc) * (vb + vc) / (vb * vb / (nb - 1) + vc * vc / (nc - 1));
        }
        return new RepeatTest(mb, mc, se, df);
    }

    /**
     * The paired test of two sides' repeat values, {@code baseline.get(i)} with {@code
     * candidate.get(i)}: a t-test of the differences ({@code n - 1} degrees of freedom). For
     * repeats that drew the same schedule pair by pair (the same seed): what the schedule's
     * randomness moves (a Poisson schedule's throughput follows the arrivals it drew) moves both
     * values of a pair alike and cancels in their difference.
     *
     * @throws IllegalArgumentException unless both sides have the same number, two or more
     */
    static RepeatTest paired(List<Double> baseline, List<Double> candidate) {
        int n = baseline.size();
        if (n < 2 || candidate.size() != n) {
            throw new IllegalArgumentException(
                    "a paired test over repeats needs as many values a side, two or more");
        }
        List<Double> differences = new java.util.ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            differences.add(candidate.get(i) - baseline.get(i));
        }
        double meanDifference = mean(differences);
        double se = Math.sqrt(variance(differences, meanDifference) / n);
        return new RepeatTest(mean(baseline), mean(candidate), se, n - 1);
    }

    /** Two-sided p-value of "the means are equal"; 1 when both sides are constant and equal. */
    double pValue() {
        double diff = candidateMean - baselineMean;
        if (standardError == 0) {
            return diff == 0 ? 1.0 : 0.0;
        }
        return 2 * StudentT.upperTail(Math.abs(diff) / standardError, degreesOfFreedom);
    }

    /**
     * Half the width of the difference's two-sided confidence interval at {@code level} (e.g. the
     * per-test level of a comparison): a difference smaller than this cannot test significant at
     * that level, whatever its sign.
     */
    double halfWidth(double level) {
        if (standardError == 0) {
            return 0;
        }
        return StudentT.quantile(1 - level / 2, degreesOfFreedom) * standardError;
    }

    private static double mean(List<Double> values) {
        double sum = 0;
        for (double v : values) {
            sum += v;
        }
        return sum / values.size();
    }

    private static double variance(List<Double> values, double mean) {
        double squares = 0;
        for (double v : values) {
            squares += (v - mean) * (v - mean);
        }
        return squares / (values.size() - 1);
    }
}
