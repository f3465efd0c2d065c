package io.inferencebench.profile.lpg;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.inferencebench.profile.stats.MetricRecorder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A stage of a model mix, per model: written into the profile as {@code metrics.by_model}, so that
 * the models (or LoRA adapters) behind one target are compared within one stage.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public final class ModelMixProfile {

    /** One entry per model of the mix, in the mix's order. */
    public List<Model> models = new ArrayList<>();

    /**
     * Each model's TTFT recorder (ms), in the mix's order: carried from a runner pod to the
     * operator so that several pods' models merge like the stage's own statistics. Not written into
     * the profile.
     */
    public List<MetricRecorder> ttftMs;

    /** Each model's end-to-end latency recorder (ms), as {@link #ttftMs}. */
    public List<MetricRecorder> e2elMs;

    /**
     * What the requests of one model measured.
     *
     * @param name the model name sent
     * @param share the share of requests its weight asks for
     * @param sent requests that asked for it (not counting those a cancel caught)
     * @param completed of them, succeeded
     * @param failed of them, failed
     * @param outputTokens output tokens of the successes
     * @param ttftP50Ms median TTFT of the successes, ms; {@code null} when none measured it
     * @param ttftP99Ms p99 TTFT, ms; {@code null} as above
     * @param e2elP50Ms median end-to-end latency of the successes, ms; {@code null} when none
     * @param e2elP99Ms p99 end-to-end latency, ms; {@code null} as above
     * @param slo the SLO its requests were judged by and how many met it, or {@code null} when
     *     neither the model nor the run has one
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Model(
            String name,
            double share,
            long sent,
            long completed,
            long failed,
            long outputTokens,
            Double ttftP50Ms,
            Double ttftP99Ms,
            Double e2elP50Ms,
            Double e2elP99Ms,
            ModelSlo slo) {

        /** Its requests that met the SLO over those that finished, or {@code null} without one. */
        public Double sloAttainment() {
            long finished = completed + failed;
            return slo == null || finished == 0 ? null : (double) slo.good() / finished;
        }
    }

    /**
     * The SLO a model's requests were judged by (its own, else the run's), thresholds in ms.
     *
     * @param good its successes that met every threshold set
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ModelSlo(
            Double ttftMs, Double tpotMs, Double e2elMs, double minAttainment, long good) {}

    /**
     * One stage's models as several runner pods sent them: counts add up, percentiles come from the
     * merged recorders (histogram percentiles, as the stage's own).
     *
     * @return the merged models, or {@code null} when no part had a mix
     * @throws IllegalArgumentException when the parts' mixes differ or one came without recorders
     */
    public static ModelMixProfile merge(List<ModelMixProfile> parts) {
        if (parts.stream().allMatch(Objects::isNull)) {
            return null;
        }
        ModelMixProfile first = parts.get(0);
        for (ModelMixProfile p : parts) {
            if (p == null
                    || first == null
                    || !p.models.stream()
                            .map(Model::name)
                            .toList()
                            .equals(first.models.stream().map(Model::name).toList())) {
                throw new IllegalArgumentException(
                        "runners of one stage sent different model mixes (or only some a mix)");
            }
        }
        if (parts.size() == 1) {
            return first;
        }
        ModelMixProfile m = new ModelMixProfile();
        m.ttftMs = new ArrayList<>();
        m.e2elMs = new ArrayList<>();
        for (int i = 0; i < first.models.size(); i++) {
            long sent = 0;
            long completed = 0;
            long failed = 0;
            long outputTokens = 0;
            long good = 0;
            MetricRecorder ttft = null;
            MetricRecorder e2el = null;
            for (ModelMixProfile p : parts) {
                if (p.ttftMs == null || p.e2elMs == null || p.ttftMs.size() != p.models.size()) {
                    throw new IllegalArgumentException(
                            "a runner pod reported its models without their recorders");
                }
                Model x = p.models.get(i);
                sent += x.sent();
                completed += x.completed();
                failed += x.failed();
                outputTokens += x.outputTokens();
                if (x.slo() != null) {
                    good += x.slo().good();
                }
                ttft = PartRecorders.mergeInto(ttft, p.ttftMs.get(i));
                e2el = PartRecorders.mergeInto(e2el, p.e2elMs.get(i));
            }
            m.ttftMs.add(ttft);
            m.e2elMs.add(e2el);
            Model at = first.models.get(i);
            m.models.add(
                    new Model(
                            at.name(),
                            at.share(),
                            sent,
                            completed,
                            failed,
                            outputTokens,
                            PartRecorders.percentile(ttft, 50),
                            PartRecorders.percentile(ttft, 99),
                            PartRecorders.percentile(e2el, 50),
                            PartRecorders.percentile(e2el, 99),
                            at.slo() == null
                                    ? null
                                    : new ModelSlo(
                                            at.slo().ttftMs(),
                                            at.slo().tpotMs(),
                                            at.slo().e2elMs(),
                                            at.slo().minAttainment(),
                                            good)));
        }
        return m;
    }
}
