package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** Short, human-readable figures shown by kubectl get; live while running, final afterwards. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RunSummary {

    @JsonPropertyDescription(
            "Achieved throughput, completed requests/s (last stage, or the running one).")
    private String rps;

    @JsonPropertyDescription("Median time to first token, e.g. 112ms.")
    private String ttftP50;

    @JsonPropertyDescription("99th percentile end-to-end latency, e.g. 1.84s.")
    private String latencyP99;

    @JsonPropertyDescription(
            "SLO verdict: Met, Missed, or absent when no SLO is set or not yet known.")
    private String slo;

    @JsonPropertyDescription(
            "Each replica's share of the requests it served in the last assembled stage, busiest"
                    + " first, e.g. 34/33/33 %; absent with fewer than two replicas scraped.")
    private String replicaShares;

    public String getReplicaShares() {
        return replicaShares;
    }

    public void setReplicaShares(String replicaShares) {
        this.replicaShares = replicaShares;
    }

    public String getRps() {
        return rps;
    }

    public void setRps(String rps) {
        this.rps = rps;
    }

    public String getTtftP50() {
        return ttftP50;
    }

    public void setTtftP50(String ttftP50) {
        this.ttftP50 = ttftP50;
    }

    public String getLatencyP99() {
        return latencyP99;
    }

    public void setLatencyP99(String latencyP99) {
        this.latencyP99 = latencyP99;
    }

    public String getSlo() {
        return slo;
    }

    public void setSlo(String slo) {
        this.slo = slo;
    }
}
