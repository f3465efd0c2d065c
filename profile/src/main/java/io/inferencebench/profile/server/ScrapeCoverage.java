package io.inferencebench.profile.server;

import java.util.List;
import java.util.Map;

/**
 * How completely the server was observed during a stage window.
 *
 * @param expected scrapes expected (replicas × rounds planned by the scraper; {@code 0} if unknown)
 * @param succeeded scrapes that returned a parsable page inside the window
 * @param failed scrapes that failed inside the window
 * @param replicas number of distinct replicas seen
 * @param errors a bounded list of distinct error messages
 * @param succeededByReplica successful scrapes per replica
 * @param increasesLeftOut replicas whose counter and histogram increases were left out of the
 *     window (its start was not observed for them; the reason is among {@code errors}), sorted
 */
public record ScrapeCoverage(
        int expected,
        int succeeded,
        int failed,
        int replicas,
        List<String> errors,
        Map<String, Integer> succeededByReplica,
        List<String> increasesLeftOut) {

    /** Defensive copies. */
    public ScrapeCoverage {
        errors = errors == null ? List.of() : List.copyOf(errors);
        succeededByReplica = succeededByReplica == null ? Map.of() : Map.copyOf(succeededByReplica);
        increasesLeftOut =
                increasesLeftOut == null
                        ? List.of()
                        : increasesLeftOut.stream().distinct().sorted().toList();
    }

    /** Coverage of a window whose increases are all kept. */
    public ScrapeCoverage(
            int expected,
            int succeeded,
            int failed,
            int replicas,
            List<String> errors,
            Map<String, Integer> succeededByReplica) {
        this(expected, succeeded, failed, replicas, errors, succeededByReplica, List.of());
    }

    /**
     * Successful scrapes as a fraction of the expected ones ({@code succeeded / (succeeded +
     * failed)} when nothing was expected explicitly), in {@code [0, 1]}.
     *
     * @return the coverage ratio, {@code 0} when there was nothing to scrape
     */
    public double ratio() {
        int denominator = expected > 0 ? expected : succeeded + failed;
        if (denominator == 0) {
            return 0.0;
        }
        return Math.min(1.0, (double) succeeded / denominator);
    }
}
