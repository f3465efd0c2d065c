package io.inferencebench.runner.metrics;

import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.runner.text.TerminalText;
import java.util.Locale;

/** One summary line of a stage's server metrics for the end-of-run table. */
public final class ServerMetricsLine {

    private ServerMetricsLine() {}

    /**
     * Formats the line, e.g. {@code stage 1 server: ttft mean 31.4 ms p90 39.0 ms running 8.20
     * waiting 0.00 coverage 7/7 (100 %)}; metrics the server does not expose are left out.
     *
     * @param stageNumber the stage, counted from 1 as in the summary table
     * @param report the stage's server metrics ({@code null} prints that none were collected)
     * @return the line
     */
    public static String format(int stageNumber, ServerMetricsReport report) {
        StringBuilder b = new StringBuilder("stage ").append(stageNumber).append(" server:");
        if (report == null) {
            return b.append(" no server metrics").toString();
        }
        ServerMetricSummary ttft = find(report, "time_to_first_token", "ttft");
        if (ttft != null && ttft.mean() != null) {
            double scale = ttft.name().contains("seconds") ? 1000 : 1;
            b.append(String.format(Locale.ROOT, " ttft mean %.1f ms", ttft.mean() * scale));
            if (ttft.p90() != null) {
                b.append(String.format(Locale.ROOT, " p90 %.1f ms", ttft.p90() * scale));
            }
        }
        appendGaugeMean(b, "running", find(report, "num_requests_running", "running"));
        appendGaugeMean(b, "waiting", find(report, "num_requests_waiting", "waiting", "queue"));
        ServerMetricSummary kv = find(report, "kv_cache_usage", "cache_usage", "token_usage");
        if (kv != null && kv.mean() != null && kv.type() != MetricType.HISTOGRAM) {
            b.append(String.format(Locale.ROOT, " kv %.1f %%", 100 * kv.mean()));
        }
        ScrapeCoverage c = report.coverage();
        if (c != null) {
            int expected = c.expected() > 0 ? c.expected() : c.succeeded() + c.failed();
            b.append(
                    String.format(
                            Locale.ROOT,
                            " coverage %d/%d (%.0f %%)",
                            c.succeeded(),
                            expected,
                            100 * c.ratio()));
            if (!c.errors().isEmpty()) {
                b.append(" last error: ").append(c.errors().get(c.errors().size() - 1));
            }
        }
        if (report.aggregate().isEmpty()) {
            b.append(" (no metrics)");
        }
        // the last error and the metric names are the server's words
        return TerminalText.oneLine(b.toString());
    }

    private static void appendGaugeMean(StringBuilder b, String label, ServerMetricSummary s) {
        if (s != null && s.mean() != null && s.type() != MetricType.HISTOGRAM) {
            b.append(String.format(Locale.ROOT, " %s %.2f", label, s.mean()));
        }
    }

    private static ServerMetricSummary find(ServerMetricsReport report, String... fragments) {
        for (String fragment : fragments) {
            for (ServerMetricSummary s : report.aggregate()) {
                if (s.name().contains(fragment)) {
                    return s;
                }
            }
        }
        return null;
    }
}
