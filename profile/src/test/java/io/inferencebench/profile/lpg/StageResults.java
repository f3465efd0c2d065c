package io.inferencebench.profile.lpg;

/** Builds stage results the way a runner does, from per-request measurements. */
final class StageResults {

    private StageResults() {}

    /** Records one successful request: latency and TTFT in ms, token counts, ITL gaps in ms. */
    static void success(
            StageResult s, double latencyMs, double ttftMs, long in, long out, double... itlMs) {
        s.sent++;
        s.completed++;
        s.latencyMs.record(latencyMs);
        s.ttftMs.record(ttftMs);
        for (double gap : itlMs) {
            s.itlMs.record(gap);
        }
        if (out > 1) {
            s.tpotMs.record((latencyMs - ttftMs) / (out - 1));
        }
        s.perTokenLatencySec.record(latencyMs / 1000.0 / (in + out));
        s.perOutputTokenLatencyMs.record(latencyMs / out);
        s.inputLen.record(in);
        s.outputLen.record(out);
        s.totalInputTokens += in;
        s.totalOutputTokens += out;
        s.scheduleLagMs.record(0.25);
        s.slotWaitMs.record(0.0);
    }
}
