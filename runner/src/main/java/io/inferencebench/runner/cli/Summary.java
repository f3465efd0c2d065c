package io.inferencebench.runner.cli;

import io.inferencebench.profile.compare.StudentT;
import io.inferencebench.profile.lpg.ConversationProfile;
import io.inferencebench.profile.lpg.LoadVerdict;
import io.inferencebench.profile.lpg.LpgProfileWriter;
import io.inferencebench.profile.lpg.RequestRate;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.profile.stats.MetricRecorder;
import io.inferencebench.runner.engine.Slo;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The per-stage summary table printed at the end of a run. */
final class Summary {

    private Summary() {}

    /** Where the CLI's failure limit is set, for the LoadDelivered message. */
    static final String FAILURE_LIMIT_NAME = "--max-failure-ratio";

    /**
     * Prints the table, then each stage that did not deliver its load with the reason.
     *
     * @param maxFailureRatio the run's allowed share of failed requests
     */
    static void print(PrintWriter out, List<StageResult> results, Slo slo, double maxFailureRatio) {
        if (results.isEmpty()) {
            // Nothing finished (e.g. interrupted before the first stage): no empty table.
            return;
        }
        List<String> header =
                new ArrayList<>(
                        List.of(
                                "stage",
                                "rate",
                                "drawn",
                                "achieved",
                                "sent",
                                "ok",
                                "failed",
                                "req/s",
                                "out tok/s",
                                "ttft p50",
                                "ttft p99",
                                "itl p50",
                                "tpot p50",
                                "e2el p50",
                                "e2el p99",
                                "lag p99",
                                "peak",
                                "load"));
        if (slo.configured()) {
            header.add("slo %");
        }
        List<List<String>> rows = new ArrayList<>();
        List<LoadVerdict> verdicts = new ArrayList<>();
        for (StageResult r : results) {
            LoadVerdict verdict =
                    LoadVerdict.judge(
                            LoadVerdict.Figures.of(r), maxFailureRatio, FAILURE_LIMIT_NAME);
            verdicts.add(verdict);
            double time = LpgProfileWriter.benchmarkTimeSeconds(r);
            List<String> row = new ArrayList<>();
            row.add((r.stageIndex + 1) + (r.partial ? "*" : ""));
            // Sessions started at a rate: the rate and the schedule drawn are sessions/s.
            boolean sessionRate = r.conversation != null && r.conversation.sessionRate != null;
            row.add(
                    r.concurrency != null && Double.isInfinite(r.requestedRate)
                            ? "c=" + r.concurrency
                            : r.rampUp != null
                                    ? RequestRate.pythonString(r.rampUp.startRate)
                                            + "->"
                                            + RequestRate.pythonString(r.rampUp.endRate)
                                    : sessionRate
                                            ? RequestRate.pythonString(r.conversation.sessionRate)
                                                    + " sess/s"
                                            : RequestRate.pythonString(r.requestedRate));
            boolean rates = LpgProfileWriter.ratesMeaningful(r);
            Double drawn = LpgProfileWriter.scheduledRate(r);
            row.add(rates && drawn != null ? f(drawn) + (sessionRate ? " sess/s" : "") : "-");
            row.add(rates ? f(LpgProfileWriter.achievedRate(r)) : "n/a");
            row.add(Long.toString(r.sent));
            row.add(Long.toString(r.completed));
            row.add(Long.toString(r.failed));
            row.add(rates ? f(time > 0 ? r.completed / time : 0) : "n/a");
            row.add(rates ? f(time > 0 ? r.totalOutputTokens / time : 0) : "n/a");
            row.add(p(r.ttftMs, 50));
            row.add(p(r.ttftMs, 99));
            row.add(p(r.itlMs, 50));
            row.add(p(r.tpotMs, 50));
            row.add(p(r.latencyMs, 50));
            row.add(p(r.latencyMs, 99));
            row.add(p(r.scheduleLagMs, 99));
            row.add(Long.toString(r.inFlightPeak));
            row.add(
                    verdict.delivered()
                            ? "ok"
                            : verdict.indeterminate() ? "indeterminate" : verdict.reason());
            if (slo.configured()) {
                long attempted = r.completed + r.failed;
                row.add(f(attempted == 0 ? 0 : 100.0 * r.goodputRequests / attempted));
            }
            rows.add(row);
        }
        int[] widths = new int[header.size()];
        for (int i = 0; i < header.size(); i++) {
            widths[i] = header.get(i).length();
            for (List<String> row : rows) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        out.println(line(header, widths));
        for (List<String> row : rows) {
            out.println(line(row, widths));
        }
        out.println(
                "(rates in req/s; drawn = the rate of the schedule the stage drew, which random"
                        + " arrivals make differ from the requested one, and which delivery is judged"
                        + " against; times in ms; lag = due -> sent; peak = most requests in flight;"
                        + " load = LoadDelivered)");
        if (results.stream().anyMatch(r -> !LpgProfileWriter.ratesMeaningful(r))) {
            out.printf(
                    "n/a: a stage of fewer than %d requests has no meaningful rate%n",
                    LpgProfileWriter.MIN_REQUESTS_FOR_RATES);
        }
        for (int i = 0; i < results.size(); i++) {
            LoadVerdict verdict = verdicts.get(i);
            if (verdict.indeterminate()) {
                out.printf(
                        "stage %d: LoadDelivered=Unknown (%s): %s%n",
                        results.get(i).stageIndex + 1, verdict.reason(), verdict.message());
            } else if (!verdict.delivered()) {
                out.printf(
                        "stage %d: LoadDelivered=False (%s): %s; its figures are not a valid"
                                + " measurement at the requested load%n",
                        results.get(i).stageIndex + 1, verdict.reason(), verdict.message());
            }
        }
        for (StageResult r : results) {
            if (r.conversation != null) {
                conversation(out, r);
            }
        }
        for (StageResult r : results) {
            if (r.partial) {
                out.printf(
                        "* stage %d is partial: interrupted, %d request(s) cancelled (not counted"
                                + " as failed)%n",
                        r.stageIndex + 1, r.cancelledRequests);
            }
        }
    }

    /**
     * With repeats: per stage of the list, each figure's mean over the repeats that finished and
     * its 95 % interval ({@code t(0.975, n - 1) * s / sqrt(n)}), e.g. {@code 52.7 ± 1.2}.
     *
     * @param stages the run's stages, all repeats together
     * @param repeats how many times over the list ran
     */
    static void acrossRepeats(PrintWriter out, List<StageResult> results, int stages, int repeats) {
        if (repeats < 2 || stages < repeats) {
            return;
        }
        int once = stages / repeats;
        List<String> header =
                List.of(
                        "stage",
                        "rate",
                        "repeats",
                        "out tok/s",
                        "ttft p50",
                        "ttft p99",
                        "itl p50",
                        "e2el p50",
                        "e2el p99");
        List<List<String>> rows = new ArrayList<>();
        for (int s = 0; s < once; s++) {
            List<StageResult> group = new ArrayList<>();
            for (StageResult r : results) {
                if (r.stageIndex % once == s && !r.partial) {
                    group.add(r);
                }
            }
            if (group.size() < 2) {
                continue;
            }
            StageResult first = group.getFirst();
            List<String> row = new ArrayList<>();
            row.add(Integer.toString(s + 1));
            row.add(
                    first.concurrency != null && Double.isInfinite(first.requestedRate)
                            ? "c=" + first.concurrency
                            : RequestRate.pythonString(first.requestedRate));
            row.add(Integer.toString(group.size()));
            row.add(
                    interval(
                            group.stream()
                                    .map(
                                            r -> {
                                                double t = LpgProfileWriter.benchmarkTimeSeconds(r);
                                                return t > 0 ? r.totalOutputTokens / t : 0.0;
                                            })
                                    .toList()));
            row.add(interval(group.stream().map(r -> value(r.ttftMs, 50)).toList()));
            row.add(interval(group.stream().map(r -> value(r.ttftMs, 99)).toList()));
            row.add(interval(group.stream().map(r -> value(r.itlMs, 50)).toList()));
            row.add(interval(group.stream().map(r -> value(r.latencyMs, 50)).toList()));
            row.add(interval(group.stream().map(r -> value(r.latencyMs, 99)).toList()));
            rows.add(row);
        }
        if (rows.isEmpty()) {
            return;
        }
        int[] widths = new int[header.size()];
        for (int i = 0; i < header.size(); i++) {
            widths[i] = header.get(i).length();
            for (List<String> row : rows) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        out.println();
        out.println("across repeats (mean ± 95 % interval of each repeat's value):");
        out.println(line(header, widths));
        for (List<String> row : rows) {
            out.println(line(row, widths));
        }
    }

    /** A percentile, or {@code null} when nothing was recorded. */
    private static Double value(MetricRecorder r, double percentile) {
        return r.count() == 0 ? null : r.percentile(percentile);
    }

    /** {@code mean ± t(0.975, n - 1) * s / sqrt(n)}; {@code -} when a value is missing. */
    static String interval(List<Double> values) {
        if (values.stream().anyMatch(v -> v == null || !Double.isFinite(v))) {
            return "-";
        }
        int n = values.size();
        double mean = values.stream().mapToDouble(Double::doubleValue).sum() / n;
        double squares = 0;
        for (double v : values) {
            squares += (v - mean) * (v - mean);
        }
        double half = StudentT.quantile(0.975, n - 1) * Math.sqrt(squares / (n - 1)) / Math.sqrt(n);
        return f(mean) + " ± " + f(half);
    }

    /** A conversation stage's sessions and its TTFT and prompt length by turn. */
    private static void conversation(PrintWriter out, StageResult r) {
        ConversationProfile c = r.conversation;
        out.printf(
                Locale.ROOT,
                "stage %d sessions: %d started, %d completed, %d abandoned (a turn failed), %d cut"
                        + " (by the stage's end)%n",
                r.stageIndex + 1,
                c.sessionsStarted,
                c.sessionsCompleted,
                c.sessionsAbandoned,
                c.sessionsCut);
        StringBuilder ttft = new StringBuilder();
        StringBuilder history = new StringBuilder();
        for (ConversationProfile.Turn t : c.turns) {
            String sep = ttft.isEmpty() ? "" : "  ";
            ttft.append(sep).append(t.turn()).append(": ").append(orDash(t.ttftP50Ms()));
            history.append(sep)
                    .append(t.turn())
                    .append(": ")
                    .append(
                            t.promptTokensMean() == null
                                    ? "-"
                                    : String.format(Locale.ROOT, "%.0f", t.promptTokensMean()));
        }
        out.printf("  ttft p50 by turn (ms)   %s%n", ttft);
        out.printf("  prompt tokens by turn   %s%n", history);
    }

    private static String orDash(Double v) {
        return v == null ? "-" : f(v);
    }

    private static String line(List<String> cells, int[] widths) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            if (i > 0) {
                sb.append("  ");
            }
            String cell = cells.get(i);
            sb.append(" ".repeat(widths[i] - cell.length())).append(cell);
        }
        return sb.toString();
    }

    private static String f(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private static String p(MetricRecorder r, double percentile) {
        return r.count() == 0 ? "-" : f(r.percentile(percentile));
    }
}
