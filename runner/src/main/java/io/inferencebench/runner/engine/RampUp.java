package io.inferencebench.runner.engine;

import java.util.Locale;

/**
 * A stage's request rate ramping from {@code startRate} to {@code endRate} (vLLM's {@code
 * --ramp-up-strategy}). Over a stage of length T the rate at time t is linear, {@code r(t) = start
 * + (end - start) t / T}, or exponential, {@code r(t) = start (end / start)^(t / T)}; past T it
 * stays at {@code endRate}. Without a length (a stage bounded by its number of prompts only) the
 * ramp runs over the requests instead, as vLLM's does: request k of n is sent at the rate {@code
 * r(k / (n - 1))}.
 *
 * @param strategy how the rate moves
 * @param startRate rate at the stage's start, req/s ({@code >= 0} linear, {@code > 0} exponential)
 * @param endRate rate at the stage's end, req/s ({@code > 0}, at least {@code startRate})
 */
public record RampUp(Strategy strategy, double startRate, double endRate) {

    /** How the rate moves from the start to the end rate. */
    public enum Strategy {
        LINEAR,
        EXPONENTIAL;

        /** The lower-case name the flags and the profile use. */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        /**
         * @throws IllegalArgumentException naming the accepted values
         */
        public static Strategy parse(String text) {
            try {
                return valueOf(text.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "must be linear or exponential, got '" + text + "'");
            }
        }
    }

    public RampUp {
        if (strategy == null) {
            throw new IllegalArgumentException("ramp-up strategy missing");
        }
        if (!Double.isFinite(endRate) || !(endRate > 0)) {
            throw new IllegalArgumentException("ramp-up end rate must be > 0, got " + endRate);
        }
        if (strategy == Strategy.EXPONENTIAL && !(startRate > 0)) {
            throw new IllegalArgumentException(
                    "an exponential ramp-up needs a start rate > 0, got " + startRate);
        }
        if (!(startRate >= 0)) {
            throw new IllegalArgumentException("ramp-up start rate must be >= 0, got " + startRate);
        }
        if (startRate > endRate) {
            throw new IllegalArgumentException(
                    "ramp-up start rate "
                            + startRate
                            + " is above its end rate "
                            + endRate
                            + "; a ramp rises");
        }
    }

    /** The rate at {@code fraction} (0 to 1, clamped) of the ramp, req/s. */
    public double rateAt(double fraction) {
        double f = Math.min(1, Math.max(0, fraction));
        return switch (strategy) {
            case LINEAR -> startRate + (endRate - startRate) * f;
            case EXPONENTIAL -> startRate * Math.pow(endRate / startRate, f);
        };
    }

    /**
     * Requests due from 0 to {@code t} seconds of a ramp over {@code span} seconds: the integral of
     * the rate, {@code Λ(t)}.
     */
    public double integral(double t, double span) {
        if (t <= 0) {
            return 0;
        }
        double within = Math.min(t, span);
        double beyond = t - within;
        double ramped =
                switch (strategy) {
                    case LINEAR ->
                            startRate * within
                                    + (endRate - startRate) * within * within / (2 * span);
                    case EXPONENTIAL -> {
                        double lnRatio = Math.log(endRate / startRate);
                        yield lnRatio == 0
                                ? startRate * within
                                : startRate * span / lnRatio * Math.expm1(lnRatio * within / span);
                    }
                };
        return ramped + endRate * beyond;
    }

    /**
     * The time, seconds from the start of a ramp over {@code span} seconds, at which {@link
     * #integral} reaches {@code due}: where arrival {@code due} of a unit-rate process lands once
     * time is rescaled by the ramp.
     */
    public double timeAt(double due, double span) {
        if (due <= 0) {
            return 0;
        }
        double whole = integral(span, span);
        if (due >= whole) {
            return span + (due - whole) / endRate;
        }
        return switch (strategy) {
            // Root of a t + (b - a) t^2 / (2T) = u, written without cancellation when b ~ a.
            case LINEAR ->
                    2
                            * due
                            / (startRate
                                    + Math.sqrt(
                                            startRate * startRate
                                                    + 2 * (endRate - startRate) * due / span));
            case EXPONENTIAL -> {
                double lnRatio = Math.log(endRate / startRate);
                yield lnRatio == 0
                        ? due / startRate
                        : span / lnRatio * Math.log1p(due * lnRatio / (startRate * span));
            }
        };
    }

    /** The rate of request {@code index} of {@code count} in a ramp over the requests, req/s. */
    public double rateOfRequest(long index, long count) {
        return rateAt(count <= 1 ? 0 : (double) index / (count - 1));
    }
}
