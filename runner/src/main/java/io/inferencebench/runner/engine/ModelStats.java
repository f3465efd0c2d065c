package io.inferencebench.runner.engine;

import io.inferencebench.profile.lpg.ModelMixProfile;
import io.inferencebench.profile.stats.MetricRecorder;
import java.util.ArrayList;

/**
 * Records a stage of a model mix per model: the requests that asked for each, how they ended, their
 * output tokens, and the TTFT and end-to-end latency of those that succeeded, from the same
 * requests the stage's own statistics record. Called under the {@link StageRecorder}'s lock.
 */
final class ModelStats {

    private final ModelMix mix;
    private final Slo runSlo;
    private final long[] good;
    private final long[] sent;
    private final long[] completed;
    private final long[] failed;
    private final long[] outputTokens;
    private final MetricRecorder[] ttftMs;
    private final MetricRecorder[] e2elMs;

    /**
     * @param runSlo the run's SLO, which judges the requests of a model without its own
     */
    ModelStats(ModelMix mix, Slo runSlo, int sampleCap) {
        this.mix = mix;
        this.runSlo = runSlo;
        int n = mix.names().size();
        this.good = new long[n];
        this.sent = new long[n];
        this.completed = new long[n];
        this.failed = new long[n];
        this.outputTokens = new long[n];
        this.ttftMs = new MetricRecorder[n];
        this.e2elMs = new MetricRecorder[n];
        for (int i = 0; i < n; i++) {
            ttftMs[i] = new MetricRecorder(sampleCap);
            e2elMs[i] = new MetricRecorder(sampleCap);
        }
    }

    /** Records a finished request (not one a cancel caught). */
    void record(RequestExecution e) {
        int m = e.model;
        if (m < 0 || m >= sent.length) {
            return;
        }
        sent[m]++;
        if (!e.succeeded()) {
            failed[m]++;
            return;
        }
        completed[m]++;
        outputTokens[m] += e.outputTokens();
        double latencyMs = e.latencyNanos() / 1e6;
        e2elMs[m].record(latencyMs);
        double ttft = Double.NaN;
        if (e.streamed()) {
            ttft = e.ttftNanos() / 1e6;
            ttftMs[m].record(ttft);
        }
        Slo slo = sloOf(m);
        if (slo.configured()
                && slo.met(ttft, StageRecorder.tpotMs(e, latencyMs, ttft), latencyMs)) {
            good[m]++;
        }
    }

    /** The SLO model {@code m}'s requests are judged by: its own, else the run's. */
    private Slo sloOf(int m) {
        Slo own = mix.slos().get(m);
        return own != null ? own : runSlo;
    }

    /** The models as the profile carries them. */
    ModelMixProfile profile() {
        ModelMixProfile p = new ModelMixProfile();
        p.ttftMs = new ArrayList<>();
        p.e2elMs = new ArrayList<>();
        for (int i = 0; i < sent.length; i++) {
            p.models.add(
                    new ModelMixProfile.Model(
                            mix.names().get(i),
                            mix.share(i),
                            sent[i],
                            completed[i],
                            failed[i],
                            outputTokens[i],
                            RampWindows.percentile(ttftMs[i], 50),
                            RampWindows.percentile(ttftMs[i], 99),
                            RampWindows.percentile(e2elMs[i], 50),
                            RampWindows.percentile(e2elMs[i], 99),
                            sloOf(i).configured()
                                    ? new ModelMixProfile.ModelSlo(
                                            sloOf(i).ttftMs(),
                                            sloOf(i).tpotMs(),
                                            sloOf(i).e2elMs(),
                                            sloOf(i).minAttainment(),
                                            good[i])
                                    : null));
            p.ttftMs.add(ttftMs[i]);
            p.e2elMs.add(e2elMs[i]);
        }
        return p;
    }
}
