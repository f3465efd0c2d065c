package io.inferencebench.runner.pod;

import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShare;
import java.util.Map;

/**
 * The probes of a capacity search as the operator publishes them in the control ConfigMap: stage
 * n's start barrier with its rate (and size, when grown), or the number of stages the search ran
 * once it is over.
 */
final class SearchProbes {

    /**
     * Stage n of the search.
     *
     * @param startText the start barrier, as published
     * @param share the whole run's probe with this pod's share of it
     */
    record Published(String startText, StageShare share) {}

    /** The search ran fewer stages than the one awaited: the pod is done. */
    static final Published ENDED = new Published(null, null);

    private SearchProbes() {}

    /**
     * Waits until the operator publishes stage {@code stage} or ends the search.
     *
     * @return the probe, {@link #ENDED}, or {@code null} when the run was stopped
     * @throws PodFailure when what is published cannot be read
     */
    static Published await(ControlWatch control, RunnerWorkOrder order, int stage)
            throws InterruptedException {
        String key = RunnerWorkOrder.stageStartKey(stage);
        String rateKey = RunnerWorkOrder.stageRateKey(stage);
        Map<String, String> published =
                control.awaitAny(
                        d ->
                                (present(d, key) && present(d, rateKey))
                                        || present(d, RunnerWorkOrder.STAGES_KEY));
        if (published == null) {
            return null;
        }
        if (!(present(published, key) && present(published, rateKey))) {
            int ran = searchStages(published.get(RunnerWorkOrder.STAGES_KEY));
            if (ran < stage) {
                return ENDED;
            }
            throw new PodFailure(
                    "control "
                            + RunnerWorkOrder.STAGES_KEY
                            + "="
                            + ran
                            + " but "
                            + key
                            + " or "
                            + rateKey
                            + " is missing");
        }
        return new Published(
                published.get(key),
                PodWorkload.probeShare(
                        order,
                        stage,
                        rate(rateKey, published),
                        size(RunnerWorkOrder.stageSizeKey(stage), published)));
    }

    private static boolean present(Map<String, String> data, String key) {
        String value = data.get(key);
        return value != null && !value.isBlank();
    }

    /** The operator's {@code stages} key: how many stages the search ran. */
    private static int searchStages(String text) {
        try {
            return Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new PodFailure(
                    "control " + RunnerWorkOrder.STAGES_KEY + ": not a number of stages: " + text);
        }
    }

    private static double rate(String key, Map<String, String> data) {
        try {
            return Double.parseDouble(data.get(key).strip());
        } catch (NumberFormatException e) {
            throw new PodFailure("control " + key + ": not a request rate: " + data.get(key));
        }
    }

    /** A search probe's size (absent: 1, as published by an operator that never grows one). */
    private static int size(String key, Map<String, String> data) {
        String text = data.get(key);
        if (text == null) {
            return 1;
        }
        try {
            return Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new PodFailure("control " + key + ": not a whole number: " + text);
        }
    }
}
