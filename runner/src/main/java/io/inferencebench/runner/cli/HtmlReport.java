package io.inferencebench.runner.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.profile.compare.Comparison;
import io.inferencebench.profile.compare.MetricComparison;
import io.inferencebench.profile.compare.StageComparison;
import io.inferencebench.profile.lpg.RequestRate;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Renders runs into one self-contained HTML page: inline CSS and SVG only, no script, no external
 * resource (a Content-Security-Policy forbids any). Every plotted point is an SVG {@code circle}
 * whose {@code data-*} attributes carry the numbers it stands for, so a browser test (or a reader
 * with the inspector) can check them against the profiles.
 */
final class HtmlReport {

    /**
     * One run of the report.
     *
     * @param label how the page names it
     * @param profiles its stage (or probe) profiles
     * @param profileNames their file names, same order
     * @param capacity its capacity.json, or {@code null}
     */
    record Run(
            String label, List<JsonNode> profiles, List<String> profileNames, JsonNode capacity) {}

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

    private HtmlReport() {}

    static String render(List<Run> runs, Comparison comparison, String generated) {
        return render(runs, comparison, null, generated);
    }

    /**
     * The page.
     *
     * @param comparison the second run against the first, or {@code null}
     * @param notCompared why two runs are not compared, or {@code null}
     */
    static String render(
            List<Run> runs, Comparison comparison, String notCompared, String generated) {
        StringBuilder h = new StringBuilder();
        h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
                .append(
                        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
                                + " style-src 'unsafe-inline'; img-src data:\">\n")
                .append("<title>InferenceBench report</title>\n<style>")
                .append(CSS)
                .append("</style></head><body>\n");
        h.append("<h1>InferenceBench report</h1>\n<p class=\"meta\">")
                .append(esc(generated))
                .append(" &middot; ")
                .append(runs.size())
                .append(runs.size() == 1 ? " run" : " runs")
                .append("</p>\n<ul class=\"legend\">");
        for (int i = 0; i < runs.size(); i++) {
            h.append("<li><span class=\"swatch\" style=\"background:")
                    .append(color(i))
                    .append("\"></span>")
                    .append(esc(runs.get(i).label()))
                    .append(" <span class=\"meta\">(")
                    .append(esc(tool(runs.get(i))))
                    .append(runs.get(i).profiles().size())
                    .append(runs.get(i).capacity() != null ? " probes" : " stages")
                    .append(")</span></li>");
        }
        h.append(
                "</ul>\n<p class=\"meta\">Solid lines and filled points: p50; dashed lines and"
                        + " hollow points: p99. x: achieved request rate (req/s).</p>\n");
        h.append("<section class=\"charts\">\n");
        for (Chart chart : CHARTS) {
            chart(h, chart, runs);
        }
        h.append("</section>\n");
        for (int i = 0; i < runs.size(); i++) {
            if (runs.get(i).capacity() != null) {
                capacity(h, runs.get(i), i);
            }
        }
        if (comparison != null) {
            comparison(h, comparison, runs);
        } else if (notCompared != null && runs.size() == 2) {
            h.append("<section class=\"comparison\" data-verdict=\"not compared\"><h2>Comparison: ")
                    .append(esc(runs.get(1).label()))
                    .append(" against ")
                    .append(esc(runs.get(0).label()))
                    .append("</h2>\n<p class=\"verdict\">not compared: ")
                    .append(esc(notCompared))
                    .append("</p></section>\n");
        }
        for (int i = 0; i < runs.size(); i++) {
            tables(h, runs.get(i), i);
        }
        h.append("</body></html>\n");
        return h.toString();
    }

