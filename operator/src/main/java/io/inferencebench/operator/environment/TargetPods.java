package io.inferencebench.operator.environment;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.TargetImage;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * The target's pods (named by the Service's EndpointSlices) and their nodes: images with the
 * digests the nodes pulled, the server container's command line, GPU product, count and requests.
 * Needs get on pods and nodes; without it (or for a URL target) the fields stay absent.
 */
public final class TargetPods {

    private static final Logger LOG = Logger.getLogger(TargetPods.class);

    static final String GPU_RESOURCE = "nvidia.com/gpu";
    static final String GPU_PRODUCT_LABEL = "nvidia.com/gpu.product";
    static final String GPU_COUNT_LABEL = "nvidia.com/gpu.count";

    private final KubernetesClient client;

    public TargetPods(KubernetesClient client) {
        this.client = client;
    }

    /**
     * Observes the pods behind the ready endpoints.
     *
     * @param namespace the Service's namespace
     * @param slices its EndpointSlices
     * @param targetPort the container port the endpoints serve on, or {@code null}
     * @param environment filled in place
     */
    public void observe(
            String namespace,
            List<EndpointSlice> slices,
            Integer targetPort,
            EnvironmentStatus environment) {
        Set<String> podNames = new LinkedHashSet<>();
        for (EndpointSlice slice : slices) {
            if (slice.getEndpoints() == null) {
                continue;
            }
            for (Endpoint endpoint : slice.getEndpoints()) {
                boolean ready =
                        endpoint.getConditions() == null
                                || !Boolean.FALSE.equals(endpoint.getConditions().getReady());
                if (ready
                        && endpoint.getTargetRef() != null
                        && "Pod".equals(endpoint.getTargetRef().getKind())) {
                    podNames.add(endpoint.getTargetRef().getName());
                }
            }
        }
        List<TargetImage> images = new ArrayList<>();
        Set<String> nodes = new LinkedHashSet<>();
        Integer gpuPerPod = null;
        List<String> serverArgs = null;
        for (String name : podNames.stream().sorted().toList()) {
            Pod pod = get(() -> client.pods().inNamespace(namespace).withName(name).get());
            if (pod == null || pod.getSpec() == null) {
                continue;
            }
            Map<String, String> imageIds = new java.util.HashMap<>();
            if (pod.getStatus() != null && pod.getStatus().getContainerStatuses() != null) {
                for (ContainerStatus s : pod.getStatus().getContainerStatuses()) {
                    if (s.getImageID() != null && !s.getImageID().isBlank()) {
                        imageIds.put(s.getName(), s.getImageID());
                    }
                }
            }
            int gpus = 0;
            boolean anyGpu = false;
            for (Container c : pod.getSpec().getContainers()) {
                images.add(
                        new TargetImage(
                                name, c.getName(), c.getImage(), imageIds.get(c.getName())));
                Integer requested = gpuRequest(c);
                if (requested != null) {
                    gpus += requested;
                    anyGpu = true;
                }
            }
            if (anyGpu) {
                gpuPerPod = gpuPerPod == null ? gpus : Math.max(gpuPerPod, gpus);
            }
            if (serverArgs == null) {
                serverArgs = commandLine(serverContainer(pod, targetPort));
            }
            if (pod.getSpec().getNodeName() != null) {
                nodes.add(pod.getSpec().getNodeName());
            }
        }
        environment.setImages(images.isEmpty() ? null : images);
        environment.setServerArgs(serverArgs == null || serverArgs.isEmpty() ? null : serverArgs);
        environment.setGpuRequestsPerPod(gpuPerPod);
        environment.setNodes(nodes.isEmpty() ? null : List.copyOf(nodes));
        for (String nodeName : nodes) {
            Node node = get(() -> client.nodes().withName(nodeName).get());
            Map<String, String> labels =
                    node == null || node.getMetadata().getLabels() == null
                            ? Map.of()
                            : node.getMetadata().getLabels();
            if (environment.getGpuProduct() == null && labels.containsKey(GPU_PRODUCT_LABEL)) {
                environment.setGpuProduct(labels.get(GPU_PRODUCT_LABEL));
            }
            if (environment.getGpuCount() == null && labels.containsKey(GPU_COUNT_LABEL)) {
                try {
                    environment.setGpuCount(Integer.parseInt(labels.get(GPU_COUNT_LABEL)));
                } catch (NumberFormatException e) {
                    // Not a count: leave it absent rather than guess.
                }
            }
        }
    }

    private static <T> T get(java.util.function.Supplier<T> read) {
        try {
            return read.get();
        } catch (KubernetesClientException e) {
            // Forbidden or gone: the fingerprint is best effort, never a reason to fail a run.
            LOG.debugf("environment not read: %s", e.getMessage());
            return null;
        }
    }

    /** The container serving the target port, else the first. */
    static Container serverContainer(Pod pod, Integer targetPort) {
        List<Container> containers = pod.getSpec().getContainers();
        if (targetPort != null) {
            for (Container c : containers) {
                if (c.getPorts() != null
                        && c.getPorts().stream()
                                .anyMatch(p -> targetPort.equals(p.getContainerPort()))) {
                    return c;
                }
            }
        }
        return containers.getFirst();
    }

    static List<String> commandLine(Container container) {
        List<String> line = new ArrayList<>();
        if (container.getCommand() != null) {
            line.addAll(container.getCommand());
        }
        if (container.getArgs() != null) {
            line.addAll(container.getArgs());
        }
        return line;
    }

    /** Extended resources are requested by limit (requests default to it), so both count. */
    static Integer gpuRequest(Container container) {
        if (container.getResources() == null) {
            return null;
        }
        Quantity q =
                container.getResources().getRequests() == null
                        ? null
                        : container.getResources().getRequests().get(GPU_RESOURCE);
        if (q == null && container.getResources().getLimits() != null) {
            q = container.getResources().getLimits().get(GPU_RESOURCE);
        }
        if (q == null) {
            return null;
        }
        return q.getNumericalAmount().intValue();
    }
}
