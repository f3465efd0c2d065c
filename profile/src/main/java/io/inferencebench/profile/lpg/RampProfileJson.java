package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A ramped stage in its LPG profile: the ramp in {@code config.ramp_up} (LPG's {@code request_rate}
 * alone cannot say that the rate moved) and its windows in {@code metrics.ramp_up_windows}, beside
 * our other additive keys. A stage at a constant rate has neither, so its profile keeps its key
 * set.
 */
final class RampProfileJson {

    private RampProfileJson() {}

    /** Writes {@code ramp} into the profile's {@code metrics} and {@code config}. */
    static void write(RampProfile ramp, ObjectNode metrics, ObjectNode config) {
        ObjectNode rampUp = config.putObject("ramp_up");
        rampUp.put("strategy", ramp.strategy);
        rampUp.put("start_rate", ramp.startRate);
        rampUp.put("end_rate", ramp.endRate);
        rampUp.put("over", ramp.over);
        if (ramp.windowsOmitted != null) {
            rampUp.put("windows_omitted", ramp.windowsOmitted);
            return;
        }
        ArrayNode windows = metrics.putArray("ramp_up_windows");
        for (RampProfile.Window w : ramp.windows) {
            ObjectNode node = windows.addObject();
            node.put("start_s", w.startSeconds());
            node.put("end_s", w.endSeconds());
            if (w.rampRate() != null) {
                node.put("ramp_rate", w.rampRate());
            }
            node.put("requests_due", w.due());
            node.put("scheduled_rate", w.scheduledRate());
            node.put("requests_sent", w.sent());
            node.put("achieved_rate", w.achievedRate());
            node.put("completed", w.completed());
            node.put("failures", w.failed());
            putLatencies(node, w.ttftP50Ms(), w.ttftP99Ms(), w.e2elP50Ms(), w.e2elP99Ms());
        }
    }

    /**
     * A part of a stage's (a window's, a turn's, a model's) TTFT and end-to-end p50/p99, each only
     * where it was measured.
     */
    static void putLatencies(
            ObjectNode node, Double ttftP50, Double ttftP99, Double e2elP50, Double e2elP99) {
        putIfPresent(node, "ttft_ms_p50", ttftP50);
        putIfPresent(node, "ttft_ms_p99", ttftP99);
        putIfPresent(node, "e2el_ms_p50", e2elP50);
        putIfPresent(node, "e2el_ms_p99", e2elP99);
    }

    static void putIfPresent(ObjectNode node, String key, Double value) {
        if (value != null) {
            node.put(key, value);
        }
    }
}
