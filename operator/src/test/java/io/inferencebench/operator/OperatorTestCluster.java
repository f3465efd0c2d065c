package io.inferencebench.operator;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.testkit.ApiServerFixture;
import io.inferencebench.testkit.CustomResourceDefinitions;
import io.inferencebench.testkit.ServiceObjects;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * A real kube-apiserver + etcd (the testkit's {@link ApiServerFixture}) with the operator's CRDs
 * installed, an operator started in-process against it, and the namespaces, Services and
 * BenchmarkRuns the integration tests create in it.
 */
public final class OperatorTestCluster implements AutoCloseable {

    /** The BenchmarkRun CRD, as generated into the crds module's jar. */
    public static final String BENCHMARK_RUN_CRD =
            "/META-INF/fabric8/benchmarkruns.inferencebench.io-v1.yml";

    /** The BenchmarkSchedule CRD, as generated into the crds module's jar. */
    public static final String BENCHMARK_SCHEDULE_CRD =
            "/META-INF/fabric8/benchmarkschedules.inferencebench.io-v1.yml";

    /** The ServiceAccount the runner Jobs use; without it a run stays Pending. */
    public static final String RUNNER_SERVICE_ACCOUNT = "inferencebench-runner";

    private static final Duration STATUS_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STATUS_POLL = Duration.ofMillis(200);

    private final ApiServerFixture apiServer;
    private final KubernetesClient client;
    private final List<KubernetesClient> extraClients = new ArrayList<>();
    private Operator operator;

    private OperatorTestCluster(ApiServerFixture apiServer, boolean readsNewerFields) {
        this.apiServer = apiServer;
        this.client =
                readsNewerFields ? clientReadingNewerFields(apiServer) : apiServer.newClient();
    }

    /** Starts an API server; the tests' client is a plain fabric8 client. No CRDs yet. */
    public static OperatorTestCluster start() {
        return new OperatorTestCluster(ApiServerFixture.start(), false);
    }

    /**
     * Starts an API server with the BenchmarkRun CRD and the run operator on it: wall clock, its
     * meters in {@code meters}, runs admitted by {@code admission}.
     */
    public static OperatorTestCluster startWithRunOperator(
            MeterRegistry meters, RunAdmission admission) {
        OperatorTestCluster cluster = start().withBenchmarkRunCrd();
        cluster.startOperator(
                new BenchmarkRunReconciler(
                        cluster.client(), java.time.Clock.systemUTC(), meters, admission));
        return cluster;
    }

    /**
     * Starts an API server; the tests' client reads as the operator's Quarkus client does, keeping
     * fields newer than the Java model ({@link NewerFields}). No CRDs yet.
     */
    public static OperatorTestCluster startReadingNewerFields() {
        return new OperatorTestCluster(ApiServerFixture.start(), true);
    }

    public ApiServerFixture apiServer() {
        return apiServer;
    }

    /** The tests' client; closed with the cluster. */
    public KubernetesClient client() {
        return client;
    }

    /** Another plain client of the API server, closed with the cluster. */
    public KubernetesClient newClient() {
        KubernetesClient extra = apiServer.newClient();
        extraClients.add(extra);
        return extra;
    }

    /** Another client reading as the operator's Quarkus client does, closed with the cluster. */
    public KubernetesClient newClientReadingNewerFields() {
        KubernetesClient extra = clientReadingNewerFields(apiServer);
        extraClients.add(extra);
        return extra;
    }

    private static KubernetesClient clientReadingNewerFields(ApiServerFixture apiServer) {
        return new KubernetesClientBuilder()
                .withConfig(Config.fromKubeconfig(apiServer.kubeconfigYaml()))
                .withKubernetesSerialization(NewerFields.serialization())
                .build();
    }

    // ------------------------------------------------------------------ CRDs

    /** Installs the BenchmarkRun CRD as generated and waits until it is Established. */
    public OperatorTestCluster withBenchmarkRunCrd() {
        installAndAwaitEstablished(client, List.of(loadCrd(client, BENCHMARK_RUN_CRD)));
        return this;
    }

    /** Reads one of the generated CRDs ({@link #BENCHMARK_RUN_CRD}, ...) from the crds jar. */
    public static CustomResourceDefinition loadCrd(KubernetesClient client, String resource) {
        try (InputStream yaml = BenchmarkRun.class.getResourceAsStream(resource)) {
            return client.apiextensions().v1().customResourceDefinitions().load(yaml).item();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Both generated CRDs, BenchmarkRun and BenchmarkSchedule. */
    public static List<CustomResourceDefinition> allCrds(KubernetesClient client) {
        return List.of(loadCrd(client, BENCHMARK_RUN_CRD), loadCrd(client, BENCHMARK_SCHEDULE_CRD));
    }

    /**
     * A CRD newer than this operator: one more {@code spec.futureField} (a string) than the Java
     * model knows. Changes and returns {@code crd}.
     */
    public static CustomResourceDefinition withFutureSpecField(CustomResourceDefinition crd) {
        crd.getSpec()
                .getVersions()
                .getFirst()
                .getSchema()
                .getOpenAPIV3Schema()
                .getProperties()
                .get("spec")
                .getProperties()
                .put("futureField", new JSONSchemaPropsBuilder().withType("string").build());
        return crd;
    }

    /** Creates the CRDs, then waits up to 60 s for each to be Established. */
    public static void installAndAwaitEstablished(
            KubernetesClient client, List<CustomResourceDefinition> crds) {
        CustomResourceDefinitions.createAndAwaitEstablished(client, crds);
    }

    // ------------------------------------------------------------------ operator

    /**
     * Starts an in-process operator (Java Operator SDK) with its own plain client, reconciling with
     * {@code reconciler}. One operator at a time: {@link #stopOperator()} before starting another.
     */
    public Operator startOperator(Reconciler<?> reconciler) {
        return startOperator(newClient(), reconciler);
    }

    /** As {@link #startOperator(Reconciler)}, with the given client (closed with the cluster). */
    public Operator startOperator(KubernetesClient operatorClient, Reconciler<?> reconciler) {
        if (operator != null) {
            throw new IllegalStateException("an operator is already running");
        }
        if (!extraClients.contains(operatorClient) && operatorClient != client) {
            extraClients.add(operatorClient);
        }
        operator = new Operator(o -> o.withKubernetesClient(operatorClient));
        operator.register(reconciler);
        operator.start();
        return operator;
    }

    /** Stops the operator, as a crash would (its informers stop); no-op when none runs. */
    public void stopOperator() {
        if (operator != null) {
            Operator running = operator;
            operator = null;
            running.stop();
        }
    }

    /** Stops the operator, closes the clients and the API server. */
    @Override
    public void close() {
        stopOperator();
        client.close();
        extraClients.forEach(KubernetesClient::close);
        apiServer.close();
    }

    // ------------------------------------------------------------------ namespaces and targets

    /** Creates a namespace named {@code prefix} plus eight random characters; returns its name. */
    public String createNamespace(String prefix) {
        String namespace = prefix + UUID.randomUUID().toString().substring(0, 8);
        createNamespace(client, namespace);
        return namespace;
    }

    /** Creates the namespace {@code name} through {@code client}. */
    public static void createNamespace(KubernetesClient client, String name) {
        client.namespaces()
                .resource(
                        new NamespaceBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .endMetadata()
                                .build())
                .create();
    }

    /**
     * A fresh namespace as the chart or config/rbac/runner leaves it: with the runner
     * ServiceAccount, without which a run stays Pending (MissingReference).
     */
    public String createRunNamespace(String prefix) {
        String namespace = createNamespace(prefix);
        createRunnerServiceAccount(client, namespace);
        return namespace;
    }

    /** Creates the runner ServiceAccount in {@code namespace}. */
    public static void createRunnerServiceAccount(KubernetesClient client, String namespace) {
        client.serviceAccounts()
                .inNamespace(namespace)
                .resource(
                        new ServiceAccountBuilder()
                                .withNewMetadata()
                                .withName(RUNNER_SERVICE_ACCOUNT)
                                .endMetadata()
                                .build())
                .create();
    }

    /** Creates a Service {@code name} with the one port {@code port} (no selector). */
    public static void createService(
            KubernetesClient client, String namespace, String name, int port) {
        client.services()
                .inNamespace(namespace)
                .resource(ServiceObjects.service(name, null, null, port, null))
                .create();
    }

    /**
     * Creates Service {@code name} on port 8000 and its EndpointSlice {@code name-1} with one
     * endpoint, 10.1.2.3:8000, ready or not: what the endpoints controller would write.
     */
    public void createServiceWithOneEndpoint(String namespace, String name, boolean ready) {
        createService(client, namespace, name, 8000);
        client.discovery()
                .v1()
                .endpointSlices()
                .inNamespace(namespace)
                .resource(
                        ServiceObjects.endpointSlice(
                                name + "-1", name, "10.1.2.3", ready, null, 8000))
                .create();
    }

    // ------------------------------------------------------------------ runs

    /** Parses a whole BenchmarkRun manifest (YAML) and creates it; returns the created run. */
    public BenchmarkRun createRun(String namespace, String yaml) {
        return createRun(
                namespace, client.getKubernetesSerialization().unmarshal(yaml, BenchmarkRun.class));
    }

    /** Creates {@code run} in {@code namespace}; returns the created run. */
    public BenchmarkRun createRun(String namespace, BenchmarkRun run) {
        return client.resources(BenchmarkRun.class).inNamespace(namespace).resource(run).create();
    }

    /**
     * The BenchmarkRun manifest named {@code name} (and namespace, when not null) whose spec is
     * {@code specBody}, indented under {@code spec:}.
     */
    public static String runYaml(String name, String namespace, String specBody) {
        StringBuilder yaml =
                new StringBuilder(
                        "apiVersion: inferencebench.io/v1alpha1\nkind: BenchmarkRun\nmetadata:"
                                + " {name: "
                                + name
                                + (namespace == null ? "" : ", namespace: " + namespace)
                                + "}\nspec:\n");
        specBody.lines().forEach(l -> yaml.append("  ").append(l).append('\n'));
        return yaml.toString();
    }

    /** The BenchmarkRun as the API server has it now, or null. */
    public BenchmarkRun run(String namespace, String name) {
        return client.resources(BenchmarkRun.class).inNamespace(namespace).withName(name).get();
    }

    /**
     * Waits up to 60 s (polling every 200 ms) until the run has a status that {@code predicate}
     * accepts; returns the status read after that.
     */
    public BenchmarkRunStatus awaitRunStatus(
            String namespace, String name, Predicate<BenchmarkRunStatus> predicate) {
        return awaitStatus(BenchmarkRun.class, namespace, name, predicate);
    }

    /**
     * Waits up to 60 s (polling every 200 ms) until the resource has a status that {@code
     * predicate} accepts; returns the status read after that.
     */
    public <R extends CustomResource<?, S>, S> S awaitStatus(
            Class<R> type, String namespace, String name, Predicate<S> predicate) {
        await().atMost(STATUS_TIMEOUT)
                .pollInterval(STATUS_POLL)
                .until(
                        () -> {
                            R resource =
                                    client.resources(type)
                                            .inNamespace(namespace)
                                            .withName(name)
                                            .get();
                            return resource.getStatus() != null
                                    && predicate.test(resource.getStatus());
                        });
        return client.resources(type).inNamespace(namespace).withName(name).get().getStatus();
    }
}
