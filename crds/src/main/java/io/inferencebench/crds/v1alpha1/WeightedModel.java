package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.Objects;

/** One model (or LoRA adapter) of a workload's mix and how often a request asks for it. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class WeightedModel {

    @JsonPropertyDescription(
            "The model name sent in the request body: a served model or a LoRA adapter's name.")
    @Required
    @Size(min = 1, max = 256)
    private String name;

    @JsonPropertyDescription(
            "Relative weight: a request asks for this model with probability weight / the sum of"
                    + " the weights. Default 1.")
    private Double weight;

    @JsonPropertyDescription(
            "This model's own SLO (ttft, tpot, e2eLatency, minAttainment), judged over its"
                    + " requests in metrics.by_model; without it the model's requests are judged"
                    + " by spec.slo. The stage's own goodput stays judged by spec.slo.")
    private SloSpec slo;

    /** A model of the given weight. */
    public static WeightedModel of(String name, double weight) {
        WeightedModel m = new WeightedModel();
        m.setName(name);
        m.setWeight(weight);
        return m;
    }

    /** A mix as profiles name it: {@code base:3 sql-lora:1}. */
    public static String describe(java.util.List<WeightedModel> models) {
        StringBuilder sb = new StringBuilder();
        for (WeightedModel m : models) {
            double w = m.resolvedWeight();
            sb.append(sb.isEmpty() ? "" : " ")
                    .append(m.getName())
                    .append(':')
                    .append(w == Math.rint(w) ? Long.toString((long) w) : Double.toString(w));
        }
        return sb.toString();
    }

    /** The weight, 1 when not set. */
    @JsonIgnore
    public double resolvedWeight() {
        return weight == null ? 1.0 : weight;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public SloSpec getSlo() {
        return slo;
    }

    public void setSlo(SloSpec slo) {
        this.slo = slo;
    }

    public Double getWeight() {
        return weight;
    }

    public void setWeight(Double weight) {
        this.weight = weight;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WeightedModel that
                && Objects.equals(name, that.name)
                && Objects.equals(weight, that.weight)
                && Objects.equals(slo, that.slo);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, weight, slo);
    }
}
