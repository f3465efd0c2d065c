package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;

/**
 * The result of {@code spec.search}, the same fields as the CLI's {@code capacity.json}: filled
 * probe by probe while the search runs, with the answer when it ends.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CapacityStatus {

    @JsonPropertyDescription(
            "The capacity: the highest request rate that met spec.slo (passingRate), but never above"
                    + " the rate its probes achieved; unset while searching or when no rate passed.")
    private Double maxRequestRate;

    @JsonPropertyDescription("Highest rate that met the SLO.")
    private Double passingRate;

    @JsonPropertyDescription("Lowest rate above passingRate that missed it; unset if none did.")
    private Double failingRate;

    @JsonPropertyDescription(
            "How the search ended: Found, MaxRatePassed, MinRateFailed, LoadNotDelivered,"
                    + " Indeterminate (a probe too short to judge even when grown) or ProbeLimit;"
                    + " unset while searching.")
    private String outcome;

    @JsonPropertyDescription("One sentence on the result.")
    private String message;

    @JsonPropertyDescription(
            "How sure the bracket's edges are at 95 % confidence: each edge's pooled SLO"
                    + " attainment and its interval (Wilson) against spec.slo.minAttainment, or the"
                    + " edge the probes left undecided.")
    private String confidence;

    @JsonPropertyDescription(
            "True when an edge's attainment interval still straddled spec.slo.minAttainment"
                    + " after up to 3 more probes at its rate (while they could decide it): that"
                    + " edge was judged on its measured attainment, and larger probes would decide"
                    + " it.")
    private Boolean undecided;

    @JsonPropertyDescription("spec.slo the probes were judged by.")
    private SloSpec slo;

    @JsonPropertyDescription("spec.search.precision the search ran with.")
    private Double precision;

    @JsonPropertyDescription("The capacity for display, e.g. 12.3 req/s.")
    private String display;

    @JsonPropertyDescription("Every probe in the order run (probe n is stage n).")
    private List<Probe> probes = new ArrayList<>();

    public String getConfidence() {
        return confidence;
    }

    public void setConfidence(String confidence) {
        this.confidence = confidence;
    }

    public Boolean getUndecided() {
        return undecided;
    }

    public void setUndecided(Boolean undecided) {
        this.undecided = undecided;
    }

    /** One probe: one stage at one rate. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Probe {

        @JsonPropertyDescription("The rate asked for, requests/s.")
        private Double requestRate;

        @JsonPropertyDescription(
                "How many times spec.load.numPrompts (or duration) the probe ran with: 1, or 4 and"
                        + " 16 when a smaller probe at this rate was too short to judge.")
        private Integer size;

        @JsonPropertyDescription("The rate the runners dispatched at, requests/s.")
        private Double achievedRate;

        @JsonPropertyDescription("Share of the attempted requests that met every objective.")
        private Double sloAttainment;

        @JsonPropertyDescription("Lower bound of sloAttainment's 95 % interval (Wilson score).")
        private Double sloAttainmentLow;

        @JsonPropertyDescription("Upper bound of sloAttainment's 95 % interval (Wilson score).")
        private Double sloAttainmentHigh;

        @JsonPropertyDescription("Requests that met every objective.")
        private Long goodRequests;

        @JsonPropertyDescription("Requests that finished, successfully or not.")
        private Long attemptedRequests;

        @JsonPropertyDescription("Requests that failed (they count as not meeting the SLO).")
        private Long failedRequests;

        @JsonPropertyDescription(
                "The probe's judgement: Pass, Fail, LoadNotDelivered (the runners could not keep"
                        + " the schedule: neither pass nor fail) or Indeterminate (too short to"
                        + " judge the delivery, and the search grows it; or the attainment's 95 %"
                        + " interval straddles the minimum, and the search probes the rate again).")
        private String verdict;

        @JsonPropertyDescription(
                "This probe's own verdict; unset when its load was not delivered (then it is"
                        + " neither a pass nor a fail).")
        private Boolean passed;

        @JsonPropertyDescription(
                "Whether the runners kept the schedule they drew (what the server answered aside).")
        private Boolean loadDelivered;

        @JsonPropertyDescription(
                "The stage's loadDeliveredReason (Delivered, TooManyFailures, RunnerSaturated, ...).")
        private String loadDeliveredReason;

        @JsonPropertyDescription("Key of the probe's profile in the output ConfigMap.")
        private String profile;

        public Integer getSize() {
            return size;
        }

        public void setSize(Integer size) {
            this.size = size;
        }

        public Long getFailedRequests() {
            return failedRequests;
        }

        public void setFailedRequests(Long failedRequests) {
            this.failedRequests = failedRequests;
        }

        public Double getSloAttainmentLow() {
            return sloAttainmentLow;
        }

        public void setSloAttainmentLow(Double sloAttainmentLow) {
            this.sloAttainmentLow = sloAttainmentLow;
        }

        public Double getSloAttainmentHigh() {
            return sloAttainmentHigh;
        }

        public void setSloAttainmentHigh(Double sloAttainmentHigh) {
            this.sloAttainmentHigh = sloAttainmentHigh;
        }

        public String getVerdict() {
            return verdict;
        }

        public void setVerdict(String verdict) {
            this.verdict = verdict;
        }

        public String getLoadDeliveredReason() {
            return loadDeliveredReason;
        }

        public void setLoadDeliveredReason(String loadDeliveredReason) {
            this.loadDeliveredReason = loadDeliveredReason;
        }

        public Double getRequestRate() {
            return requestRate;
        }

        public void setRequestRate(Double requestRate) {
            this.requestRate = requestRate;
        }

        public Double getAchievedRate() {
            return achievedRate;
        }

        public void setAchievedRate(Double achievedRate) {
            this.achievedRate = achievedRate;
        }

        public Double getSloAttainment() {
            return sloAttainment;
        }

        public void setSloAttainment(Double sloAttainment) {
            this.sloAttainment = sloAttainment;
        }

        public Long getGoodRequests() {
            return goodRequests;
        }

        public void setGoodRequests(Long goodRequests) {
            this.goodRequests = goodRequests;
        }

        public Long getAttemptedRequests() {
            return attemptedRequests;
        }

        public void setAttemptedRequests(Long attemptedRequests) {
            this.attemptedRequests = attemptedRequests;
        }

        public Boolean getPassed() {
            return passed;
        }

        public void setPassed(Boolean passed) {
            this.passed = passed;
        }

        public Boolean getLoadDelivered() {
            return loadDelivered;
        }

        public void setLoadDelivered(Boolean loadDelivered) {
            this.loadDelivered = loadDelivered;
        }

        public String getProfile() {
            return profile;
        }

        public void setProfile(String profile) {
            this.profile = profile;
        }
    }

    public Double getMaxRequestRate() {
        return maxRequestRate;
    }

    public void setMaxRequestRate(Double maxRequestRate) {
        this.maxRequestRate = maxRequestRate;
    }

    public Double getPassingRate() {
        return passingRate;
    }

    public void setPassingRate(Double passingRate) {
        this.passingRate = passingRate;
    }

    public Double getFailingRate() {
        return failingRate;
    }

    public void setFailingRate(Double failingRate) {
        this.failingRate = failingRate;
    }

    public String getOutcome() {
        return outcome;
    }

    public void setOutcome(String outcome) {
        this.outcome = outcome;
    }

    public String getMessage() {
        return message;
    }

    public void setMessage(String message) {
        this.message = message;
    }

    public SloSpec getSlo() {
        return slo;
    }

    public void setSlo(SloSpec slo) {
        this.slo = slo;
    }

    public Double getPrecision() {
        return precision;
    }

    public void setPrecision(Double precision) {
        this.precision = precision;
    }

    public String getDisplay() {
        return display;
    }

    public void setDisplay(String display) {
        this.display = display;
    }

    public List<Probe> getProbes() {
        return probes;
    }

    public void setProbes(List<Probe> probes) {
        this.probes = probes;
    }
}
