package io.inferencebench.runner.cli;

import static io.inferencebench.runner.cli.HtmlReport.esc;
import static io.inferencebench.runner.cli.HtmlReport.has;
import static io.inferencebench.runner.cli.HtmlReport.measured;
import static io.inferencebench.runner.cli.HtmlReport.num;
import static io.inferencebench.runner.cli.HtmlReport.rate;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.runner.cli.HtmlReport.Run;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The report's SVG charts: each latency family (p50 and p99) of every run against its achieved
 * rate, with a run's capacity bracket and SLO line. Every plotted point is an SVG {@code circle}
 * whose {@code data-*} attributes carry the numbers it stands for.
 */
final class ReportChart {

    /** A latency family plotted against the achieved rate. */
    private record Chart(String key, String title, String family, String sloKey) {}

    private static final List<Chart> CHARTS =
            List.of(
                    new Chart("ttft", "Time to first token", "ttft_ms", "ttft_ms"),
                    new Chart("itl", "Inter-token latency", "itl_ms", null),
                    new Chart("e2el", "End-to-end latency", "e2el_ms", "e2el_ms"));

    private static final String[] COLORS = {
        "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"
    };

    private static final int WIDTH = 560;
    private static final int HEIGHT = 320;
    private static final int LEFT = 64;
    private static final int RIGHT = 16;
    private static final int TOP = 16;
    private static final int BOTTOM = 44;

    private ReportChart() {}

    /** The charts' section of the page, one chart per latency family. */
    static void section(StringBuilder h, List<Run> runs) {
        h.append("<section class=\"charts\">\n");
        for (Chart chart : CHARTS) {
            chart(h, chart, runs);
        }
        h.append("</section>\n");
    }

    private static void chart(StringBuilder h, Chart chart, List<Run> runs) {
        double maxX = 0;
        double maxY = 0;
        for (Run run : runs) {
            for (JsonNode p : run.profiles()) {
                JsonNode m = p.path("metrics");
                if (!has(m, "median_" + chart.family()) || !measured(m, chart.family())) {
                    continue;
                }
                maxX = Math.max(maxX, rate(m));
                maxY = Math.max(maxY, m.path("p99_" + chart.family()).asDouble());
                maxY = Math.max(maxY, m.path("median_" + chart.family()).asDouble());
            }
            JsonNode cap = run.capacity();
            if (cap != null) {
                maxX = Math.max(maxX, cap.path("failing_rate").asDouble(0));
                maxX = Math.max(maxX, cap.path("passing_rate").asDouble(0));
                if (chart.sloKey() != null && cap.path("slo").has(chart.sloKey())) {
                    maxY = Math.max(maxY, cap.path("slo").path(chart.sloKey()).asDouble());
                }
            }
        }
        double xMax = niceCeiling(maxX * 1.05);
        double yMax = niceCeiling(maxY * 1.1);
        h.append("<figure class=\"chart\" data-metric=\"")
                .append(chart.key())
                .append("\"><figcaption>")
                .append(chart.title())
                .append(" (ms) against achieved rate</figcaption>\n");
        h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
                .append(WIDTH)
                .append("\" height=\"")
                .append(HEIGHT)
                .append("\" viewBox=\"0 0 ")
                .append(WIDTH)
                .append(' ')
                .append(HEIGHT)
                .append("\" role=\"img\" aria-label=\"")
                .append(chart.title())
                .append("\">\n");
        axes(h, xMax, yMax);
        // The last run is drawn first and each earlier run above it, thinner: two runs that
        // measured the same numbers would otherwise show only the run drawn last; nested, the
        // earlier run's point sits inside a ring of the later's.
        for (int r = runs.size() - 1; r >= 0; r--) {
            Run run = runs.get(r);
            JsonNode cap = run.capacity();
            if (cap != null) {
                capacityMarks(h, cap, chart, xMax, yMax, r);
            }
            for (String stat : List.of("p50", "p99")) {
                String key = (stat.equals("p50") ? "median_" : "p99_") + chart.family();
                List<double[]> points = new ArrayList<>();
                List<String> names = new ArrayList<>();
                List<JsonNode> nodes = new ArrayList<>();
                for (int i = 0; i < run.profiles().size(); i++) {
                    JsonNode m = run.profiles().get(i).path("metrics");
                    if (has(m, key) && measured(m, chart.family())) {
                        points.add(new double[] {rate(m), m.path(key).asDouble()});
                        names.add(run.profileNames().get(i));
                        nodes.add(m);
                    }
                }
                sortByX(points, names, nodes);
                if (points.isEmpty()) {
                    continue;
                }
                StringBuilder path = new StringBuilder();
                for (double[] p : points) {
                    path.append(path.isEmpty() ? "" : " ")
                            .append(fmt(x(p[0], xMax)))
                            .append(',')
                            .append(fmt(y(p[1], yMax)));
                }
                h.append("<polyline class=\"series\" fill=\"none\" stroke=\"")
                        .append(color(r))
                        .append("\" stroke-width=\"")
                        .append(2 + 2 * layer(r))
                        .append('"')
                        .append(stat.equals("p99") ? " stroke-dasharray=\"6 4\"" : "")
                        .append(" data-run=\"")
                        .append(r)
                        .append("\" data-series=\"")
                        .append(chart.key())
                        .append('_')
                        .append(stat)
                        .append("\" points=\"")
                        .append(path)
                        .append("\"/>\n");
                for (int i = 0; i < points.size(); i++) {
                    double[] p = points.get(i);
                    JsonNode m = nodes.get(i);
                    h.append("<circle class=\"point\" r=\"")
                            .append(4 + 2 * layer(r))
                            .append("\" cx=\"")
                            .append(fmt(x(p[0], xMax)))
                            .append("\" cy=\"")
                            .append(fmt(y(p[1], yMax)))
                            .append("\" fill=\"")
                            .append(stat.equals("p50") ? color(r) : "#fff")
                            .append("\" stroke=\"")
                            .append(color(r))
                            .append("\" stroke-width=\"2\" data-run=\"")
                            .append(r)
                            .append("\" data-series=\"")
                            .append(chart.key())
                            .append('_')
                            .append(stat)
                            .append("\" data-stage=\"")
                            .append(m.path("stage_index").asInt() + 1)
                            .append("\" data-request-rate=\"")
                            .append(esc(m.path("request_rate").asText()))
                            .append("\" data-achieved-rate=\"")
                            .append(p[0])
                            .append("\" data-value=\"")
                            .append(p[1])
                            .append("\" data-profile=\"")
                            .append(esc(names.get(i)))
                            .append("\"><title>")
                            .append(esc(run.label()))
                            .append(": ")
                            .append(chart.key())
                            .append(' ')
                            .append(stat)
                            .append(' ')
                            .append(num(p[1]))
                            .append(" ms at ")
                            .append(num(p[0]))
                            .append(" req/s</title></circle>\n");
                }
            }
        }
        h.append("</svg></figure>\n");
    }

