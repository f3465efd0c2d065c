package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Locale;

/** How the pause between a conversation's turns is drawn. */
public enum ThinkTimeDistribution {
    /** Every pause is the think time. */
    @JsonProperty("fixed")
    FIXED,
    /** Each pause is drawn from an exponential distribution whose mean is the think time. */
    @JsonProperty("exponential")
    EXPONENTIAL;

    /** The value as written in YAML and on the command line. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The distribution named {@code text}, or {@code null} when none is. */
    public static ThinkTimeDistribution byName(String text) {
        for (ThinkTimeDistribution d : values()) {
            if (d.wireName().equals(text.trim().toLowerCase(Locale.ROOT))) {
                return d;
            }
        }
        return null;
    }
}
