package io.inferencebench.crds.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;

/**
 * What was measured: the target's pods, images, server version and arguments, GPUs and ready
 * replicas. Fields the operator could not observe are absent (a URL target has no pods).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class EnvironmentStatus {

    @JsonPropertyDescription(
            "Containers of the target pods (the Service's endpoints when the runners started):"
                    + " image as specified and imageID (the digest the node pulled) from pod"
                    + " status.")
    private List<TargetImage> images;

    @JsonPropertyDescription(
            "Command and args of the server container (the one exposing the target port, else"
                    + " the first), from the first target pod.")
    private List<String> serverArgs;

    @JsonPropertyDescription(
            "The server's version from GET /version (vLLM's 'version' field), when it answers"
                    + " one.")
    private String serverVersion;

    @JsonPropertyDescription("Nodes the target pods ran on.")
    private List<String> nodes;

    @JsonPropertyDescription("GPU product of those nodes (node label nvidia.com/gpu.product).")
    private String gpuProduct;

    @JsonPropertyDescription("GPUs per node (node label nvidia.com/gpu.count).")
    private Integer gpuCount;

    @JsonPropertyDescription(
            "nvidia.com/gpu requested per target pod (the largest over the pods, all containers).")
    private Integer gpuRequestsPerPod;

    @JsonPropertyDescription(
            "Ready endpoints of the target Service sampled from launch to the last stage: min,"
                    + " max and every change.")
    private ReadyReplicas readyReplicas;

    public List<TargetImage> getImages() {
        return images;
    }

    public void setImages(List<TargetImage> images) {
        this.images = images;
    }

    public List<String> getServerArgs() {
        return serverArgs;
    }

    public void setServerArgs(List<String> serverArgs) {
        this.serverArgs = serverArgs;
    }

    public String getServerVersion() {
        return serverVersion;
    }

    public void setServerVersion(String serverVersion) {
        this.serverVersion = serverVersion;
    }

    public List<String> getNodes() {
        return nodes;
    }

    public void setNodes(List<String> nodes) {
        this.nodes = nodes;
    }

    public String getGpuProduct() {
        return gpuProduct;
    }

    public void setGpuProduct(String gpuProduct) {
        this.gpuProduct = gpuProduct;
    }

    public Integer getGpuCount() {
        return gpuCount;
    }

    public void setGpuCount(Integer gpuCount) {
        this.gpuCount = gpuCount;
    }

    public Integer getGpuRequestsPerPod() {
        return gpuRequestsPerPod;
    }

    public void setGpuRequestsPerPod(Integer gpuRequestsPerPod) {
        this.gpuRequestsPerPod = gpuRequestsPerPod;
    }

    public ReadyReplicas getReadyReplicas() {
        return readyReplicas;
    }

    public void setReadyReplicas(ReadyReplicas readyReplicas) {
        this.readyReplicas = readyReplicas;
    }
}
