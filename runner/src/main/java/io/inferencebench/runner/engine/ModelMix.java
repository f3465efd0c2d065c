package io.inferencebench.runner.engine;

import io.inferencebench.crds.v1alpha1.WeightedModel;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Several models (or LoRA adapters) behind one target: each request asks for one, drawn by weight.
 * The draw depends only on the seed and the request's key (its prompt, or its session), so a rerun
 * asks each prompt of the same models whichever event loop sends it.
 *
 * @param names the model names sent in the request body, distinct
 * @param weights their relative weights, each above 0
 * @param slos each model's own SLO, judged over its requests; an entry is {@code null} where the
 *     model has none (its requests are judged by the run's)
 */
public record ModelMix(List<String> names, List<Double> weights, List<Slo> slos) {

    /** A mix whose models have no SLO of their own. */
    public ModelMix(List<String> names, List<Double> weights) {
        this(names, weights, java.util.Collections.nCopies(names.size(), null));
    }

    public ModelMix {
        names = List.copyOf(names);
        weights = List.copyOf(weights);
        // List.copyOf refuses nulls, which mean "the run's SLO" here.
        slos = java.util.Collections.unmodifiableList(new java.util.ArrayList<>(slos));
        if (slos.size() != names.size()) {
            throw new IllegalArgumentException("a model mix needs one SLO entry per model");
        }
        if (names.isEmpty() || names.size() != weights.size()) {
            throw new IllegalArgumentException("a model mix needs one weight per model");
        }
        for (double w : weights) {
            if (!(w > 0) || Double.isInfinite(w)) {
                throw new IllegalArgumentException("every weight must be > 0, got " + w);
            }
        }
    }

    /** The index of the model a request of {@code key} asks for. */
    public int draw(long seed, long key) {
        double total = 0;
        for (double w : weights) {
            total += w;
        }
        double u = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + key).split().nextDouble();
        double at = u * total;
        for (int i = 0; i < weights.size(); i++) {
            at -= weights.get(i);
            if (at < 0) {
                return i;
            }
        }
        return weights.size() - 1;
    }

    /** The share of requests model {@code i} is asked for: its weight over the sum. */
    public double share(int i) {
        double total = 0;
        for (double w : weights) {
            total += w;
        }
        return weights.get(i) / total;
    }

    /** The mix as profiles name it: {@code base:3 sql-lora:1}. */
    public String describe() {
        List<WeightedModel> models = new java.util.ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            models.add(WeightedModel.of(names.get(i), weights.get(i)));
        }
        return WeightedModel.describe(models);
    }
}
