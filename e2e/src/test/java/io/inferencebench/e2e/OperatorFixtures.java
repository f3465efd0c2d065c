package io.inferencebench.e2e;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.testkit.CustomResourceDefinitions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Cluster setup shared by the suites that run the packaged operator as a host process. */
public final class OperatorFixtures {

    private OperatorFixtures() {}

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