    // ---- charts ----

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
        for (int r = 0; r < runs.size(); r++) {
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
                        .append("\" stroke-width=\"2\"")
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
                    h.append("<circle class=\"point\" r=\"4\" cx=\"")
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

    /** The x of a stage: its achieved rate, else its throughput (a stage without a schedule). */
    static double rate(JsonNode metrics) {
        double achieved = metrics.path("achieved_rate").asDouble(0);
        return achieved > 0 ? achieved : metrics.path(requestsPerSecondKey(metrics)).asDouble(0);
    }

    /**
     * The key of a profile's completed requests per second: {@code throughput_rps} where the
     * profile has it (in LPG's final dialect {@code throughput} is output tokens per second), else
     * the seed schema's {@code throughput}.
     */
    static String requestsPerSecondKey(JsonNode metrics) {
        return has(metrics, "throughput_rps") ? "throughput_rps" : "throughput";
    }

    // ---- sections ----

    private static void capacity(StringBuilder h, Run run, int index) {
        JsonNode c = run.capacity();
        h.append("<section class=\"capacity\" data-run=\"")
                .append(index)
                .append("\"><h2>Capacity: ")
                .append(esc(run.label()))
                .append(
                        "</h2>\n<p class=\"verdict\">max_request_rate <b data-field=\"max_request_rate\">")
                .append(
                        c.path("max_request_rate").isNumber()
                                ? num(c.path("max_request_rate").asDouble())
                                : "none")
                .append("</b> req/s &middot; passing ")
                .append(
                        c.path("passing_rate").isNumber()
                                ? num(c.path("passing_rate").asDouble())
                                : "none")
                .append(" &middot; failing ")
                .append(
                        c.path("failing_rate").isNumber()
                                ? num(c.path("failing_rate").asDouble())
                                : "none")
                .append(" &middot; precision ")
                .append(num(c.path("precision").asDouble()))
                .append("</p>\n<p>")
                .append(esc(c.path("message").asText("")))
                .append("</p>\n<p class=\"meta\">SLO: ");
        List<String> slo = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = c.path("slo").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            slo.add(e.getKey() + " " + num(e.getValue().asDouble()));
        }
        h.append(esc(String.join(", ", slo)))
                .append(
                        "</p>\n<table><tr><th>probe</th><th>request rate</th>"
                                + "<th>achieved</th><th>SLO attainment</th><th>verdict</th><th>profile</th></tr>\n");
        int n = 1;
        for (JsonNode p : c.path("probes")) {
            String verdict =
                    !p.path("load_delivered").asBoolean(true)
                            ? "load not delivered"
                            : p.path("passed").asBoolean() ? "pass" : "fail";
            h.append("<tr class=\"")
                    .append(verdict.replace(' ', '-'))
                    .append("\"><td>")
                    .append(n++)
                    .append("</td><td>")
                    .append(num(p.path("request_rate").asDouble()))
                    .append("</td><td>")
                    .append(
                            p.path("achieved_rate").isNumber()
                                    ? num(p.path("achieved_rate").asDouble())
                                    : "-")
                    .append("</td><td>")
                    .append(pct(p.path("slo_attainment").asDouble()))
                    .append("</td><td>")
                    .append(verdict)
                    .append("</td><td>")
                    .append(esc(p.path("profile").asText("")))
                    .append("</td></tr>\n");
        }
        h.append("</table></section>\n");
    }

