package io.inferencebench.runner.engine;

/**
 * Goodput thresholds in ms (vLLM's --goodput); null = not set. A successful request is "good" when
 * it meets every set threshold.
 */
public record Slo(Double ttftMs, Double tpotMs, Double e2elMs, double minAttainment) {

    public static final Slo NONE = new Slo(null, null, null, 0);

    public boolean configured() {
        return ttftMs != null || tpotMs != null || e2elMs != null;
    }

    /** Whether every set threshold is met; a NaN value (not measured) misses its threshold. */
    public boolean met(double ttft, double tpot, double e2el) {
        return (ttftMs == null || ttft <= ttftMs)
                && (tpotMs == null || tpot <= tpotMs)
                && (e2elMs == null || e2el <= e2elMs);
    }
}
