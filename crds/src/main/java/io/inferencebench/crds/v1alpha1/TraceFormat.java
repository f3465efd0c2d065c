package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Locale;

/** The layout of a request trace file. */
public enum TraceFormat {
    /**
     * Mooncake's JSON Lines: {@code timestamp} (ms), {@code input_length}, {@code output_length},
     * {@code hash_ids} (the prompt's prefix blocks).
     */
    @JsonProperty("mooncake")
    MOONCAKE,
    /**
     * Azure LLM inference traces, CSV: {@code TIMESTAMP} (a date and time), {@code ContextTokens},
     * {@code GeneratedTokens}.
     */
    @JsonProperty("azure")
    AZURE,
    /**
     * BurstGPT, CSV: {@code Timestamp} (seconds), {@code Model}, {@code Request tokens}, {@code
     * Response tokens}, {@code Total tokens}, {@code Log Type}.
     */
    @JsonProperty("burstgpt")
    BURSTGPT;

    /** The value as written in YAML and on the command line. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The format named {@code text}, or {@code null} when none is. */
    public static TraceFormat byName(String text) {
        for (TraceFormat f : values()) {
            if (f.wireName().equals(text.trim().toLowerCase(Locale.ROOT))) {
                return f;
            }
        }
        return null;
    }
}
