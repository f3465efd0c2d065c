package io.inferencebench.crds.v1alpha1;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as written in BenchmarkRun specs: one or more {@code <number><unit>} parts with units
 * {@code ms}, {@code s}, {@code m}, {@code h}, e.g. {@code 500ms}, {@code 60s}, {@code 1m30s},
 * {@code 1.5h}. This is the subset of Go's {@code time.ParseDuration} that Kubernetes users know,
 * without negative values or micro/nanosecond units.
 */
public final class Durations {

    /** The OpenAPI pattern every duration field carries; keep in sync with {@link #parse}. */
    public static final String PATTERN = "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$";

    /** Longest accepted duration text; keeps CEL cost estimates small. */
    public static final int MAX_LENGTH = 32;

    private static final Pattern WHOLE = Pattern.compile(PATTERN);
    private static final Pattern PART = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ms|s|m|h)");

    private Durations() {}

    /**
     * Parses a duration.
     *
     * @param text the duration text, e.g. {@code 5m}
     * @return the duration
     * @throws IllegalArgumentException if the text is not a valid duration; the message says what
     *     is allowed
     */
    public static Duration parse(String text) {
        Optional<String> problem = validate("duration", text);
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get());
        }
        BigDecimal nanos = BigDecimal.ZERO;
        Matcher part = PART.matcher(text);
        while (part.find()) {
            BigDecimal value = new BigDecimal(part.group(1));
            long unitNanos =
                    switch (part.group(2)) {
                        case "ms" -> 1_000_000L;
                        case "s" -> 1_000_000_000L;
                        case "m" -> 60_000_000_000L;
                        default -> 3_600_000_000_000L;
                    };
            nanos = nanos.add(value.multiply(BigDecimal.valueOf(unitNanos)));
        }
        return Duration.ofNanos(nanos.longValueExact());
    }

    /**
     * Checks a duration without throwing.
     *
     * @param field the field path to name in the message, e.g. {@code spec.load.cooldown}
     * @param text the value; {@code null} is reported as missing
     * @return a message naming the field and the allowed format, or empty when valid
     */
    public static Optional<String> validate(String field, String text) {
        if (text == null || text.isEmpty()) {
            return Optional.of(field + " must be a duration such as 500ms, 30s, 5m or 1h30m");
        }
        if (text.length() > MAX_LENGTH || !WHOLE.matcher(text).matches()) {
            return Optional.of(
                    field
                            + ": invalid duration '"
                            + text
                            + "'; use a number with unit ms, s, m or h, e.g. 500ms, 30s, 5m or"
                            + " 1h30m");
        }
        try {
            BigDecimal hours = BigDecimal.ZERO;
            Matcher part = PART.matcher(text);
            while (part.find()) {
                hours = hours.add(new BigDecimal(part.group(1)));
            }
            // Anything beyond ~290 years does not fit in a long of nanoseconds.
            if (hours.compareTo(BigDecimal.valueOf(2_000_000L)) > 0) {
                return Optional.of(field + ": duration '" + text + "' is too large");
            }
        } catch (NumberFormatException e) {
            return Optional.of(field + ": invalid duration '" + text + "'");
        }
        return Optional.empty();
    }

    /**
     * Formats a duration in the shortest form this class parses back, e.g. {@code 1m30s}.
     *
     * @param duration a non-negative duration
     * @return the text
     */
    public static String format(Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("negative duration: " + duration);
        }
        if (duration.isZero()) {
            return "0s";
        }
        StringBuilder text = new StringBuilder();
        long hours = duration.toHours();
        int minutes = duration.toMinutesPart();
        int seconds = duration.toSecondsPart();
        int millis = duration.toMillisPart();
        if (hours > 0) {
            text.append(hours).append('h');
        }
        if (minutes > 0) {
            text.append(minutes).append('m');
        }
        if (seconds > 0) {
            text.append(seconds).append('s');
        }
        if (millis > 0 || text.isEmpty()) {
            long subMillis = duration.toNanosPart() % 1_000_000;
            if (subMillis == 0) {
                text.append(millis).append("ms");
            } else {
                text.append(
                                BigDecimal.valueOf(duration.toNanosPart())
                                        .movePointLeft(6)
                                        .stripTrailingZeros()
                                        .toPlainString())
                        .append("ms");
            }
        }
        return text.toString();
    }
}