    private static void capacityMarks(
            StringBuilder h, JsonNode cap, Chart chart, double xMax, double yMax, int run) {
        JsonNode passing = cap.path("passing_rate");
        JsonNode failing = cap.path("failing_rate");
        if (passing.isNumber() && failing.isNumber()) {
            double x1 = x(passing.asDouble(), xMax);
            double x2 = x(failing.asDouble(), xMax);
            h.append("<rect class=\"capacity-bracket\" x=\"")
                    .append(fmt(x1))
                    .append("\" y=\"")
                    .append(TOP)
                    .append("\" width=\"")
                    .append(fmt(Math.max(1, x2 - x1)))
                    .append("\" height=\"")
                    .append(HEIGHT - TOP - BOTTOM)
                    .append("\" fill=\"")
                    .append(color(run))
                    .append("\" fill-opacity=\"0.12\"/>\n");
        }
        if (passing.isNumber()) {
            verticalLine(h, "capacity-passing", passing.asDouble(), xMax, color(run), "", run);
        }
        if (failing.isNumber()) {
            verticalLine(h, "capacity-failing", failing.asDouble(), xMax, color(run), "4 3", run);
        }
        if (chart.sloKey() != null && cap.path("slo").has(chart.sloKey())) {
            double slo = cap.path("slo").path(chart.sloKey()).asDouble();
            double yy = y(slo, yMax);
            h.append("<line class=\"slo-line\" data-run=\"")
                    .append(run)
                    .append("\" data-slo-ms=\"")
                    .append(slo)
                    .append("\" x1=\"")
                    .append(LEFT)
                    .append("\" x2=\"")
                    .append(WIDTH - RIGHT)
                    .append("\" y1=\"")
                    .append(fmt(yy))
                    .append("\" y2=\"")
                    .append(fmt(yy))
                    .append("\" stroke=\"#555\" stroke-dasharray=\"2 3\"/>\n")
                    .append("<text class=\"label\" x=\"")
                    .append(WIDTH - RIGHT - 4)
                    .append("\" y=\"")
                    .append(fmt(yy - 4))
                    .append("\" text-anchor=\"end\">SLO ")
                    .append(num(slo))
                    .append(" ms</text>\n");
        }
    }

