package io.inferencebench.e2e;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.testkit.CustomResourceDefinitions;
import io.inferencebench.testkit.LocalCluster;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Cluster setup shared by the suites that run the packaged operator as a host process. */
public final class OperatorFixtures {

    public static final String OPERATOR_NAMESPACE = "inferencebench-system";

    private OperatorFixtures() {}

    /**
     * The operator's ServiceAccount and RBAC from {@code config/rbac}; returns a kubeconfig with a
     * token of that ServiceAccount so the operator runs with exactly its least-privilege rights.
     */
    public static Path installOperatorIdentity(
            KubernetesClient client, LocalCluster cluster, Path repoRoot, Path kubeconfig)
            throws IOException {
        if (client.namespaces().withName(OPERATOR_NAMESPACE).get() == null) {
            client.namespaces()
                    .resource(
                            new NamespaceBuilder()
                                    .withNewMetadata()
                                    .withName(OPERATOR_NAMESPACE)
                                    .endMetadata()
                                    .build())
                    .create();
        }
        for (String file :
                List.of(
                        "service_account.yaml",
                        "role.yaml",
                        "role_binding.yaml",
                        "leader_election_role.yaml")) {
            try (InputStream yaml = Files.newInputStream(repoRoot.resolve("config/rbac/" + file))) {
                for (HasMetadata item : client.load(yaml).items()) {
                    if (item.getMetadata().getNamespace() != null) {
                        item.getMetadata().setNamespace(OPERATOR_NAMESPACE);
                    }
                    if (item instanceof io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding b) {
                        b.getSubjects()
                                .forEach(subject -> subject.setNamespace(OPERATOR_NAMESPACE));
                    }
                    if (item instanceof io.fabric8.kubernetes.api.model.rbac.RoleBinding b) {
                        b.getSubjects()
                                .forEach(subject -> subject.setNamespace(OPERATOR_NAMESPACE));
                    }
                    client.resource(item).forceConflicts().serverSideApply();
                }
            }
        }
        String token =
                client.serviceAccounts()
                        .inNamespace(OPERATOR_NAMESPACE)
                        .withName("inferencebench-operator")
                        .tokenRequest(
                                new io.fabric8.kubernetes.api.model.authentication
                                                .TokenRequestBuilder()
                                        .withNewSpec()
                                        .withExpirationSeconds(6 * 3600L)
                                        .endSpec()
                                        .build())
                        .getStatus()
                        .getToken();
        String ca =
                java.util.Base64.getEncoder()
                        .encodeToString(
                                cluster.controlPlane()
                                        .caCertificatePem()
                                        .getBytes(StandardCharsets.UTF_8));
        Files.writeString(
                kubeconfig,
                """
                apiVersion: v1
                kind: Config
                clusters:
                - name: local
                  cluster:
                    server: %s
                    certificate-authority-data: %s
                users:
                - name: operator
                  user:
                    token: %s
                contexts:
                - name: operator
                  context: {cluster: local, user: operator, namespace: %s}
                current-context: operator
                """
                        .formatted(
                                cluster.controlPlane().apiServerUrl(),
                                ca,
                                token,
                                OPERATOR_NAMESPACE));
        return kubeconfig;
    }

    /**
     * Installs the generated CRDs (BenchmarkRun, BenchmarkSchedule: the operator watches both and
     * does not start without either) and waits until they are established.
     */
    public static void installCrd(KubernetesClient client) throws IOException {
        for (String file :
                java.util.List.of(
                        "/META-INF/fabric8/benchmarkruns.inferencebench.io-v1.yml",
                        "/META-INF/fabric8/benchmarkschedules.inferencebench.io-v1.yml")) {
            try (InputStream yaml = BenchmarkRun.class.getResourceAsStream(file)) {
                CustomResourceDefinition crd =
                        client.apiextensions().v1().customResourceDefinitions().load(yaml).item();
                client.apiextensions()
                        .v1()
                        .customResourceDefinitions()
                        .resource(crd)
                        .forceConflicts()
                        .serverSideApply();
            }
        }
        CustomResourceDefinitions.awaitEstablished(
                client,
                List.of(
                        BenchmarkRun.CRD_NAME,
                        io.inferencebench.crds.v1alpha1.BenchmarkSchedule.CRD_NAME));
    }

    /**
     * The packaged operator and runner jar a suite runs.
     *
     * @param operatorJar {@code quarkus-run.jar} inside its private copy of {@code quarkus-app}
     * @param runnerJar the private copy of the runner jar
     */
    public record PackagedJars(Path operatorJar, Path runnerJar) {}

    /**
     * Private copies of the packaged operator ({@code -Dinferencebench.operator.jar}, default
     * {@code operator/target/quarkus-app/quarkus-run.jar}) and runner jar ({@code
     * -Dinferencebench.runner.jar}, default {@code runner/target/inferencebench-runner.jar}) under
     * {@code copies}: a concurrent rebuild of either module must not change them mid-test.
     */
    public static PackagedJars privateJarCopies(Path repoRoot, Path copies) throws IOException {
        Path operatorJar =
                Path.of(
                        System.getProperty(
                                "inferencebench.operator.jar",
                                repoRoot.resolve("operator/target/quarkus-app/quarkus-run.jar")
                                        .toString()));
        Path runnerJar =
                Path.of(
                        System.getProperty(
                                "inferencebench.runner.jar",
                                repoRoot.resolve("runner/target/inferencebench-runner.jar")
                                        .toString()));
        if (!Files.exists(operatorJar)) {
            throw new IllegalStateException(
                    "no operator package at " + operatorJar + " (mvn -pl operator -am install)");
        }
        if (!Files.exists(runnerJar)) {
            throw new IllegalStateException(
                    "no runner jar at " + runnerJar + " (mvn -pl runner -am install)");
        }
        copyTree(operatorJar.getParent(), copies.resolve("quarkus-app"));
        Path runnerCopy = copies.resolve("inferencebench-runner.jar");
        Files.copy(runnerJar, runnerCopy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        return new PackagedJars(
                copies.resolve("quarkus-app").resolve(operatorJar.getFileName()), runnerCopy);
    }

    public static void copyTree(Path from, Path to) throws IOException {
        try (var paths = Files.walk(from)) {
            for (Path source : paths.toList()) {
                Path target = to.resolve(from.relativize(source).toString());
                if (Files.isDirectory(source)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(source, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    public static Path findRepoRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("config/rbac/runner"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException(
                    "no config/rbac/runner above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }
}
