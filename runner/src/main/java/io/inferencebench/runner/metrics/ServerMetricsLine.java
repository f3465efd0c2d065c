package io.inferencebench.runner.metrics;

import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricSummary;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.text.TerminalText;
import java.util.Locale;

/** One summary line of a stage's server metrics for the end-of-run table. */
public final class ServerMetricsLine {

    private ServerMetricsLine() {}

    /**
     * Formats the line, e.g. {@code stage 1 server: ttft mean 31.4 ms p90 39.0 ms running 8.20
     * waiting 0.00 kv 12.5 % coverage 7/7 (100 %)}; metrics the server does not expose are left
     * out, values a gauge cannot take are flagged ({@code kv -5 (impossible for a ratio)}), NaN is
     * shown as NaN.
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
        appendGauge(b, "running", find(report, "num_requests_running", "running"), Bound.COUNT);
        appendGauge(
                b,
                "waiting",
                find(report, "num_requests_waiting", "waiting", "queue"),
                Bound.COUNT);
        appendGauge(
                b, "kv", find(report, "kv_cache_usage", "cache_usage", "token_usage"), Bound.RATIO);
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

    /** What values a gauge can take; a value outside is shown as the server said, and flagged. */
    private enum Bound {
        /** Requests: never negative. */
        COUNT,
        /** A share in [0, 1], shown as a percentage. */
        RATIO
    }

    /**
     * The gauge's mean as the server reported it: a ratio as a percentage when it is one; a value
     * it cannot take (a negative count, a ratio outside [0, 1], anywhere in the window) flagged
     * rather than shown as "-500 %"; NaN samples named rather than dropped.
     */
    private static void appendGauge(
            StringBuilder b, String label, ServerMetricSummary s, Bound bound) {
        if (s == null || s.type() == MetricType.HISTOGRAM) {
            return;
        }
        if (s.mean() == null) {
            if (s.nanSamples() > 0) {
                b.append(' ')
                        .append(label)
                        .append(
                                s.nanSamples() == 1
                                        ? " NaN (the server reported NaN in its only sample)"
                                        : " NaN (the server reported NaN in all "
                                                + s.nanSamples()
                                                + " samples)");
            }
            return;
        }
        double mean = s.mean();
        double min = s.min() != null ? s.min() : mean;
        double max = s.max() != null ? s.max() : mean;
        b.append(' ').append(label).append(' ');
        String impossible = null;
        if (bound == Bound.RATIO) {
            if (mean >= 0 && mean <= 1) {
                b.append(String.format(Locale.ROOT, "%.1f %%", 100 * mean));
                if (min < 0) {
                    impossible = "min " + raw(min) + " is impossible for a ratio";
                } else if (max > 1) {
                    impossible = "max " + raw(max) + " is impossible for a ratio";
                }
            } else {
                b.append(raw(mean));
                impossible = "impossible for a ratio";
            }
        } else {
            b.append(String.format(Locale.ROOT, "%.2f", mean));
            if (mean < 0) {
                impossible = "impossible for a count";
            } else if (min < 0) {
                impossible = "min " + raw(min) + " is impossible for a count";
            }
        }
        if (impossible != null) {
            b.append(" (").append(impossible).append(')');
        }
        if (s.nanSamples() > 0) {
            b.append(" (")
                    .append(s.nanSamples())
                    .append(s.nanSamples() == 1 ? " NaN sample" : " NaN samples")
                    .append(" left out)");
        }
    }

    /** A value as the server wrote it: no scaling, no trailing zeros. */
    private static String raw(double value) {
        return Double.isFinite(value)
                ? io.inferencebench.profile.lpg.LpgProfileWriter.formatServerValue(value)
                : Double.toString(value);
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
