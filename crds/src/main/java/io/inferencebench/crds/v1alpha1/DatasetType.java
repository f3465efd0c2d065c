package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Where prompts come from. */
public enum DatasetType {
    /** Synthetic prompts whose token lengths follow {@code inputTokens}/{@code outputTokens}. */
    @JsonProperty("random")
    RANDOM,
    /** A ShareGPT JSON file (conversations; the first two turns are prompt and reference reply). */
    @JsonProperty("sharegpt")
    SHAREGPT,
    /** JSON Lines, one object per prompt. */
    @JsonProperty("jsonl")
    JSONL,
    /** Synthetic prompts in groups that share a prefix ({@link PrefixRepetitionSpec}). */
    @JsonProperty("prefix_repetition")
    PREFIX_REPETITION,
    /**
     * A request trace ({@link TraceSpec}): recorded arrival times and token counts, replayed on the
     * trace's own clock with prompts made to the recorded lengths.
     */
    @JsonProperty("trace")
    TRACE;

    /** Whether the prompts are made up rather than read from a file. */
    public boolean synthetic() {
        return this == RANDOM || this == PREFIX_REPETITION;
    }

    /**
     * Whether the prompts' tokens are made up to chosen lengths (so a tokenizer, or the server's,
     * makes them): synthetic prompts and a trace's, whose file gives only the lengths.
     */
    public boolean tokensMadeUp() {
        return synthetic() || this == TRACE;
    }

    /**
     * Whether a stage's prompts share no prefix, so that an empty prefix cache can find nothing in
     * them: random synthetic prompts without conversations (whose turns repeat their history); not
     * shared prefixes, traces (whose hashes say what repeats) or files (which may repeat a prompt).
     *
     * @param conversations whether the prompts are the turns of conversations
     */
    public boolean sharesNoPrefix(boolean conversations) {
        return this == RANDOM && !conversations;
    }

    /** The value as written in YAML. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
