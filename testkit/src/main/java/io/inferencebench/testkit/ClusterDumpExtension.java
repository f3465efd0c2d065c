package io.inferencebench.testkit;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * On test failure, dumps the state of the running local cluster (or API server) to stderr and to
 * {@code target/cluster-dumps/<class>.<method>.txt}: per non-system namespace the YAML of pods,
 * jobs, deployments, services, EndpointSlices and ConfigMaps, the namespace's events in time order,
 * every container log the local node kept, and the tail of each control-plane log.
 */
public final class ClusterDumpExtension implements TestWatcher {

    private static final Set<String> SYSTEM_NAMESPACES =
            Set.of("kube-system", "kube-public", "kube-node-lease");

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        String title =
                context.getRequiredTestClass().getSimpleName()
                        + "."
                        + context.getTestMethod().map(m -> m.getName()).orElse("class");
        String dump;
        try {
            dump = dump();
        } catch (RuntimeException e) {
            dump = "cluster dump failed: " + e;
        }
        String text = "===== cluster dump after failure of " + title + " =====\n" + dump;
        System.err.println(text);
        try {
            Path dir = Path.of("target", "cluster-dumps");
            Files.createDirectories(dir);
            Files.writeString(dir.resolve(title + ".txt"), text);
        } catch (IOException e) {
            // stderr has it
        }
    }

    /** A text dump of everything a failing test's reader needs. */
    public static String dump() {
        LocalControlPlane controlPlane = LocalControlPlane.sharedIfStarted();
        StringBuilder out = new StringBuilder();
        KubernetesClient client = controlPlane != null ? controlPlane.adminClient() : null;
        if (client == null) {
            return "(no local cluster running)\n";
        }
        for (Namespace ns : client.namespaces().list().getItems()) {
            String namespace = ns.getMetadata().getName();
            if (SYSTEM_NAMESPACES.contains(namespace)) {
                continue;
            }
            out.append("\n##### namespace ").append(namespace).append('\n');
            section(out, "pods", () -> client.pods().inNamespace(namespace).list().getItems());
            section(
                    out,
                    "jobs",
                    () -> client.batch().v1().jobs().inNamespace(namespace).list().getItems());
            section(
                    out,
                    "deployments",
                    () -> client.apps().deployments().inNamespace(namespace).list().getItems());
            section(
                    out,
                    "services",
                    () -> client.services().inNamespace(namespace).list().getItems());
            section(
                    out,
                    "endpointslices",
                    () ->
                            client.discovery()
                                    .v1()
                                    .endpointSlices()
                                    .inNamespace(namespace)
                                    .list()
                                    .getItems());
            section(
                    out,
                    "configmaps",
                    () ->
                            client.configMaps().inNamespace(namespace).list().getItems().stream()
                                    .filter(
                                            c ->
                                                    !c.getMetadata()
                                                            .getName()
                                                            .equals("kube-root-ca.crt"))
                                    .toList());
            out.append("--- events\n");
            try {
                List<Event> events = client.v1().events().inNamespace(namespace).list().getItems();
                events.stream()
                        .sorted(
                                Comparator.comparing(
                                        e ->
                                                Optional.ofNullable(e.getLastTimestamp())
                                                        .orElse(
                                                                Optional.ofNullable(
                                                                                e.getMetadata()
                                                                                        .getCreationTimestamp())
                                                                        .orElse(""))))
                        .forEach(
                                e ->
                                        out.append(
                                                String.format(
                                                        "%s %-7s %-20s %s/%s: %s%n",
                                                        e.getLastTimestamp(),
                                                        e.getType(),
                                                        e.getReason(),
                                                        e.getInvolvedObject().getKind(),
                                                        e.getInvolvedObject().getName(),
                                                        e.getMessage())));
            } catch (RuntimeException e) {
                out.append("(cannot list events: ").append(e.getMessage()).append(")\n");
            }
        }
        for (Map.Entry<String, Path> log : controlPlane.logFiles().entrySet()) {
            out.append("\n--- ")
                    .append(log.getKey())
                    .append(" log (tail)\n")
                    .append(ChildProcess.tail(log.getValue(), 40))
                    .append('\n');
        }
        return out.toString();
    }

    private static void section(
            StringBuilder out, String title, Supplier<List<? extends HasMetadata>> items) {
        try {
            List<? extends HasMetadata> list = items.get();
            out.append("--- ").append(title).append(" (").append(list.size()).append(")\n");
            for (HasMetadata item : list) {
                item.getMetadata().setManagedFields(null);
                out.append(Serialization.asYaml(item));
            }
        } catch (RuntimeException e) {
            out.append("--- ")
                    .append(title)
                    .append(": cannot list: ")
                    .append(e.getMessage())
                    .append('\n');
        }
    }
}
