package io.inferencebench.profile.prom;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The result of parsing one metrics page: the families found and the problems met on the way.
 *
 * @param format the format the page was parsed as
 * @param families families by name, in page order; unmodifiable
 * @param problems skipped lines and other problems (at most {@link
 *     PrometheusTextParser#MAX_PROBLEMS} are kept)
 * @param problemCount total number of problems, including those not kept
 * @param sampleCount number of samples kept
 */
public record ParsedPage(
        PrometheusTextParser.Format format,
        Map<String, MetricFamily> families,
        List<ParseProblem> problems,
        int problemCount,
        int sampleCount) {

    /** Defensive copies keeping page order. */
    public ParsedPage {
        families = Collections.unmodifiableMap(new LinkedHashMap<>(families));
        problems = List.copyOf(problems);
    }

    /**
     * Looks up a family by name; also finds a counter declared with or without its {@code _total}
     * suffix (0.0.4 declares {@code foo_total}, OpenMetrics {@code foo}).
     *
     * @param name a family name
     * @return the family, or {@code null}
     */
    public MetricFamily family(String name) {
        MetricFamily f = families.get(name);
        if (f != null) {
            return f;
        }
        if (name.endsWith("_total")) {
            f = families.get(name.substring(0, name.length() - "_total".length()));
            return f != null && f.type() == MetricType.COUNTER ? f : null;
        }
        f = families.get(name + "_total");
        return f != null && (f.type() == MetricType.COUNTER || f.type() == MetricType.UNKNOWN)
                ? f
                : null;
    }
}
