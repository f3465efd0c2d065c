package io.inferencebench.profile.prom;

import java.util.Map;

/**
 * One sample line of a Prometheus/OpenMetrics page.
 *
 * @param name the sample name as written (for example {@code
 *     vllm:e2e_request_latency_seconds_bucket})
 * @param labels label names to (unescaped) values, in page order; unmodifiable
 * @param value the value ({@code NaN} and infinities allowed)
 * @param timestampMillis the explicit timestamp in epoch milliseconds, {@code null} when absent
 *     (OpenMetrics' seconds are converted)
 */
public record Sample(String name, Map<String, String> labels, double value, Long timestampMillis) {

    /**
     * A label value.
     *
     * @param label the label name
     * @return the value, or {@code null} when the label is absent
     */
    public String label(String label) {
        return labels.get(label);
    }
}
