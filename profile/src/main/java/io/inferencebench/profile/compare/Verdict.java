package io.inferencebench.profile.compare;

/** The outcome of a comparison. */
public enum Verdict {
    /** At least one metric is significantly worse in the candidate. */
    REGRESSION("regression"),
    /** Nothing is significantly worse and at least one metric is significantly better. */
    IMPROVEMENT("improvement"),
    /** No metric changed significantly, and the noise could not hide a change of a threshold. */
    NO_SIGNIFICANT_CHANGE("no significant change"),
    /**
     * No metric changed significantly, but for some the noise between repeats is too large to rule
     * out a change of its threshold: more repeats (or longer stages) are needed to tell.
     */
    INCONCLUSIVE("inconclusive");

    private final String text;

    Verdict(String text) {
        this.text = text;
    }

    /**
     * How the verdict is written in output and JSON.
     *
     * @return {@code regression}, {@code improvement} or {@code no significant change}
     */
    public String text() {
        return text;
    }

    @Override
    public String toString() {
        return text;
    }
}