    private static void tables(StringBuilder h, Run run, int index) {
        h.append("<section class=\"run\" data-run=\"")
                .append(index)
                .append("\"><h2><span class=\"swatch\" style=\"background:")
                .append(color(index))
                .append("\"></span>")
                .append(esc(run.label()))
                .append(
                        tool(run).isEmpty()
                                ? ""
                                : " <span class=\"meta source\">"
                                        + esc(tool(run).substring(0, tool(run).length() - 2))
                                        + "</span>")
                .append(
                        "</h2>\n<div class=\"side-by-side\"><div><h3>Client metrics</h3>\n<table class=\"stages\">"
                                + "<tr><th>stage</th><th>rate</th><th>achieved</th><th>ok</th><th>failed</th>"
                                + "<th>req/s</th><th>out tok/s</th><th>TTFT p50</th><th>TTFT p99</th>"
                                + "<th>ITL p50</th><th>ITL p99</th><th>TPOT p50</th><th>E2E p50</th>"
                                + "<th>E2E p99</th><th>SLO</th></tr>\n");
        List<JsonNode> sorted = new ArrayList<>(run.profiles());
        sorted.sort(java.util.Comparator.comparingDouble(p -> rate(p.path("metrics"))));
        for (JsonNode p : sorted) {
            JsonNode m = p.path("metrics");
            h.append("<tr data-stage=\"")
                    .append(m.path("stage_index").asInt() + 1)
                    .append("\"><td>")
                    .append(m.path("stage_index").asInt() + 1)
                    .append("</td><td>")
                    .append(esc(rateText(m.path("request_rate"))))
                    .append("</td><td>")
                    .append(cell(m, "achieved_rate"))
                    .append("</td>")
                    .append(count(m, "completed", p))
                    .append(count(m, "failures", p))
                    .append("<td>")
                    .append(cell(m, requestsPerSecondKey(m)))
                    .append("</td><td>")
                    .append(
                            has(m, "output_tokens_per_min")
                                    ? num(m.path("output_tokens_per_min").asDouble() / 60)
                                    : "-")
                    .append("</td>");
            for (String key :
                    List.of(
                            "median_ttft_ms",
                            "p99_ttft_ms",
                            "median_itl_ms",
                            "p99_itl_ms",
                            "median_tpot_ms",
                            "median_e2el_ms",
                            "p99_e2el_ms")) {
                String family = key.substring(key.indexOf('_') + 1);
                if (measured(m, family) && !has(m, key)) {
                    // Another tool's file without this statistic: absent, never 0.
                    h.append("<td class=\"absent\" title=\"")
                            .append(esc(notInFile(p)))
                            .append("\">-</td>");
                } else if (measured(m, family)) {
                    h.append("<td>").append(cell(m, key)).append("</td>");
                } else {
                    // LPG writes 0 for a statistic of no values: shown as absent, and why.
                    h.append("<td class=\"absent\" title=\"")
                            .append(
                                    succeeded(m)
                                            ? "not measured in this stage"
                                            : "no successful request")
                            .append("\">-</td>");
                }
            }
            h.append("<td>")
                    .append(
                            has(m, "slo_attainment")
                                    ? pct(m.path("slo_attainment").asDouble())
                                    : "-")
                    .append("</td></tr>\n");
        }
        h.append("</table><p class=\"meta\">times in ms, rates in req/s</p></div>\n");
        Set<String> names = new LinkedHashSet<>();
        for (JsonNode p : sorted) {
            p.path("metrics").path("server_metrics").fieldNames().forEachRemaining(names::add);
        }
        h.append("<div><h3>Server metrics</h3>\n");
        if (names.isEmpty()) {
            h.append(
                    otherTool(sorted)
                            ? "<p class=\"meta\">none in this tool's file</p>"
                            : "<p class=\"meta\">none in these profiles (run with"
                                    + " --scrape-metrics)</p>");
        } else {
            h.append("<table class=\"server\"><tr><th>metric (mean)</th>");
            for (JsonNode p : sorted) {
                h.append("<th>stage ")
                        .append(p.path("metrics").path("stage_index").asInt() + 1)
                        .append("</th>");
            }
            h.append("</tr>\n");
            for (String name : names) {
                h.append("<tr><td>").append(esc(name)).append("</td>");
                for (JsonNode p : sorted) {
                    JsonNode s = p.path("metrics").path("server_metrics").path(name);
                    String mean = s.path("Mean").asText("");
                    if (mean.isEmpty()) {
                        mean = s.path("Rate").asText("-");
                    }
                    h.append("<td>").append(esc(mean)).append("</td>");
                }
                h.append("</tr>\n");
            }
            h.append("</table>");
        }
        h.append("</div></div></section>\n");
    }

