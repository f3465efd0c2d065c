package io.inferencebench.e2e.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.e2e.OperatorFixtures;
import io.inferencebench.operator.RunnerDefaults;
import io.inferencebench.operator.dependent.RunnerJobDependent;
import io.inferencebench.testkit.ApiServerFixture;
import io.inferencebench.testkit.CustomResourceDefinitions;
import io.inferencebench.testkit.K8sBinaries;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Install checks of the Helm chart ({@code charts/inferencebench}) and the kustomize install
 * ({@code config/default}) on a real kube-apiserver + etcd: {@code helm lint --strict}, every
 * object {@code helm template} renders (default values and the chart's {@code ci/*.yaml}) and
 * {@code kubectl kustomize config/default} applied with {@code kubectl apply --server-side
 * --dry-run=server}, chart and kustomize installing the same operator (names, RBAC rules, pod
 * spec), the operator and runner pods admitted by a namespace enforcing Pod Security {@code
 * restricted}, and the values schema refusing wrong types and unknown keys.
 *
 * <p>Helm comes from {@code e2e/scripts/provision-helm.sh} (built from the Go module proxy,
 * cached), kubectl from the Kubernetes binary directory. The ServiceMonitor CRD of
 * prometheus-operator is not on this API server: a minimal one ({@code
 * install/servicemonitor-crd.yaml}: the fields the chart sets, typed as upstream, unknown fields
 * refused) is installed first, so the rendered ServiceMonitor is dry-run like every other object.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ChartInstallIT {

    static final String RELEASE = "inferencebench";
    static final String SYSTEM = "inferencebench-system";
    static final List<String> CI_VALUES =
            List.of("ci/registry-servicemonitor-values.yaml", "ci/watch-namespaces-values.yaml");

    private static final YAMLMapper YAML = new YAMLMapper();
    private static final ObjectMapper JSON = new ObjectMapper();

    private Path root;
    private Path chart;
    private Path helm;
    private Path kubectl;
    private Path workDir;
    private Path kubeconfig;
    private ApiServerFixture apiServer;
    private KubernetesClient client;

    @BeforeAll
    void startApiServerAndTools() throws Exception {
        root = OperatorFixtures.findRepoRoot();
        chart = root.resolve("charts/inferencebench");
        helm = provisionHelm(root);
        kubectl = K8sBinaries.binary("kubectl");
        assertThat(kubectl).isExecutable();
        apiServer = ApiServerFixture.start();
        client = apiServer.client();
        workDir = Files.createTempDirectory("ib-chart-it-");
        kubeconfig = workDir.resolve("kubeconfig");
        Files.writeString(kubeconfig, apiServer.kubeconfigYaml());
        for (String ns : List.of(SYSTEM, "team-a", "team-b", "monitoring")) {
            namespace(ns, Map.of());
        }
        try (InputStream crd =
                ChartInstallIT.class.getResourceAsStream("/install/servicemonitor-crd.yaml")) {
            CustomResourceDefinition serviceMonitor =
                    client.apiextensions().v1().customResourceDefinitions().load(crd).item();
            client.resource(serviceMonitor).create();
            CustomResourceDefinitions.awaitEstablished(
                    client, List.of(serviceMonitor.getMetadata().getName()));
        }
    }

    @AfterAll
    void stop() {
        if (apiServer != null) {
            apiServer.close();
        }
        if (workDir != null) {
            try (var walk = Files.walk(workDir)) {
                walk.sorted(java.util.Comparator.reverseOrder())
                        .map(Path::toFile)
                        .forEach(java.io.File::delete);
            } catch (IOException e) {
                // a temp directory left behind
            }
        }
    }

    // ------------------------------------------------------------------ lint and dry-run

    @Test
    void helmLintStrictPassesWithDefaultAndCiValues() {
        Result lint = helm("lint", "--strict", chart.toString());
        assertThat(lint.exit()).as(lint.toString()).isZero();
        assertThat(lint.out()).contains("1 chart(s) linted, 0 chart(s) failed");
        for (String values : CI_VALUES) {
            Result withValues =
                    helm(
                            "lint",
                            "--strict",
                            chart.toString(),
                            "-f",
                            chart.resolve(values).toString());
            assertThat(withValues.exit()).as(values + ": " + withValues).isZero();
        }
    }

    @ParameterizedTest(name = "values: {0}")
    @ValueSource(
            strings = {
                "(defaults)",
                "ci/registry-servicemonitor-values.yaml",
                "ci/watch-namespaces-values.yaml"
            })
    void everyRenderedObjectPassesServerSideDryRun(String values) throws IOException {
        String rendered =
                values.startsWith("(")
                        ? template("--include-crds")
                        : template("--include-crds", "-f", chart.resolve(values).toString());
        List<JsonNode> docs = documents(rendered);
        assertThat(docs).isNotEmpty();
        Result applied = serverDryRun(rendered);
        assertThat(applied.exit()).as(applied.toString()).isZero();
        // kubectl prints one line per object: "<kind>/<name> serverside-applied (server dry run)"
        assertThat(applied.out().lines().filter(l -> l.endsWith("(server dry run)")).count())
                .as(applied.out())
                .isEqualTo(docs.size());
        assertThat(kinds(docs))
                .contains("CustomResourceDefinition", "Deployment", "ServiceAccount", "Service");
    }

    @Test
    void kustomizeDefaultPassesServerSideDryRun() throws IOException {
        String rendered = kustomize("config/default");
        Result applied = serverDryRun(rendered);
        assertThat(applied.exit()).as(applied.toString()).isZero();
        assertThat(applied.out().lines().filter(l -> l.endsWith("(server dry run)")).count())
                .isEqualTo(documents(rendered).size());
        // What the README tells a user to run in each workload namespace.
        Result runner =
                dryRunApply(
                        null, "-k", root.resolve("config/rbac/runner").toString(), "-n", "team-a");
        assertThat(runner.exit()).as(runner.toString()).isZero();
        assertThat(runner.out()).contains("serviceaccount/inferencebench-runner");
    }

    // ------------------------------------------------------------------ values

    @Test
    void customRegistryTagAndServiceMonitor() throws IOException {
        List<JsonNode> docs =
                documents(
                        template(
                                "-f",
                                chart.resolve("ci/registry-servicemonitor-values.yaml")
                                        .toString()));
        JsonNode deployment = only(docs, "Deployment", SYSTEM, "inferencebench-operator");
        assertThat(deployment.at("/spec/replicas").asInt()).isEqualTo(2);
        JsonNode container = deployment.at("/spec/template/spec/containers/0");
        assertThat(container.path("image").asText())
                .isEqualTo("registry.example.com/platform/inferencebench/operator:1.2.3");
        assertThat(container.path("imagePullPolicy").asText()).isEqualTo("Always");
        Map<String, String> env = env(container);
        assertThat(env)
                .containsEntry(
                        "RUNNER_IMAGE", "registry.example.com/platform/inferencebench/runner:1.2.3")
                .containsEntry("JAVA_TOOL_OPTIONS", "-XX:+ExitOnOutOfMemoryError")
                .containsEntry("INFERENCEBENCH_MAX_ACTIVE_RUNS", "4")
                .doesNotContainKey("QUARKUS_OPERATOR_SDK_CONTROLLERS_BENCHMARKRUN_NAMESPACES");
        assertThat(deployment.at("/spec/template/spec/imagePullSecrets/0/name").asText())
                .isEqualTo("registry-credentials");

        JsonNode monitor = only(docs, "ServiceMonitor", SYSTEM, "inferencebench-operator");
        assertThat(monitor.at("/metadata/labels/release").asText())
                .isEqualTo("kube-prometheus-stack");
        assertThat(monitor.at("/spec/endpoints/0/port").asText()).isEqualTo("http");
        assertThat(monitor.at("/spec/endpoints/0/path").asText()).isEqualTo("/q/metrics");
        // It selects the operator's Service by that Service's labels, in the release namespace.
        JsonNode service = only(docs, "Service", SYSTEM, "inferencebench-operator");
        JsonNode selector = monitor.at("/spec/selector/matchLabels");
        assertThat(fieldNames(selector)).isNotEmpty();
        for (String label : fieldNames(selector)) {
            assertThat(service.at("/metadata/labels").path(label)).isEqualTo(selector.path(label));
        }
        assertThat(monitor.at("/spec/namespaceSelector/matchNames/0").asText()).isEqualTo(SYSTEM);

        JsonNode dashboard =
                only(docs, "ConfigMap", "monitoring", "inferencebench-operator-dashboard");
        assertThat(dashboard.at("/metadata/labels/grafana_dashboard").asText()).isEqualTo("1");
        JsonNode grafana = JSON.readTree(dashboard.at("/data/inferencebench.json").asText());
        List<String> titles = new ArrayList<>();
        grafana.path("panels").forEach(p -> titles.add(p.path("title").asText()));
        assertThat(titles)
                .containsExactly(
                        "Runs by phase",
                        "Stage progress",
                        "Live RPS (achieved vs requested)",
                        "Live TTFT p50");
        String exprs = grafana.findValuesAsText("expr").toString();
        assertThat(exprs)
                .contains("inferencebench_runs")
                .contains("inferencebench_run_stage")
                .contains("inferencebench_run_stages")
                .contains("inferencebench_run_live_rps")
                .contains("inferencebench_run_live_ttft_p50_seconds");
    }

    @Test
    void namespaceListGetsRolesInThoseNamespacesAndNoClusterRole() throws IOException {
        List<JsonNode> defaults = documents(template());
        JsonNode clusterRole = only(defaults, "ClusterRole", null, "inferencebench-operator");
        List<JsonNode> docs =
                documents(
                        template(
                                "-f", chart.resolve("ci/watch-namespaces-values.yaml").toString()));
        assertThat(kinds(docs)).doesNotContain("ClusterRole", "ClusterRoleBinding");
        for (String ns : List.of("team-a", "team-b")) {
            JsonNode role = only(docs, "Role", ns, "inferencebench-operator");
            assertThat(role.path("rules")).isEqualTo(clusterRole.path("rules"));
            JsonNode binding = only(docs, "RoleBinding", ns, "inferencebench-operator");
            assertThat(binding.at("/subjects/0/name").asText())
                    .isEqualTo("inferencebench-operator");
            assertThat(binding.at("/subjects/0/namespace").asText()).isEqualTo(SYSTEM);
            // runner.namespaces empty: runner RBAC follows the watched namespaces
            only(docs, "ServiceAccount", ns, "inferencebench-runner");
            only(docs, "Role", ns, "inferencebench-runner");
            only(docs, "RoleBinding", ns, "inferencebench-runner");
        }
        JsonNode deployment = only(docs, "Deployment", SYSTEM, "inferencebench-operator");
        assertThat(env(deployment.at("/spec/template/spec/containers/0")))
                .containsEntry(
                        "QUARKUS_OPERATOR_SDK_CONTROLLERS_BENCHMARKRUN_NAMESPACES",
                        "team-a,team-b");
        // The leader-election Lease stays in the release namespace.
        only(docs, "Role", SYSTEM, "inferencebench-operator-leader-election");
    }

    // ------------------------------------------------------------------ chart == kustomize

    @Test
    void chartAndKustomizeInstallTheSameOperator() throws IOException {
        List<JsonNode> chartDocs = documents(template("--include-crds"));
        List<JsonNode> kustomizeDocs = documents(kustomize("config/default"));

        Set<String> kustomizeObjects = new TreeSet<>();
        for (JsonNode doc : kustomizeDocs) {
            if (!doc.path("kind").asText().equals("Namespace")) {
                kustomizeObjects.add(id(doc));
            }
        }
        Set<String> chartObjects =
                chartDocs.stream()
                        .map(ChartInstallIT::id)
                        .collect(Collectors.toCollection(TreeSet::new));
        // The chart adds only the Grafana dashboard ConfigMap (on by default).
        assertThat(chartObjects).containsAll(kustomizeObjects);
        Set<String> extra = new TreeSet<>(chartObjects);
        extra.removeAll(kustomizeObjects);
        assertThat(extra)
                .containsExactly("ConfigMap/" + SYSTEM + "/inferencebench-operator-dashboard");

        for (String object : kustomizeObjects) {
            JsonNode k = byId(kustomizeDocs, object);
            JsonNode c = byId(chartDocs, object);
            switch (k.path("kind").asText()) {
                case "ClusterRole", "Role" -> same(object, c.path("rules"), k.path("rules"));
                case "ClusterRoleBinding", "RoleBinding" -> {
                    same(object, c.path("roleRef"), k.path("roleRef"));
                    same(object, c.path("subjects"), k.path("subjects"));
                }
                case "Deployment" -> {
                    same(object, c.at("/spec/selector"), k.at("/spec/selector"));
                    same(object, c.at("/spec/replicas"), k.at("/spec/replicas"));
                    // the whole pod spec: identity, securityContext, image, env, probes,
                    // resources, volumes
                    same(
                            object + " pod spec",
                            c.at("/spec/template/spec"),
                            k.at("/spec/template/spec"));
                }
                case "Service", "CustomResourceDefinition" ->
                        same(object, c.path("spec"), k.path("spec"));
                case "ServiceAccount" -> {
                    // the name is the identity
                }
                default -> throw new AssertionError("no comparison for " + object);
            }
            // selector labels are on every object in both installs
            assertThat(c.at("/metadata/labels/app.kubernetes.io~1name"))
                    .as(object)
                    .isEqualTo(k.at("/metadata/labels/app.kubernetes.io~1name"));
        }

        // Runner RBAC: the chart's per-namespace objects equal config/rbac/runner.
        List<JsonNode> runnerChart = documents(template("--set", "runner.namespaces={team-a}"));
        for (JsonNode k : documents(kustomize("config/rbac/runner"))) {
            JsonNode c =
                    only(
                            runnerChart,
                            k.path("kind").asText(),
                            "team-a",
                            k.at("/metadata/name").asText());
            same(id(k), c.path("rules"), k.path("rules"));
            same(id(k), c.path("roleRef"), k.path("roleRef"));
            same(id(k), c.at("/subjects/0/name"), k.at("/subjects/0/name"));
        }
    }

    // ------------------------------------------------------------------ Pod Security

    @Test
    void operatorAndRunnerPodsAreAdmittedByPodSecurityRestricted() throws IOException {
        String ns = "restricted-check";
        namespace(
                ns,
                Map.of(
                        "pod-security.kubernetes.io/enforce", "restricted",
                        "pod-security.kubernetes.io/enforce-version", "latest"));
        List<Pod> pods = new ArrayList<>();
        pods.add(operatorPod(documents(template()), "chart-default"));
        pods.add(
                operatorPod(
                        documents(
                                template(
                                        "-f",
                                        chart.resolve("ci/registry-servicemonitor-values.yaml")
                                                .toString())),
                        "chart-registry"));
        pods.add(operatorPod(documents(kustomize("config/default")), "kustomize"));
        pods.add(runnerPod(ns));
        for (Pod pod : pods) {
            // Pod Security admission runs in the API server: a violation is a 403 here, dry run
            // or not.
            Pod admitted = client.pods().inNamespace(ns).resource(pod).dryRun().create();
            assertThat(admitted.getMetadata().getName()).isEqualTo(pod.getMetadata().getName());
        }

        // The check can fail: without runAsNonRoot and with privilege escalation the same pods
        // are refused, naming the policy.
        for (Pod pod : List.of(pods.getFirst(), pods.getLast())) {
            Pod loose =
                    new PodBuilder(pod)
                            .editSpec()
                            .editSecurityContext()
                            .withRunAsNonRoot(null)
                            .endSecurityContext()
                            .editFirstContainer()
                            .editSecurityContext()
                            .withAllowPrivilegeEscalation(true)
                            .withRunAsNonRoot(null)
                            .endSecurityContext()
                            .endContainer()
                            .endSpec()
                            .build();
            assertThatThrownBy(
                            () -> client.pods().inNamespace(ns).resource(loose).dryRun().create())
                    .isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("violates PodSecurity \"restricted:latest\"")
                    .hasMessageContaining("allowPrivilegeEscalation")
                    .hasMessageContaining("runAsNonRoot");
        }
    }

    private Pod operatorPod(List<JsonNode> docs, String name) throws IOException {
        JsonNode deployment = only(docs, "Deployment", SYSTEM, "inferencebench-operator");
        PodTemplateSpec template =
                JSON.treeToValue(deployment.at("/spec/template"), PodTemplateSpec.class);
        // The ServiceAccount is not in the check namespace; admission does not need it.
        template.getSpec().setServiceAccountName(null);
        return new PodBuilder()
                .withNewMetadata()
                .withName("operator-" + name)
                .withLabels(template.getMetadata().getLabels())
                .endMetadata()
                .withSpec(template.getSpec())
                .build();
    }

    /** The runner pod the operator would create for config/samples/vllm-rate-sweep.yaml. */
    private Pod runnerPod(String ns) throws IOException {
        BenchmarkRun run;
        try (InputStream sample =
                Files.newInputStream(root.resolve("config/samples/vllm-rate-sweep.yaml"))) {
            run = client.getKubernetesSerialization().unmarshal(sample, BenchmarkRun.class);
        }
        run.getMetadata().setNamespace(ns);
        JsonNode deployment =
                only(documents(template()), "Deployment", SYSTEM, "inferencebench-operator");
        String runnerImage =
                env(deployment.at("/spec/template/spec/containers/0")).get("RUNNER_IMAGE");
        Job job = RunnerJobDependent.desired(run, new RunnerDefaults(runnerImage, "IfNotPresent"));
        PodTemplateSpec template = job.getSpec().getTemplate();
        assertThat(template.getSpec().getContainers().getFirst().getImage()).isEqualTo(runnerImage);
        template.getSpec().setServiceAccountName(null);
        return new PodBuilder()
                .withNewMetadata()
                .withName(job.getMetadata().getName() + "-0")
                .withLabels(template.getMetadata().getLabels())
                .endMetadata()
                .withSpec(template.getSpec())
                .build();
    }

    // ------------------------------------------------------------------ schema and NOTES

    @Test
    void valuesSchemaRefusesWrongTypesAndUnknownTopLevelKeys() throws IOException {
        Result wrongType = helm("template", RELEASE, chart.toString(), "--set", "replicas=two");
        assertThat(wrongType.exit()).isNotZero();
        assertThat(wrongType.err()).contains("/replicas").contains("want integer");

        Result unknownKey = helm("template", RELEASE, chart.toString(), "--set", "replica=2");
        assertThat(unknownKey.exit()).isNotZero();
        assertThat(unknownKey.err()).contains("additional properties 'replica' not allowed");

        Path file = workDir.resolve("bad-values.yaml");
        Files.writeString(file, "watchNamespaces: team-a\nserviceMonitor: {enabled: yes-please}\n");
        Result lint = helm("lint", "--strict", chart.toString(), "-f", file.toString());
        assertThat(lint.exit()).isNotZero();
        assertThat(lint.out() + lint.err())
                .contains("/watchNamespaces")
                .contains("want array")
                .contains("/serviceMonitor/enabled")
                .contains("want boolean");

        Result nestedUnknown =
                helm("template", RELEASE, chart.toString(), "--set", "image.repository=x");
        assertThat(nestedUnknown.exit()).isNotZero();
        assertThat(nestedUnknown.err()).contains("/image").contains("'repository' not allowed");
    }

    @Test
    void notesTellHowToApplyAndReadAFirstRun() {
        Result install =
                helm(
                        "install",
                        RELEASE,
                        chart.toString(),
                        "-n",
                        SYSTEM,
                        "--dry-run=server",
                        "--kubeconfig",
                        kubeconfig.toString(),
                        "-f",
                        chart.resolve("ci/watch-namespaces-values.yaml").toString());
        assertThat(install.exit()).as(install.toString()).isZero();
        String notes = install.out().substring(install.out().indexOf("NOTES:"));
        assertThat(notes)
                .contains("kubectl apply -n team-a -f config/samples/vllm-rate-sweep.yaml")
                .contains("kubectl get br -n team-a -o wide")
                .contains("Watching:       team-a, team-b")
                .contains("Runner RBAC:    team-a, team-b")
                .contains(
                        "kubectl apply --server-side --force-conflicts -f charts/inferencebench/crds/");
        assertThat(Files.exists(root.resolve("config/samples/vllm-rate-sweep.yaml"))).isTrue();
    }

    // ------------------------------------------------------------------ helpers

    private void namespace(String name, Map<String, String> labels) {
        client.namespaces()
                .resource(
                        new NamespaceBuilder()
                                .withNewMetadata()
                                .withName(name)
                                .withLabels(labels)
                                .endMetadata()
                                .build())
                .create();
    }

    private String template(String... extra) {
        List<String> args =
                new ArrayList<>(List.of("template", RELEASE, chart.toString(), "-n", SYSTEM));
        args.addAll(List.of(extra));
        Result result = helm(args.toArray(String[]::new));
        assertThat(result.exit()).as(result.toString()).isZero();
        return result.out();
    }

    private String kustomize(String dir) {
        Result result =
                run(List.of(kubectl.toString(), "kustomize", root.resolve(dir).toString()), null);
        assertThat(result.exit()).as(result.toString()).isZero();
        return result.out();
    }

    private Result serverDryRun(String yaml) {
        return dryRunApply(yaml, "--field-manager=chart-install-it", "-f", "-");
    }

    /**
     * {@code kubectl apply --server-side --dry-run=server} with {@code args}, {@code stdin} fed in.
     */
    private Result dryRunApply(String stdin, String... args) {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                kubectl.toString(),
                                "--kubeconfig",
                                kubeconfig.toString(),
                                "apply",
                                "--server-side",
                                "--dry-run=server"));
        command.addAll(List.of(args));
        return run(command, stdin);
    }

    private Result helm(String... args) {
        List<String> command = new ArrayList<>();
        command.add(helm.toString());
        command.addAll(List.of(args));
        return run(command, null);
    }

    record Result(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    private Result run(List<String> command, String stdin) {
        try {
            ProcessBuilder builder = new ProcessBuilder(command);
            // Helm keeps its caches and config out of the user's home.
            builder.environment().put("HELM_CACHE_HOME", workDir.resolve("helm/cache").toString());
            builder.environment()
                    .put("HELM_CONFIG_HOME", workDir.resolve("helm/config").toString());
            builder.environment().put("HELM_DATA_HOME", workDir.resolve("helm/data").toString());
            builder.environment().remove("KUBECONFIG");
            Process process = builder.start();
            CompletableFuture<String> out = read(process.getInputStream());
            CompletableFuture<String> err = read(process.getErrorStream());
            try (var in = process.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            if (!process.waitFor(180, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("timed out: " + command);
            }
            return new Result(process.exitValue(), out.join(), err.join());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static CompletableFuture<String> read(InputStream stream) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try (stream) {
                        return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
    }

    static Path provisionHelm(Path root) throws IOException, InterruptedException {
        Path script = root.resolve("e2e/scripts/provision-helm.sh");
        Process process =
                new ProcessBuilder("bash", script.toString())
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start();
        byte[] out = process.getInputStream().readAllBytes();
        if (!process.waitFor(30, TimeUnit.MINUTES) || process.exitValue() != 0) {
            throw new IllegalStateException(script + " failed");
        }
        String[] lines = new String(out, StandardCharsets.UTF_8).strip().split("\n");
        return Path.of(lines[lines.length - 1].strip());
    }

    private static List<JsonNode> documents(String yaml) throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (var parser = YAML.getFactory().createParser(yaml)) {
            var it = YAML.readValues(parser, JsonNode.class);
            while (it.hasNext()) {
                JsonNode doc = it.next();
                if (doc != null && doc.isObject() && doc.has("kind")) {
                    docs.add(doc);
                }
            }
        }
        return docs;
    }

    private static String id(JsonNode doc) {
        String ns = doc.at("/metadata/namespace").asText("");
        return doc.path("kind").asText()
                + "/"
                + (ns.isEmpty() ? "" : ns + "/")
                + doc.at("/metadata/name").asText();
    }

    private static JsonNode byId(List<JsonNode> docs, String id) {
        return docs.stream()
                .filter(d -> id(d).equals(id))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + id));
    }

    private static JsonNode only(List<JsonNode> docs, String kind, String namespace, String name) {
        List<JsonNode> found =
                docs.stream()
                        .filter(d -> d.path("kind").asText().equals(kind))
                        .filter(d -> d.at("/metadata/name").asText().equals(name))
                        .filter(
                                d ->
                                        Objects.equals(
                                                namespace,
                                                d.at("/metadata/namespace").isMissingNode()
                                                        ? null
                                                        : d.at("/metadata/namespace").asText()))
                        .toList();
        assertThat(found).as("%s %s/%s", kind, namespace, name).hasSize(1);
        return found.getFirst();
    }

    /** Equal as values: kubectl kustomize writes 0.0 as 0, so numbers compare by value. */
    private static void same(String what, JsonNode chartNode, JsonNode kustomizeNode) {
        java.util.Comparator<JsonNode> numbersByValue =
                (a, b) -> {
                    if (a.isNumber() && b.isNumber()) {
                        return Double.compare(a.doubleValue(), b.doubleValue());
                    }
                    return a.equals(b) ? 0 : 1;
                };
        if (!chartNode.equals(numbersByValue, kustomizeNode)) {
            throw new AssertionError(
                    what
                            + ": chart and kustomize differ\nchart:\n"
                            + abbreviate(chartNode)
                            + "\nkustomize:\n"
                            + abbreviate(kustomizeNode));
        }
    }

    private static String abbreviate(JsonNode node) {
        String text = node.toPrettyString();
        return text.length() > 4000 ? text.substring(0, 4000) + "..." : text;
    }

    private static Set<String> kinds(List<JsonNode> docs) {
        return docs.stream().map(d -> d.path("kind").asText()).collect(Collectors.toSet());
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static Map<String, String> env(JsonNode container) {
        Map<String, String> env = new java.util.LinkedHashMap<>();
        for (JsonNode e : container.path("env")) {
            env.put(e.path("name").asText(), e.path("value").asText(null));
        }
        return env;
    }
}
