package io.inferencebench.profile.server.prometheus;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a {@link PrometheusApiSource} asks: the selectors (the configured one with a metric-name
 * matcher), the API parameters of a names or range query, and a window's evaluation grid.
 */
final class PrometheusQueries {

    private PrometheusQueries() {}

    /**
     * A window's evaluation points: {@code start + k * step} for {@code k < intervals}, then the
     * end itself in a query of its own. Prometheus steps are whole milliseconds, so {@code start +
     * intervals * step} may fall short of the end by up to {@code intervals} ms.
     *
     * @param intervals steps in the window, 0 for an empty window
     * @param step the step, ms, no coarser than the one asked for
     */
    record Grid(int intervals, long step) {

        /** Evaluation points, the end included. */
        int points() {
            return intervals + 1;
        }
    }

    /**
     * The grid of a window at a step no coarser than {@code requestedStep}, aligned so that both
     * the start and the end are evaluation points.
     *
     * @param start window start, epoch ms
     * @param end window end, epoch ms, not before the start
     * @param requestedStep the coarsest step wanted, ms
     * @return the grid
     */
    static Grid grid(long start, long end, long requestedStep) {
        long span = end - start;
        int intervals = span == 0 ? 0 : (int) Math.max(1, ceilDiv(span, requestedStep));
        long step = intervals == 0 ? Math.max(1, requestedStep) : Math.max(1, span / intervals);
        return new Grid(intervals, step);
    }

    /** The selector matching every metric name. */
    static String anyName(PrometheusSelector selector) {
        return "{" + join("__name__=~\".+\"", selector.render()) + "}";
    }

    /** The selector matching exactly these metric names. */
    static String names(Set<String> names, PrometheusSelector selector) {
        return "{" + join("__name__=~\"" + nameRegex(names) + "\"", selector.render()) + "}";
    }

    /** Parameters of {@code /api/v1/label/__name__/values} for a window. */
    static Map<String, List<String>> namesInWindow(String match, long start, long end) {
        Map<String, List<String>> params = new LinkedHashMap<>();
        params.put("match[]", List.of(match));
        params.put("start", List.of(seconds(start)));
        params.put("end", List.of(seconds(end)));
        return params;
    }

    /** Parameters of {@code /api/v1/query_range}. */
    static Map<String, List<String>> range(String query, long from, long to, long step) {
        Map<String, List<String>> q = new LinkedHashMap<>();
        q.put("query", List.of(query));
        q.put("start", List.of(seconds(from)));
        q.put("end", List.of(seconds(to)));
        q.put("step", List.of(seconds(step)));
        return q;
    }

    private static String nameRegex(Set<String> names) {
        StringBuilder b = new StringBuilder();
        for (String n : names) {
            if (b.length() > 0) {
                b.append('|');
            }
            for (char c : n.toCharArray()) {
                if (!Character.isLetterOrDigit(c) && c != '_' && c != ':') {
                    b.append("\\\\");
                }
                b.append(c);
            }
        }
        return b.toString();
    }

    private static String join(String first, String rest) {
        return rest.isEmpty() ? first : first + "," + rest;
    }

    private static String seconds(long millis) {
        return java.math.BigDecimal.valueOf(millis, 3).toPlainString();
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
