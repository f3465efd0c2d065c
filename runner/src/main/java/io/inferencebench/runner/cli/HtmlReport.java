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
                    .append(ReportChart.color(i))
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
                        + " hollow points: p99. x: achieved request rate (req/s). Each run is"
                        + " drawn beneath the runs listed before it, with wider lines and larger"
                        + " points, so a run that measured the same numbers shows as a ring"
                        + " around them.</p>\n");
        ReportChart.section(h, runs);
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
                .append("</p>\n");
        if (c.path("confidence").isTextual() && !c.path("undecided").asBoolean(false)) {
            // an undecided answer says so in its message already
            h.append("<p>").append(esc(c.path("confidence").asText())).append("</p>\n");
        }
        h.append("<p class=\"meta\">SLO: ");
        List<String> slo = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = c.path("slo").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            slo.add(e.getKey() + " " + num(e.getValue().asDouble()));
        }
        h.append(esc(String.join(", ", slo)))
                .append(
                        "</p>\n<table><tr><th>probe</th><th>request rate</th>"
                                + "<th>achieved</th><th>SLO attainment (95 % interval)</th><th>verdict</th>"
                                + "<th>profile</th></tr>\n");
        int n = 1;
        for (JsonNode p : c.path("probes")) {
            // the search's own word (pass, fail, load not delivered, indeterminate); older
            // capacity files have none, and no indeterminate probes
            String verdict =
                    p.path("verdict").isTextual()
                            ? p.path("verdict").asText()
                            : !p.path("load_delivered").asBoolean(true)
                                    ? "load not delivered"
                                    : p.path("passed").asBoolean() ? "pass" : "fail";
            JsonNode interval = p.path("slo_attainment_interval");
            String attainment =
                    pct(p.path("slo_attainment").asDouble())
                            + (interval.size() == 2
                                    ? " ("
                                            + pct(interval.get(0).asDouble())
                                            + "–"
                                            + pct(interval.get(1).asDouble())
                                            + ")"
                                    : "");
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
                    .append(esc(attainment))
                    .append("</td><td>")
                    .append(esc(verdict))
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
                .append(ReportChart.color(index))
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
            stageRow(h, p)
                    .append("<td>")
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
        h.append("</table><p class=\"meta\">times in ms, rates in req/s</p>\n");
        replicaBalance(h, sorted);
        prefixCache(h, sorted);
        conversations(h, sorted);
        byModel(h, sorted);
        h.append("</div>\n");
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

    /**
     * Who served each stage, when the profiles say: each replica's own served count and share
     * ({@code replica_balance}) and the verdict; else the requests sent per address.
     */
    private static void replicaBalance(StringBuilder h, List<JsonNode> stages) {
        boolean any =
                stages.stream()
                        .anyMatch(
                                p ->
                                        p.path("metrics").has("replica_balance")
                                                || p.path("metrics").has("requests_per_address"));
        if (!any) {
            return;
        }
        h.append(
                "<h3>Replica balance</h3>\n<table class=\"balance\"><tr><th>stage</th>"
                        + "<th>served per replica (share)</th><th>sent per address</th>"
                        + "<th>verdict</th></tr>\n");
        for (JsonNode p : stages) {
            JsonNode m = p.path("metrics");
            JsonNode balance = m.path("replica_balance");
            stageRow(h, p).append("<td>");
            StringBuilder served = new StringBuilder();
            balance.path("served")
                    .fields()
                    .forEachRemaining(
                            e ->
                                    served.append(served.isEmpty() ? "" : ", ")
                                            .append(esc(e.getKey()))
                                            .append(": ")
                                            .append(e.getValue().asLong())
                                            .append(" (")
                                            .append(
                                                    pct(
                                                            balance.path("shares")
                                                                    .path(e.getKey())
                                                                    .asDouble()))
                                            .append(')'));
            h.append(served.isEmpty() ? "-" : served).append("</td><td>");
            StringBuilder sent = new StringBuilder();
            m.path("requests_per_address")
                    .fields()
                    .forEachRemaining(
                            e ->
                                    sent.append(sent.isEmpty() ? "" : ", ")
                                            .append(esc(e.getKey()))
                                            .append(": ")
                                            .append(e.getValue().asLong())
                                            .append(joinedOrLeft(m, e.getKey())));
            h.append(sent.isEmpty() ? "-" : sent).append("</td><td>");
            if (balance.has("balanced")) {
                h.append(balance.path("balanced").asBoolean() ? "even" : "uneven");
            }
            if (balance.has("reason")) {
                h.append(balance.has("balanced") ? ": " : "")
                        .append(esc(balance.path("reason").asText()));
            }
            if (!balance.has("balanced") && !balance.has("reason")) {
                h.append('-');
            }
            h.append("</td></tr>\n");
        }
        h.append("</table>\n");
    }

    /**
     * {@code " (joined at 6.2 s)"}, {@code " (left at 4.0 s)"} or both for an address that joined
     * or left the spread during the stage ({@code metrics.address_changes}); empty otherwise.
     */
    private static String joinedOrLeft(JsonNode metrics, String address) {
        StringBuilder when = new StringBuilder();
        for (String change : List.of("joined", "left")) {
            JsonNode at = metrics.path("address_changes").path(change).path(address);
            if (at.isNumber()) {
                when.append(when.isEmpty() ? " (" : ", ")
                        .append(change)
                        .append(String.format(Locale.ROOT, " at %.1f s", at.asDouble()));
            }
        }
        return when.isEmpty() ? "" : when.append(')').toString();
    }

    /**
     * The prefix-cache state each stage declared ({@code dimensions.prefix_cache}) and the reuse
     * the servers counted ({@code metrics.prefix_cache}), when a profile says either.
     */
    private static void prefixCache(StringBuilder h, List<JsonNode> stages) {
        boolean any =
                stages.stream()
                        .anyMatch(
                                p ->
                                        p.path("metrics").has("prefix_cache")
                                                || p.path("dimensions").has("prefix_cache"));
        if (!any) {
            return;
        }
        h.append(
                "<h3>Prefix cache</h3>\n<table class=\"prefix-cache\"><tr><th>stage</th>"
                        + "<th>state at start</th><th>hit tokens / queried (rate)</th>"
                        + "<th>per replica</th></tr>\n");
        for (JsonNode p : stages) {
            JsonNode cache = p.path("metrics").path("prefix_cache");
            stageRow(h, p)
                    .append("<td>")
                    .append(esc(p.path("dimensions").path("prefix_cache").asText("not declared")))
                    .append("</td><td>")
                    .append(cache.isMissingNode() ? "-" : cacheCounts(cache))
                    .append("</td><td>");
            StringBuilder replicas = new StringBuilder();
            cache.path("by_replica")
                    .fields()
                    .forEachRemaining(
                            e ->
                                    replicas.append(replicas.isEmpty() ? "" : ", ")
                                            .append(esc(e.getKey()))
                                            .append(": ")
                                            .append(cacheCounts(e.getValue())));
            h.append(replicas.isEmpty() ? "-" : replicas).append("</td></tr>\n");
        }
        h.append("</table>\n");
    }

    /**
     * A conversation stage's sessions and, per turn index, the prompt tokens sent and the TTFT p50
     * and p99 ({@code metrics.conversation}), when a profile has them.
     */
    private static void conversations(StringBuilder h, List<JsonNode> stages) {
        if (stages.stream().noneMatch(p -> p.path("metrics").has("conversation"))) {
            return;
        }
        h.append(
                "<h3>Conversations</h3>\n<table class=\"conversations\"><tr><th>stage</th>"
                        + "<th>sessions: completed / started (abandoned, cut)</th>"
                        + "<th>turn: prompt tokens, TTFT p50 / p99 (ms)</th></tr>\n");
        for (JsonNode p : stages) {
            JsonNode c = p.path("metrics").path("conversation");
            if (c.isMissingNode()) {
                continue;
            }
            stageRow(h, p)
                    .append("<td>")
                    .append(c.path("sessions_completed").asLong())
                    .append(" / ")
                    .append(c.path("sessions_started").asLong())
                    .append(" (")
                    .append(c.path("sessions_abandoned").asLong())
                    .append(", ")
                    .append(c.path("sessions_cut").asLong())
                    .append(")</td><td>");
            StringBuilder turns = new StringBuilder();
            for (JsonNode t : c.path("turns")) {
                turns.append(turns.isEmpty() ? "" : "; ")
                        .append(t.path("turn").asInt())
                        .append(": ")
                        .append(orDash(t, "prompt_tokens_mean"))
                        .append(", ")
                        .append(orDash(t, "ttft_ms_p50"))
                        .append(" / ")
                        .append(orDash(t, "ttft_ms_p99"));
            }
            h.append(turns.isEmpty() ? "-" : turns).append("</td></tr>\n");
        }
        h.append("</table>\n");
    }

    /**
     * Each model of a mix per stage ({@code metrics.by_model}): share asked for, requests, failures
     * and TTFT p50/p99, when a profile has them.
     */
    private static void byModel(StringBuilder h, List<JsonNode> stages) {
        if (stages.stream().noneMatch(p -> p.path("metrics").has("by_model"))) {
            return;
        }
        h.append(
                "<h3>By model</h3>\n<table class=\"by-model\"><tr><th>stage</th><th>model</th>"
                        + "<th>share asked</th><th>requests (failed)</th>"
                        + "<th>TTFT p50 / p99 (ms)</th></tr>\n");
        for (JsonNode p : stages) {
            p.path("metrics")
                    .path("by_model")
                    .fields()
                    .forEachRemaining(
                            e -> {
                                JsonNode m = e.getValue();
                                stageRow(h, p)
                                        .append("<td>")
                                        .append(esc(e.getKey()))
                                        .append("</td><td>")
                                        .append(pct(m.path("share").asDouble()))
                                        .append("</td><td>")
                                        .append(m.path("requests_sent").asLong())
                                        .append(" (")
                                        .append(m.path("failures").asLong())
                                        .append(")</td><td>")
                                        .append(orDash(m, "ttft_ms_p50"))
                                        .append(" / ")
                                        .append(orDash(m, "ttft_ms_p99"))
                                        .append("</td></tr>\n");
                            });
        }
        h.append("</table>\n");
    }

    /** Opens a table row of the profile's stage with the stage's number as its first cell. */
    private static StringBuilder stageRow(StringBuilder h, JsonNode profile) {
        int stage = profile.path("metrics").path("stage_index").asInt() + 1;
        return h.append("<tr data-stage=\"")
                .append(stage)
                .append("\"><td>")
                .append(stage)
                .append("</td>");
    }

    /** A figure of {@code node}, or a dash where it was not measured. */
    private static String orDash(JsonNode node, String key) {
        return node.has(key) ? num(node.path(key).asDouble()) : "-";
    }

    private static String cacheCounts(JsonNode cache) {
        return cache.path("hits").asLong()
                + " / "
                + cache.path("queries").asLong()
                + (cache.has("hit_rate")
                        ? " (" + pct(cache.path("hit_rate").asDouble()) + ")"
                        : "");
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
                                        : m.inconclusive() ? "can't tell" : "no")
                        .append("</td><td>")
                        .append(m.absent() != null ? "not compared: " + esc(m.absent()) : m.test())
                        .append(
                                m.pValue() == null
                                        ? ""
                                        : String.format(Locale.ROOT, " p=%.2g", m.pValue()))
                        .append(
                                m.detectable() == null
                                        ? ""
                                        : String.format(
                                                Locale.ROOT,
                                                ", detects ±%.1f %%",
                                                100 * m.detectable()))
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

    static boolean has(JsonNode m, String key) {
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

    private static String pct(double v) {
        return String.format(Locale.ROOT, "%.1f %%", 100 * v);
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
                    + ".verdict.improvement b{color:#2e7d32}.verdict.inconclusive b{color:#ef6c00}"
                    + "tr.worse td{background:#fdecea}"
                    + "tr.better td{background:#e8f5e9}tr.fail td{background:#fdecea}"
                    + "tr.load-not-delivered td{background:#fff8e1}td.absent{color:#999}";
}