    private static void comparison(StringBuilder h, Comparison c, List<Run> runs) {
        h.append("<section class=\"comparison\" data-verdict=\"")
                .append(c.verdict().text())
                .append("\"><h2>Comparison: ")
                .append(esc(runs.get(1).label()))
                .append(" against ")
                .append(esc(runs.get(0).label()))
                .append("</h2>\n<p class=\"verdict ")
                .append(c.verdict().name().toLowerCase(Locale.ROOT))
                .append("\">verdict: <b>")
                .append(c.verdict().text())
                .append("</b></p>\n");
        for (String note : c.notes()) {
            h.append("<p class=\"meta\">note: ").append(esc(note)).append("</p>\n");
        }
        for (StageComparison s : c.stages()) {
            h.append("<h3>stage ")
                    .append(s.stage())
                    .append(": ")
                    .append(esc(CompareCommand.stageKey(s)))
                    .append("</h3>\n");
            if (!s.comparable()) {
                h.append("<p class=\"meta not-comparable\" data-stage=\"")
                        .append(s.stage())
                        .append("\">not comparable: ")
                        .append(esc(s.notComparable()))
                        .append("</p>\n");
                continue;
            }
            h.append(
                    "<table><tr><th>metric</th><th>baseline</th><th>candidate</th>"
                            + "<th>change</th><th>significant</th><th>test</th></tr>\n");
            for (MetricComparison m : s.metrics()) {
                h.append("<tr class=\"")
                        .append(m.regressed() ? "worse" : m.improved() ? "better" : "same")
                        .append("\" data-metric=\"")
                        .append(m.name())
                        .append("\"><td>")
                        .append(m.name().replace('_', ' '))
                        .append(" (")
                        .append(m.metric().unit())
                        .append(")</td>")
                        .append(compared(m.baseline(), m.absent()))
                        .append(compared(m.candidate(), m.absent()))
                        .append("<td>")
                        .append(CompareCommand.change(m.change()))
                        .append("</td><td>")
                        .append(
                                m.significant()
                                        ? (m.regressed() ? "yes, worse" : "yes, better")
                                        : "no")
                        .append("</td><td>")
                        .append(m.absent() != null ? "not compared: " + esc(m.absent()) : m.test())
                        .append(
                                m.pValue() == null
                                        ? ""
                                        : String.format(Locale.ROOT, " p=%.2g", m.pValue()))
                        .append("</td></tr>\n");
            }
            h.append("</table>\n");
        }
        h.append("</section>\n");
    }

    // ---- formatting ----

    /** A compared value, or "absent" (never 0) with why. */
    private static String compared(Double value, String absent) {
        return value == null
                ? "<td class=\"absent\" title=\"" + esc(absent) + "\">absent</td>"
                : "<td>" + num(value) + "</td>";
    }

    /** The tool and version a run comes from, for the legend ("AIPerf 0.13.0, "), or "". */
    static String tool(Run run) {
        if (run.profiles().isEmpty()) {
            return "";
        }
        JsonNode source = run.profiles().get(0).path("source");
        String tool = source.path("tool").asText("");
        if (tool.isEmpty()) {
            return "";
        }
        String version = source.path("version").asText("");
        String dialect = source.path("lpg_dialect").asText("");
        return tool
                + (version.isEmpty() ? "" : " " + version)
                + (dialect.isEmpty() ? "" : ", LPG " + dialect)
                + ", ";
    }

    private static boolean otherTool(List<JsonNode> profiles) {
        String kind =
                profiles.isEmpty() ? "" : profiles.get(0).path("source").path("kind").asText("");
        return !kind.isEmpty() && !kind.equals("inferencebench");
    }

