package io.inferencebench.e2e;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LifecycleBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.testkit.ServiceObjects;
import java.io.IOException;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The model-server simulator (llm-d-inference-sim's image, run by the local node as model-sim) as a
 * Deployment, optionally with a Service {@code <service>:8000} in front of it. One place for the
 * container, its readiness probe and the simulator flags every E2E scenario sets.
 *
 * <pre>{@code
 * SimulatorDeployment.named("sim").model("tiny-model").timeToFirstToken(20).interTokenLatency(5)
 *         .maxNumSeqs(256).create(client, ns);
 * }</pre>
 *
 * <p>The pods carry {@code app=<appLabel>} (default: the Deployment name) plus any {@link
 * #podLabel}; the Deployment selects all of them, the Service only {@code app}. Several Deployments
 * with the same {@code appLabel}, distinct pod labels and one Service give replicas that differ in
 * their flags (for example in their {@code --fake-metrics}).
 */
public final class SimulatorDeployment {

    /** The image the local node maps to model-sim (and a real cluster pulls). */
    public static final String IMAGE = "ghcr.io/llm-d/llm-d-inference-sim:v0.8.0";

    /** Container port, named {@code http}; also the Service port. */
    public static final int PORT = 8000;

    /** One sample of the simulator's request counter, with or without labels. */
    private static final Pattern REQUEST_SUCCESS =
            Pattern.compile("(?m)^vllm:request_success_total(?:\\{[^}]*\\})? ([0-9.eE+-]+)$");

    private final String name;
    private String appLabel;
    private final Map<String, String> podLabels = new LinkedHashMap<>();
    private String model = "tiny-model";
    private int replicas = 1;
    private Integer timeToFirstTokenMs;
    private Integer interTokenLatencyMs;
    private int maxNumSeqs = 256;
    private String fakeMetrics;
    private final List<String> extraArgs = new ArrayList<>();
    private String serviceName;
    private String image = IMAGE;
    private boolean restricted;
    private String readinessPath = "/ready";
    private Integer preStopSleepSeconds;
    private final Map<String, String> requests = new LinkedHashMap<>();
    private final Map<String, String> limits = new LinkedHashMap<>();

    private SimulatorDeployment(String name) {
        this.name = name;
        this.appLabel = name;
        this.serviceName = name;
    }

    /** A simulator Deployment called {@code name}, with a Service of the same name. */
    public static SimulatorDeployment named(String name) {
        return new SimulatorDeployment(name);
    }

    public SimulatorDeployment model(String model) {
        this.model = model;
        return this;
    }

    public SimulatorDeployment replicas(int replicas) {
        this.replicas = replicas;
        return this;
    }

    /** {@code --time-to-first-token} in ms (the simulator's default is 0). */
    public SimulatorDeployment timeToFirstToken(int millis) {
        this.timeToFirstTokenMs = millis;
        return this;
    }

    /** {@code --inter-token-latency} in ms (the simulator's default is 0). */
    public SimulatorDeployment interTokenLatency(int millis) {
        this.interTokenLatencyMs = millis;
        return this;
    }

    /** {@code --max-num-seqs}: requests served at once before they queue (default here 256). */
    public SimulatorDeployment maxNumSeqs(int maxNumSeqs) {
        this.maxNumSeqs = maxNumSeqs;
        return this;
    }

    /** {@code --fake-metrics}: the JSON document of fixed values /metrics reports. */
    public SimulatorDeployment fakeMetrics(String json) {
        this.fakeMetrics = json;
        return this;
    }

    /** Further simulator flags, appended after the ones this class sets. */
    public SimulatorDeployment extraArgs(String... args) {
        extraArgs.addAll(List.of(args));
        return this;
    }

    /** The pods' {@code app} label, which the Service selects (default: the Deployment name). */
    public SimulatorDeployment appLabel(String appLabel) {
        this.appLabel = appLabel;
        return this;
    }

    /** An extra pod label, also part of the Deployment's selector. */
    public SimulatorDeployment podLabel(String key, String value) {
        podLabels.put(key, value);
        return this;
    }

    /** The Service to create in front of the pods; {@code null} for none. */
    public SimulatorDeployment service(String serviceName) {
        this.serviceName = serviceName;
        return this;
    }

    /**
     * For namespaces that enforce Pod Security {@code restricted}: {@code image} as the cluster
     * already has it (never pulled), non-root, read-only root filesystem, no capabilities,
     * RuntimeDefault seccomp and no service account token.
     */
    public SimulatorDeployment restricted(String image) {
        this.image = image;
        this.restricted = true;
        return this;
    }

    /** The readiness probe's path (default {@code /ready}). */
    public SimulatorDeployment readinessPath(String path) {
        this.readinessPath = path;
        return this;
    }

    /**
     * A {@code preStop} sleep of {@code seconds}: a deleted replica goes on serving that long
     * before it is told to stop (SIGTERM), while its removal from the Service's endpoints reaches
     * the clients, as production servers behind a Service are set up to stop without refusing
     * anyone.
     */
    public SimulatorDeployment preStopSleep(int seconds) {
        this.preStopSleepSeconds = seconds;
        return this;
    }

    /** The container's requests; a {@code null} value is left out. */
    public SimulatorDeployment requests(String cpu, String memory) {
        putResources(requests, cpu, memory);
        return this;
    }

    /** The container's limits; a {@code null} value is left out. */
    public SimulatorDeployment limits(String cpu, String memory) {
        putResources(limits, cpu, memory);
        return this;
    }

    private static void putResources(Map<String, String> into, String cpu, String memory) {
        if (cpu != null) {
            into.put("cpu", cpu);
        }
        if (memory != null) {
            into.put("memory", memory);
        }
    }

    /** The simulator's command-line arguments. */
    public List<String> args() {
        List<String> args = new ArrayList<>(List.of("--model", model, "--port", "" + PORT));
        if (timeToFirstTokenMs != null) {
            args.addAll(List.of("--time-to-first-token", timeToFirstTokenMs + "ms"));
        }
        if (interTokenLatencyMs != null) {
            args.addAll(List.of("--inter-token-latency", interTokenLatencyMs + "ms"));
        }
        args.addAll(List.of("--max-num-seqs", "" + maxNumSeqs));
        if (fakeMetrics != null) {
            args.addAll(List.of("--fake-metrics", fakeMetrics));
        }
        // model-sim never downloads a tokenizer; llm-d-inference-sim would without this flag
        args.add("--force-dummy-tokenizer");
        args.addAll(extraArgs);
        return args;
    }

    /** The Deployment object. */
    public Deployment deployment() {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("app", appLabel);
        labels.putAll(podLabels);
        Deployment deployment =
                new DeploymentBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .endMetadata()
                        .withNewSpec()
                        .withReplicas(replicas)
                        .withNewSelector()
                        .addToMatchLabels(labels)
                        .endSelector()
                        .withNewTemplate()
                        .withNewMetadata()
                        .addToLabels(labels)
                        .endMetadata()
                        .withNewSpec()
                        .addNewContainer()
                        .withName("vllm")
                        .withImage(image)
                        .withArgs(args())
                        .addNewPort()
                        .withName("http")
                        .withContainerPort(PORT)
                        .endPort()
                        .withNewReadinessProbe()
                        .withNewHttpGet()
                        .withPath(readinessPath)
                        .withPort(new IntOrString("http"))
                        .endHttpGet()
                        .withPeriodSeconds(1)
                        .endReadinessProbe()
                        .endContainer()
                        .endSpec()
                        .endTemplate()
                        .endSpec()
                        .build();
        PodSpec pod = deployment.getSpec().getTemplate().getSpec();
        var container = pod.getContainers().get(0);
        if (restricted) {
            pod.setAutomountServiceAccountToken(false);
            pod.setSecurityContext(
                    new PodSecurityContextBuilder()
                            .withRunAsNonRoot(true)
                            .withNewSeccompProfile()
                            .withType("RuntimeDefault")
                            .endSeccompProfile()
                            .build());
            container.setImagePullPolicy("Never");
            container.setSecurityContext(
                    new SecurityContextBuilder()
                            .withAllowPrivilegeEscalation(false)
                            .withReadOnlyRootFilesystem(true)
                            .withNewCapabilities()
                            .withDrop("ALL")
                            .endCapabilities()
                            .build());
        }
        if (preStopSleepSeconds != null) {
            container.setLifecycle(
                    new LifecycleBuilder()
                            .withNewPreStop()
                            .withNewSleep()
                            .withSeconds(preStopSleepSeconds.longValue())
                            .endSleep()
                            .endPreStop()
                            .build());
        }
        if (!requests.isEmpty() || !limits.isEmpty()) {
            var resources = new ResourceRequirementsBuilder();
            requests.forEach((k, v) -> resources.addToRequests(k, new Quantity(v)));
            limits.forEach((k, v) -> resources.addToLimits(k, new Quantity(v)));
            container.setResources(resources.build());
        }
        return deployment;
    }

    /**
     * Applies the Deployment and, unless {@code service(null)}, its Service (server-side apply: a
     * scenario that deploys the simulator another scenario deployed gets the same objects, not a
     * conflict).
     */
    public SimulatorDeployment create(KubernetesClient client, String namespace) {
        client.apps()
                .deployments()
                .inNamespace(namespace)
                .resource(deployment())
                .forceConflicts()
                .serverSideApply();
        if (serviceName != null) {
            createService(client, namespace, serviceName, appLabel);
        }
        return this;
    }

    /** Waits until every replica of the Deployment is ready. */
    public SimulatorDeployment awaitReady(
            KubernetesClient client, String namespace, Duration atMost) {
        await().atMost(atMost)
                .pollInterval(Duration.ofMillis(250))
                .until(
                        () -> {
                            Deployment d =
                                    client.apps()
                                            .deployments()
                                            .inNamespace(namespace)
                                            .withName(name)
                                            .get();
                            Integer ready =
                                    d == null || d.getStatus() == null
                                            ? null
                                            : d.getStatus().getReadyReplicas();
                            return ready != null && ready >= replicas;
                        });
        return this;
    }

    /** Creates the Deployment and its Service, and waits until every replica is ready. */
    public SimulatorDeployment deploy(KubernetesClient client, String namespace, Duration atMost) {
        return create(client, namespace).awaitReady(client, namespace, atMost);
    }

    /**
     * The simulator's own count of requests served: {@code vllm:request_success_total} summed over
     * its label sets in a {@code /metrics} page.
     */
    public static double requestSuccesses(String metricsPage) {
        double total = 0;
        Matcher m = REQUEST_SUCCESS.matcher(metricsPage);
        while (m.find()) {
            total += Double.parseDouble(m.group(1));
        }
        return total;
    }

    /** {@link #requestSuccesses(String)} of the simulator's page at {@code metricsUrl}. */
    public static double requestSuccesses(HttpClient http, String metricsUrl)
            throws IOException, InterruptedException {
        return requestSuccesses(HttpGet.get(http, metricsUrl).body());
    }

    /** The Deployment's pods (any phase). */
    public List<Pod> pods(KubernetesClient client, String namespace) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("app", appLabel);
        labels.putAll(podLabels);
        return client.pods().inNamespace(namespace).withLabels(labels).list().getItems();
    }

    /**
     * Applies a Service {@code name:8000} forwarding to the {@code http} port of pods labelled
     * {@code app=<appLabel>}.
     */
    public static void createService(
            KubernetesClient client, String namespace, String name, String appLabel) {
        client.services()
                .inNamespace(namespace)
                .resource(
                        ServiceObjects.service(
                                name, appLabel, "http", PORT, new IntOrString("http")))
                .forceConflicts()
                .serverSideApply();
    }
}
