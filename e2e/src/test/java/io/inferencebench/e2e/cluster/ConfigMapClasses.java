package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.e2e.PodYaml;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A class of this test tree run in a pod by the runner image's JVM ({@code java -cp}), its class
 * files (its nested classes' too) laid out from a ConfigMap: how a scenario puts a probe or a proxy
 * of its own in the cluster without an image of its own. The container and the volume come as
 * flow-style YAML, to stand in a pod spec's {@code containers: [...]} and {@code volumes: [...]}.
 */
final class ConfigMapClasses {

    private final Class<?> main;
    private final String configMap;
    private final String dir;
    private final String items;

    private ConfigMapClasses(Class<?> main, String configMap, String dir, String items) {
        this.main = main;
        this.configMap = configMap;
        this.dir = dir;
        this.items = items;
    }

    /**
     * Applies ConfigMap {@code configMap} in {@code ns} holding {@code main}'s class files as
     * binaryData; the pod's volume lays them out as a class path directory at {@code dir}.
     */
    static ConfigMapClasses create(
            KubernetesClient client, String ns, String configMap, Class<?> main, String dir)
            throws IOException {
        Path classes = Path.of(main.getProtectionDomain().getCodeSource().getLocation().getPath());
        String pkg = main.getPackageName().replace('.', '/');
        String simple = main.getSimpleName();
        Pattern ownFile = Pattern.compile(Pattern.quote(simple) + "(\\$.*)?\\.class");
        Map<String, String> binary = new TreeMap<>();
        List<String> items = new ArrayList<>();
        try (Stream<Path> files = Files.list(classes.resolve(pkg))) {
            for (Path f :
                    files.filter(f -> ownFile.matcher(f.getFileName().toString()).matches())
                            .toList()) {
                String file = f.getFileName().toString();
                String key = file.replace('$', '_');
                binary.put(key, Base64.getEncoder().encodeToString(Files.readAllBytes(f)));
                items.add("{key: \"" + key + "\", path: \"" + pkg + '/' + file + "\"}");
            }
        }
        assertThat(binary).containsKey(simple + ".class");
        StringBuilder data = new StringBuilder();
        binary.forEach((k, v) -> data.append("\n  ").append(k).append(": ").append(v));
        client.resource(
                        """
                        apiVersion: v1
                        kind: ConfigMap
                        metadata: {name: %s, namespace: %s}
                        binaryData:%s
                        """
                                .formatted(configMap, ns, data))
                .serverSideApply();
        return new ConfigMapClasses(main, configMap, dir, String.join(", ", items));
    }

    /**
     * Container {@code name} of {@code image} running the class with {@code args}: a small JVM (64
     * MiB of heap) under the restricted standard; {@code extraFields} are further fields of the
     * container (flow style, each followed by a comma), or empty.
     */
    String container(String name, String image, String extraFields, String... args) {
        List<String> command =
                new ArrayList<>(
                        List.of("java", "-XX:+UseSerialGC", "-Xmx64m", "-cp", dir, main.getName()));
        command.addAll(List.of(args));
        return "{name: %s, image: \"%s\", imagePullPolicy: Never, command: [%s], %s"
                        .formatted(name, image, String.join(", ", command), extraFields)
                + "resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 256Mi}}, "
                + PodYaml.RESTRICTED_CONTAINER_SECURITY
                + ", volumeMounts: [{name: classes, mountPath: %s}]}".formatted(dir);
    }

    /** The pod's volume {@code classes} that lays the ConfigMap out as the class path. */
    String volume() {
        return "{name: classes, configMap: {name: %s, items: [%s]}}".formatted(configMap, items);
    }
}