    /** A count cell: absent (not 0) when the file does not give it. */
    private static String count(JsonNode m, String key, JsonNode profile) {
        return m.path(key).isNumber()
                ? "<td>" + m.path(key).asLong() + "</td>"
                : "<td class=\"absent\" title=\"" + esc(notInFile(profile)) + "\">-</td>";
    }

    /** Why a stage lacks a value: the file (of which tool) does not carry it. */
    private static String notInFile(JsonNode profile) {
        JsonNode source = profile.path("source");
        String tool = source.path("tool").asText("");
        return tool.isEmpty() || source.path("kind").asText("").equals("inferencebench")
                ? "not in this profile"
                : "not reported by " + tool + " (" + source.path("file").asText("") + ")";
    }

    private static boolean has(JsonNode m, String key) {
        return m.path(key).isNumber();
    }

    /**
     * Whether a latency family has values: its {@code count_} when the profile has one (this
     * runner's), else whether any request succeeded (LPG's own families have no count and write 0
     * for none).
     */
    static boolean measured(JsonNode m, String family) {
        JsonNode count = m.path("count_" + family);
        return count.isNumber() ? count.asLong() > 0 : succeeded(m);
    }

    /** Whether any request of the stage succeeded; a profile that does not say is taken as yes. */
    private static boolean succeeded(JsonNode m) {
        JsonNode completed = m.path("completed");
        return !completed.isNumber() || completed.asLong() > 0;
    }

    private static String cell(JsonNode m, String key) {
        return has(m, key) ? num(m.path(key).asDouble()) : "-";
    }

    private static String rateText(JsonNode rate) {
        return rate.isNumber() ? RequestRate.pythonString(rate.asDouble()) : rate.asText("-");
    }

    static String num(double v) {
        double a = Math.abs(v);
        if (a == 0) {
            return "0";
        }
        return String.format(
                Locale.ROOT,
                a >= 1000
                        ? "%.0f"
                        : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : a >= 1 ? "%.3f" : "%.4f",
                v);
    }

    private static String tick(double v) {
        return new java.math.BigDecimal(v)
                .round(new java.math.MathContext(3))
                .stripTrailingZeros()
                .toPlainString();
    }

    private static String pct(double v) {
        return String.format(Locale.ROOT, "%.1f %%", 100 * v);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private static String color(int run) {
        return COLORS[run % COLORS.length];
    }

    static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length());
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(ch);
            }
        }
        return b.toString();
    }

    private static final String CSS =
            "body{font-family:system-ui,-apple-system,'DejaVu Sans',sans-serif;margin:24px;color:#222;"
                    + "max-width:1800px}h1{margin:0 0 4px}h2{margin-top:28px;border-bottom:1px solid #ddd}"
                    + ".meta{color:#666;font-size:13px}.legend{list-style:none;padding:0;display:flex;"
                    + "gap:18px;flex-wrap:wrap}.swatch{display:inline-block;width:12px;height:12px;"
                    + "margin-right:6px;border-radius:2px;vertical-align:middle}.charts{display:flex;"
                    + "flex-wrap:wrap;gap:12px}.chart{margin:0;border:1px solid #e4e4e4;padding:8px;"
                    + "border-radius:6px}.chart figcaption{font-weight:600;font-size:14px;margin-bottom:4px}"
                    + ".tick,.label{font-size:11px;fill:#555}table{border-collapse:collapse;font-size:13px;"
                    + "margin:6px 0}th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}"
                    + "th{background:#f5f5f5}td:first-child,th:first-child{text-align:left}"
                    + ".side-by-side{display:flex;gap:24px;flex-wrap:wrap;align-items:flex-start}"
                    + ".verdict{font-size:16px}.verdict.regression b{color:#c62828}"
                    + ".verdict.improvement b{color:#2e7d32}tr.worse td{background:#fdecea}"
                    + "tr.better td{background:#e8f5e9}tr.fail td{background:#fdecea}"
                    + "tr.load-not-delivered td{background:#fff8e1}td.absent{color:#999}";
}
