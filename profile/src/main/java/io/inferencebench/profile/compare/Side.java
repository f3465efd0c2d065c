package io.inferencebench.profile.compare;

/** Which run of a comparison has the worse value of a metric. */
public enum Side {
    /** The earlier (reference) run. */
    BASELINE,
    /** The run being judged. */
    CANDIDATE,
    /** Both values are equal, or one is missing. */
    NEITHER;

    /**
     * The JSON spelling.
     *
     * @return {@code baseline}, {@code candidate} or {@code neither}
     */
    public String text() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
