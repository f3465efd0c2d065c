package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import java.util.Map;

/** The runner pods that generate load. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
        value = "!has(self.startTimeout) || self.startTimeout.matches('[1-9]')",
        message = "startTimeout must be greater than zero",
        fieldPath = ".startTimeout")
public class RunnerSpec {

    /** Most runner pods per run. */
    public static final int MAX_PARALLELISM = 1000;

    /** ServiceAccount runner pods use unless {@code serviceAccountName} is set. */
    public static final String DEFAULT_SERVICE_ACCOUNT = "inferencebench-runner";

    @JsonPropertyDescription("Runner container image; default: the operator's configured image.")
    @Size(min = 1, max = 512)
    private String image;

    @JsonPropertyDescription(
            "Image pull policy of the runner container: Always, IfNotPresent or Never.")
    @Pattern("^(Always|IfNotPresent|Never)$")
    private String imagePullPolicy;

    @JsonPropertyDescription(
            "Number of runner pods (an Indexed Job with this parallelism and completions). Each"
                    + " pod sends an equal share of every stage's rate, concurrency and prompts.")
    @Default("1")
    @Min(1)
    @Max(MAX_PARALLELISM)
    private Integer parallelism = 1;

    @JsonPropertyDescription("Resources of the runner container.")
    private ResourceRequirements resources;

    @JsonPropertyDescription("Node selector for runner pods.")
    @Size(max = 64)
    private Map<String, String> nodeSelector;

    @JsonPropertyDescription("Tolerations of runner pods.")
    @Size(max = 64)
    private List<Toleration> tolerations;

    @JsonPropertyDescription("Affinity of runner pods, added to the spread rule when spread is on.")
    private Affinity affinity;

    @JsonPropertyDescription(
            "Spread runner pods across nodes (a preferred pod anti-affinity on the node host"
                    + " name) so one node's network does not limit the load.")
    @Default("true")
    private Boolean spread = Boolean.TRUE;

    @JsonPropertyDescription(
            "ServiceAccount of runner pods; it needs the permissions of the"
                    + " inferencebench-runner Role (read the work order and control ConfigMaps,"
                    + " write the part ConfigMaps).")
    @Default(DEFAULT_SERVICE_ACCOUNT)
    @Size(min = 1, max = 253)
    @Pattern(Names.DNS_SUBDOMAIN)
    private String serviceAccountName = DEFAULT_SERVICE_ACCOUNT;

    @JsonPropertyDescription(
            "How long runner pods may take to become ready (scheduled, started, dataset loaded,"
                    + " warmed up) before the run fails.")
    @Default("5m")
    @Size(min = 1, max = Durations.MAX_LENGTH)
    @Pattern(Durations.PATTERN)
    private String startTimeout = "5m";

    @JsonPropertyDescription(
            "When to delete the runner Job and pods after the run: Always, OnSuccess (keep them"
                    + " after a failure for their logs) or Never.")
    @Default("OnSuccess")
    private CleanupPolicy cleanupPolicy = CleanupPolicy.ON_SUCCESS;

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }

    public String getImagePullPolicy() {
        return imagePullPolicy;
    }

    public void setImagePullPolicy(String imagePullPolicy) {
        this.imagePullPolicy = imagePullPolicy;
    }

    public Integer getParallelism() {
        return parallelism;
    }

    public void setParallelism(Integer parallelism) {
        this.parallelism = parallelism;
    }

    public ResourceRequirements getResources() {
        return resources;
    }

    public void setResources(ResourceRequirements resources) {
        this.resources = resources;
    }

    public Map<String, String> getNodeSelector() {
        return nodeSelector;
    }

    public void setNodeSelector(Map<String, String> nodeSelector) {
        this.nodeSelector = nodeSelector;
    }

    public List<Toleration> getTolerations() {
        return tolerations;
    }

    public void setTolerations(List<Toleration> tolerations) {
        this.tolerations = tolerations;
    }

    public Affinity getAffinity() {
        return affinity;
    }

    public void setAffinity(Affinity affinity) {
        this.affinity = affinity;
    }

    public Boolean getSpread() {
        return spread;
    }

    public void setSpread(Boolean spread) {
        this.spread = spread;
    }

    public String getServiceAccountName() {
        return serviceAccountName;
    }

    public void setServiceAccountName(String serviceAccountName) {
        this.serviceAccountName = serviceAccountName;
    }

    public String getStartTimeout() {
        return startTimeout;
    }

    public void setStartTimeout(String startTimeout) {
        this.startTimeout = startTimeout;
    }

    public CleanupPolicy getCleanupPolicy() {
        return cleanupPolicy;
    }

    public void setCleanupPolicy(CleanupPolicy cleanupPolicy) {
        this.cleanupPolicy = cleanupPolicy;
    }
}
