package io.inferencebench.profile.search;

import io.inferencebench.profile.lpg.LoadVerdict;
import java.util.List;
import java.util.Locale;

/**
 * What one probe at one rate measured, and its judgement: the one probe judgement that {@code
 * runner search} and the operator's {@code spec.search} share ({@link #judgement}).
 *
 * @param requestRate the rate asked for, req/s
 * @param size how many times the search's probe size (requests or duration) this probe ran with:
 *     {@code 1}, or more when a shorter probe at this rate was too short to judge
 * @param achievedRate the rate the client dispatched at, req/s ({@code null} when unknown)
 * @param goodRequests requests that met every SLO
 * @param attemptedRequests requests that finished, successfully or not
 * @param failedRequests requests that failed
 * @param failureClasses the failed requests by class (e.g. {@code http_5xx: 10}), or {@code null}
 * @param load the stage's load verdict (the same rules as the operator's LoadDelivered)
 * @param profile name of the probe's profile file (or ConfigMap key), or {@code null}
 */
public record ProbeResult(
        double requestRate,
        int size,
        Double achievedRate,
        long goodRequests,
        long attemptedRequests,
        long failedRequests,
        String failureClasses,
        LoadVerdict load,
        String profile) {

    /** How a probe counts for its rate. */
    public enum Judgement {
        /** The client kept its schedule and the SLO attainment reached the minimum. */
        PASS,
        /**
         * The client kept its schedule and the SLO attainment fell short (failed requests count as
         * not good), or a max-concurrency cap held the schedule back because the server was slow.
         */
        FAIL,
        /** The client could not keep its schedule: the probe says nothing about the server. */
        UNDELIVERED,
        /** The probe was too short to judge whether the client kept its schedule. */
        INDETERMINATE,
        /**
         * The client kept its schedule, but the 95 % interval of the SLO attainment ({@link
         * AttainmentInterval}) straddles the minimum: more requests would decide.
         */
        UNDECIDED
    }

    /**
     * A probe whose load was delivered, for tests and simple probes.
     *
     * @param requestRate the rate asked for
     * @param achievedRate the rate achieved
     * @param goodRequests requests that met every SLO
     * @param attemptedRequests requests that finished
     * @param profile its profile
     * @return the probe
     */
    public static ProbeResult delivered(
            double requestRate,
            Double achievedRate,
            long goodRequests,
            long attemptedRequests,
            String profile) {
        return new ProbeResult(
                requestRate,
                1,
                achievedRate,
                goodRequests,
                attemptedRequests,
                0,
                null,
                new LoadVerdict(
                        LoadVerdict.Delivery.DELIVERED,
                        LoadVerdict.DELIVERED,
                        "delivered the requested load",
                        List.of()),
                profile);
    }

    /**
     * The same probe as run at {@code rate} with {@code size} (the search's own keys).
     *
     * @param rate the rate
     * @param size the size
     * @return the probe
     */
    public ProbeResult at(double rate, int size) {
        return new ProbeResult(
                rate,
                size,
                achievedRate,
                goodRequests,
                attemptedRequests,
                failedRequests,
                failureClasses,
                load,
                profile);
    }

    /**
     * Share of the attempted requests that met every SLO.
     *
     * @return the attainment, {@code 0} when nothing was attempted
     */
    public double sloAttainment() {
        return attemptedRequests == 0 ? 0.0 : (double) goodRequests / attemptedRequests;
    }

    /**
     * Whether the client kept its schedule (whatever the server answered).
     *
     * @return {@code true} unless the client was the limit or the probe was too short to judge
     */
    public boolean loadDelivered() {
        return load.clientDelivery() == LoadVerdict.Delivery.DELIVERED;
    }

    /**
     * Whether the user's max-concurrency cap held the schedule back because the server was slow.
     *
     * @return {@code true} when the verdict names {@value LoadVerdict#CONCURRENCY_LIMITED}
     */
    public boolean concurrencyLimited() {
        return load.reasons().contains(LoadVerdict.CONCURRENCY_LIMITED);
    }

    /**
     * The probe's own judgement.
     *
     * @param minAttainment the SLO attainment a rate must reach
     * @return pass, fail, undelivered, indeterminate (too short to judge the delivery) or undecided
     *     (the attainment's interval straddles the minimum)
     */
    public Judgement judgement(double minAttainment) {
        return switch (load.clientDelivery()) {
            case NOT_DELIVERED -> Judgement.UNDELIVERED;
            case INDETERMINATE -> Judgement.INDETERMINATE;
            case DELIVERED -> {
                if (concurrencyLimited()) {
                    yield Judgement.FAIL;
                }
                if (attainmentInterval().straddles(minAttainment)) {
                    yield Judgement.UNDECIDED;
                }
                yield sloAttainment() >= minAttainment ? Judgement.PASS : Judgement.FAIL;
            }
        };
    }

    /**
     * The 95 % interval of the SLO attainment.
     *
     * @return it, [0, 1] when nothing was attempted
     */
    public AttainmentInterval attainmentInterval() {
        return AttainmentInterval.of(goodRequests, attemptedRequests);
    }

    /**
     * What the probe measured, in words: its SLO attainment and its failures.
     *
     * @return e.g. {@code SLO attainment 0.0 % (0 of 10; 95 % interval 0.0–27.8 %); 10 of 10
     *     requests failed (http_5xx: 10)}
     */
    public String describe() {
        StringBuilder s =
                new StringBuilder(
                        String.format(
                                Locale.ROOT,
                                "SLO attainment %.1f %% (%d of %d; 95 %% interval %s)",
                                100 * sloAttainment(),
                                goodRequests,
                                attemptedRequests,
                                attainmentInterval().describe()));
        if (failedRequests > 0) {
            s.append(
                    String.format(
                            Locale.ROOT,
                            "; %d of %d requests failed%s",
                            failedRequests,
                            attemptedRequests,
                            failureClasses == null ? "" : " (" + failureClasses + ")"));
        }
        if (!load.delivered()) {
            s.append("; load: ").append(load.reason()).append(": ").append(load.message());
        }
        return s.toString();
    }
}
