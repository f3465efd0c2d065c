package io.inferencebench.profile.search;

/**
 * What one probe at one rate measured.
 *
 * @param requestRate the rate asked for, req/s
 * @param achievedRate the rate the client dispatched at, req/s ({@code null} when unknown)
 * @param goodRequests requests that met every SLO
 * @param attemptedRequests requests that finished, successfully or not
 * @param loadDelivered whether the client delivered the requested load (rate reached, schedule
 *     kept); a probe that did not says nothing about the server
 * @param profile name of the probe's profile file, or {@code null}
 */
public record ProbeResult(
        double requestRate,
        Double achievedRate,
        long goodRequests,
        long attemptedRequests,
        boolean loadDelivered,
        String profile) {

    /**
     * Share of the attempted requests that met every SLO.
     *
     * @return the attainment, {@code 0} when nothing was attempted
     */
    public double sloAttainment() {
        return attemptedRequests == 0 ? 0.0 : (double) goodRequests / attemptedRequests;
    }
}
