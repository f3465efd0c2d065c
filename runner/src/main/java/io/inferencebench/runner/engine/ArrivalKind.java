package io.inferencebench.runner.engine;

import java.util.Locale;

/** How open-loop arrival times are spaced. */
public enum ArrivalKind {
    /** Exponential gaps (a Poisson process); gamma with burstiness 1. */
    POISSON,
    /** Gamma-distributed gaps: shape = burstiness, scale = 1 / (rate * burstiness) (vLLM). */
    GAMMA,
    /** Equal gaps of 1 / rate. */
    CONSTANT;

    public static ArrivalKind parse(String text) {
        try {
            return valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "arrival must be one of poisson, gamma, constant; got '" + text + "'");
        }
    }
}
