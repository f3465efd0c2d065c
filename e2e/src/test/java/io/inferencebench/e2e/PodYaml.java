package io.inferencebench.e2e;

/**
 * YAML the test manifests share: the restricted Pod Security Standard's settings (what the
 * project's namespaces enforce, so every pod a test starts must carry them) and the head of a
 * one-replica Deployment. The settings are one flow-style line each, so that they stand at any
 * indentation of a text block.
 */
public final class PodYaml {

    /** A pod's {@code securityContext} under the restricted standard. */
    public static final String RESTRICTED_POD_SECURITY =
            "securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}";

    /**
     * A container's {@code securityContext} under the restricted standard, root file system
     * read-only.
     */
    public static final String RESTRICTED_CONTAINER_SECURITY =
            "securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true,"
                    + " capabilities: {drop: [ALL]}}";

    private PodYaml() {}

    /**
     * Deployment {@code app} in {@code namespace}: one replica of the pods labelled {@code
     * app=<app>} whose spec is {@code podSpec} (YAML at indentation 0).
     */
    public static String deployment(String namespace, String app, String podSpec) {
        return """
                apiVersion: apps/v1
                kind: Deployment
                metadata: {name: %1$s, namespace: %2$s}
                spec:
                  replicas: 1
                  selector: {matchLabels: {app: %1$s}}
                  template:
                    metadata: {labels: {app: %1$s}}
                    spec:
                """
                        .formatted(app, namespace)
                + podSpec.indent(6);
    }

    /**
     * Service {@code app} in {@code namespace}: port {@code port} named {@code http} to the port
     * named {@code http} of the pods labelled {@code app=<app>}.
     */
    public static String service(String namespace, String app, int port) {
        return """
                apiVersion: v1
                kind: Service
                metadata: {name: %1$s, namespace: %2$s}
                spec:
                  selector: {app: %1$s}
                  ports: [{name: http, port: %3$d, targetPort: http}]
                """
                .formatted(app, namespace, port);
    }
}
