package io.inferencebench.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Locates the control-plane binaries (etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler, kubectl) in the kube-api-test cache layout {@code
 * ~/.kubeapitest/k8s/<version>-linux-amd64/}.
 *
 * <p>Order: env {@code IB_K8S_BIN_DIR}; else {@code e2e/scripts/provision-k8s.sh} (found by walking
 * up from the working directory; a cache hit is instant, otherwise it builds); else the default
 * cache directory when complete.
 */
public final class K8sBinaries {

    public static final String DEFAULT_VERSION = "1.34.4";

    private static volatile Path cached;

    private K8sBinaries() {}

    public static synchronized Path directory() {
        if (cached != null) {
            return cached;
        }
        String env = System.getenv("IB_K8S_BIN_DIR");
        Path dir;
        if (env != null && !env.isBlank()) {
            dir = Path.of(env);
        } else {
            Path script = ProjectScripts.find("e2e/scripts/provision-k8s.sh");
            dir =
                    script != null
                            ? ProjectScripts.provision(script, Duration.ofMinutes(90))
                            : defaultDirectory();
        }
        for (String binary :
                new String[] {
                    "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"
                }) {
            if (!Files.isExecutable(dir.resolve(binary))) {
                throw new IllegalStateException(
                        "missing "
                                + binary
                                + " in "
                                + dir
                                + "; run e2e/scripts/provision-k8s.sh or set IB_K8S_BIN_DIR");
            }
        }
        cached = dir;
        return dir;
    }

    public static Path binary(String name) {
        return directory().resolve(name);
    }

    /** The Kubernetes version encoded in the directory name, e.g. {@code 1.34.4}. */
    public static String version() {
        String name = directory().getFileName().toString();
        int dash = name.indexOf('-');
        return dash > 0 ? name.substring(0, dash) : DEFAULT_VERSION;
    }

    static Path defaultDirectory() {
        return cacheRoot().resolve("k8s").resolve(DEFAULT_VERSION + "-linux-amd64");
    }

    /**
     * The kube-api-test cache root exactly as {@code e2e/scripts/provision-k8s.sh} computes it:
     * {@code IB_KUBEAPITEST_DIR}, else {@code $HOME/.kubeapitest}. The JVM's {@code user.home}
     * comes from the password database, not from {@code $HOME}; where the two differ (a CI user
     * with HOME pointing elsewhere) the tests looked in another directory than the script wrote.
     */
    public static Path cacheRoot() {
        String dir = System.getenv("IB_KUBEAPITEST_DIR");
        if (dir != null && !dir.isBlank()) {
            return Path.of(dir);
        }
        String home = System.getenv("HOME");
        return Path.of(home != null && !home.isBlank() ? home : System.getProperty("user.home"))
                .resolve(".kubeapitest");
    }
}