    private static void verticalLine(
            StringBuilder h,
            String cls,
            double rate,
            double xMax,
            String color,
            String dash,
            int run) {
        double xx = x(rate, xMax);
        h.append("<line class=\"")
                .append(cls)
                .append("\" data-run=\"")
                .append(run)
                .append("\" data-rate=\"")
                .append(rate)
                .append("\" x1=\"")
                .append(fmt(xx))
                .append("\" x2=\"")
                .append(fmt(xx))
                .append("\" y1=\"")
                .append(TOP)
                .append("\" y2=\"")
                .append(HEIGHT - BOTTOM)
                .append("\" stroke=\"")
                .append(color)
                .append("\" stroke-width=\"1.5\"")
                .append(dash.isEmpty() ? "" : " stroke-dasharray=\"" + dash + "\"")
                .append("/>\n");
    }

    private static void axes(StringBuilder h, double xMax, double yMax) {
        int x0 = LEFT;
        int y0 = HEIGHT - BOTTOM;
        h.append("<g class=\"axes\" stroke=\"#888\">")
                .append("<line x1=\"")
                .append(x0)
                .append("\" y1=\"")
                .append(y0)
                .append("\" x2=\"")
                .append(WIDTH - RIGHT)
                .append("\" y2=\"")
                .append(y0)
                .append("\"/><line x1=\"")
                .append(x0)
                .append("\" y1=\"")
                .append(TOP)
                .append("\" x2=\"")
                .append(x0)
                .append("\" y2=\"")
                .append(y0)
                .append("\"/></g>\n");
        for (int i = 0; i <= 5; i++) {
            double xv = xMax * i / 5;
            double yv = yMax * i / 5;
            h.append("<text class=\"tick\" x=\"")
                    .append(fmt(x(xv, xMax)))
                    .append("\" y=\"")
                    .append(y0 + 16)
                    .append("\" text-anchor=\"middle\">")
                    .append(tick(xv))
                    .append("</text>")
                    .append("<text class=\"tick\" x=\"")
                    .append(x0 - 6)
                    .append("\" y=\"")
                    .append(fmt(y(yv, yMax) + 4))
                    .append("\" text-anchor=\"end\">")
                    .append(tick(yv))
                    .append("</text>");
            if (i > 0) {
                h.append("<line class=\"grid\" x1=\"")
                        .append(x0)
                        .append("\" x2=\"")
                        .append(WIDTH - RIGHT)
                        .append("\" y1=\"")
                        .append(fmt(y(yv, yMax)))
                        .append("\" y2=\"")
                        .append(fmt(y(yv, yMax)))
                        .append("\" stroke=\"#eee\"/>");
            }
        }
        h.append("\n<text class=\"label\" x=\"")
                .append((LEFT + WIDTH - RIGHT) / 2)
                .append("\" y=\"")
                .append(HEIGHT - 8)
                .append("\" text-anchor=\"middle\">achieved rate (req/s)</text>\n");
    }

    private static double x(double value, double max) {
        return LEFT + (WIDTH - LEFT - RIGHT) * (max > 0 ? value / max : 0);
    }

    private static double y(double value, double max) {
        return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * (max > 0 ? value / max : 0);
    }

    /** 1, 2 or 5 times a power of ten, at least {@code v}. */
    static double niceCeiling(double v) {
        if (!(v > 0)) {
            return 1;
        }
        double power = Math.pow(10, Math.floor(Math.log10(v)));
        for (double step : new double[] {1, 2, 2.5, 5, 10}) {
            if (step * power >= v) {
                return step * power;
            }
        }
        return 10 * power;
    }

    private static void sortByX(List<double[]> points, List<String> names, List<JsonNode> nodes) {
        Integer[] order = new Integer[points.size()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, (a, b) -> Double.compare(points.get(a)[0], points.get(b)[0]));
        List<double[]> p = new ArrayList<>();
        List<String> n = new ArrayList<>();
        List<JsonNode> m = new ArrayList<>();
        for (int i : order) {
            p.add(points.get(i));
            n.add(names.get(i));
            m.add(nodes.get(i));
        }
        points.clear();
        points.addAll(p);
        names.clear();
        names.addAll(n);
        nodes.clear();
        nodes.addAll(m);
    }

    private static String tick(double v) {
        return new java.math.BigDecimal(v)
                .round(new java.math.MathContext(3))
                .stripTrailingZeros()
                .toPlainString();
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    /**
     * How far under the first run a run is drawn: its points' radius and its lines' width grow by
     * two pixels a layer, up to four layers (five runs nest; more repeat the fifth's size).
     */
    private static int layer(int run) {
        return Math.min(run, 4);
    }

    /** The colour run {@code run} is drawn in, in the charts and the legend. */
    static String color(int run) {
        return COLORS[run % COLORS.length];
    }
}
