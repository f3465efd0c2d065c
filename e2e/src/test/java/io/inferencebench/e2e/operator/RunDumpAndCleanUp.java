package io.inferencebench.e2e.operator;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * For the operator scenarios: on failure, the BenchmarkRuns' YAML of the test's namespaces and the
 * operator's log (the generic cluster dump has pods, events and container logs); on success, the
 * test's namespaces are deleted so their pods stop competing for CPU with later tests.
 */
final class RunDumpAndCleanUp implements BeforeEachCallback, TestWatcher {

    private final String suite;
    private final Supplier<KubernetesClient> client;
    private final Supplier<OperatorProcess> operator;
    private final List<String> namespacesOfCurrentTest = new CopyOnWriteArrayList<>();

    /**
     * @param suite test class name, prefixed to the dump file names
     * @param client the cluster client, once the suite has started the cluster
     * @param operator the running operator, or {@code null}
     */
    RunDumpAndCleanUp(
            String suite, Supplier<KubernetesClient> client, Supplier<OperatorProcess> operator) {
        this.suite = suite;
        this.client = client;
        this.operator = operator;
    }

    /** Marks a namespace as belonging to the current test. */
    void track(String namespace) {
        namespacesOfCurrentTest.add(namespace);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        namespacesOfCurrentTest.clear();
    }

    @Override
    public void testSuccessful(ExtensionContext context) {
        for (String ns : namespacesOfCurrentTest) {
            client.get().namespaces().withName(ns).delete();
        }
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        StringBuilder out = new StringBuilder();
        for (String ns : namespacesOfCurrentTest) {
            out.append("##### BenchmarkRuns in ").append(ns).append('\n');
            try {
                for (BenchmarkRun run :
                        client.get()
                                .resources(BenchmarkRun.class)
                                .inNamespace(ns)
                                .list()
                                .getItems()) {
                    out.append(client.get().getKubernetesSerialization().asYaml(run)).append('\n');
                }
            } catch (RuntimeException e) {
                out.append("(cannot list: ").append(e).append(")\n");
            }
        }
        OperatorProcess running = operator.get();
        String log = running == null ? "(no operator)" : running.log();
        out.append("##### operator log (tail)\n")
                .append(log.substring(Math.max(0, log.length() - 30_000)));
        System.err.println(out);
        try {
            Path dir = Path.of("target", "cluster-dumps");
            Files.createDirectories(dir);
            Files.writeString(
                    dir.resolve(
                            suite
                                    + "."
                                    + context.getTestMethod().map(m -> m.getName()).orElse("")
                                    + ".operator.txt"),
                    out);
        } catch (IOException e) {
            // stderr has it
        }
    }
}
