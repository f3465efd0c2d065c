package io.inferencebench.profile.output;

import java.util.Arrays;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/** The files written per stage: the LPG profile, and optionally a Benchmark Report v0.2 beside. */
public enum OutputFormat {

    /** The LPG latency profile (always written: compare, report and search read it). */
    LPG("lpg"),

    /**
     * The Benchmark Report v0.2 (llm-d-benchmark's interchange format, which inference-perf writes
     * per stage), as YAML beside the profile.
     */
    BR_0_2("br0.2");

    private final String wireName;

    OutputFormat(String wireName) {
        this.wireName = wireName;
    }

    /**
     * The name in flags and specs ({@code lpg}, {@code br0.2}).
     *
     * @return the name
     */
    public String wireName() {
        return wireName;
    }

    /** The names accepted, for messages: {@code lpg, br0.2}. */
    public static String allowed() {
        return Arrays.stream(values())
                .map(OutputFormat::wireName)
                .collect(Collectors.joining(", "));
    }

    /**
     * Parses a list of format names (case-insensitive, each may itself be a comma list).
     *
     * @param names the names, e.g. {@code [lpg, br0.2]} or {@code [lpg,br0.2]}
     * @return the formats
     * @throws IllegalArgumentException naming the unknown format and the allowed ones, or saying
     *     that {@code lpg} is missing
     */
    public static Set<OutputFormat> parse(Collection<String> names) {
        Set<OutputFormat> formats = EnumSet.noneOf(OutputFormat.class);
        if (names != null) {
            for (String list : names) {
                for (String name : (list == null ? "" : list).split(",", -1)) {
                    formats.add(parseOne(name));
                }
            }
        }
        if (!formats.contains(LPG)) {
            throw new IllegalArgumentException(
                    "must include lpg (compare, report and search read the LPG profiles); for a"
                            + " Benchmark Report beside them give lpg,br0.2");
        }
        return formats;
    }

    private static OutputFormat parseOne(String name) {
        String n = name.strip().toLowerCase(Locale.ROOT);
        for (OutputFormat f : values()) {
            if (f.wireName.equals(n)) {
                return f;
            }
        }
        throw new IllegalArgumentException(
                "unknown format '" + name + "'; allowed: " + allowed() + " (comma-separated)");
    }
}
