package io.inferencebench.runner.pod;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

/**
 * Maps a container path (a volume mount such as {@code /etc/inferencebench/workorder}) to the file
 * system path the process really sees. In a real pod they are the same. The project's local node
 * runs containers as plain processes and re-roots every mount under {@code IB_VOLUME_ROOT}, and
 * names each mount's real location in {@code IB_MOUNT_<PATH>}; paths are translated the same way
 * here so the runner works unchanged on both.
 */
public final class VolumePaths {

    /** Root under which the local node re-roots volume mounts. */
    public static final String VOLUME_ROOT_ENV = "IB_VOLUME_ROOT";

    /** Prefix of the per-mount variables of the local node. */
    public static final String MOUNT_ENV_PREFIX = "IB_MOUNT_";

    private final Map<String, String> env;

    public VolumePaths(Map<String, String> env) {
        this.env = Map.copyOf(env);
    }

    /** Paths as the current process environment maps them. */
    public static VolumePaths fromEnvironment() {
        return new VolumePaths(System.getenv());
    }

    /**
     * The real path of a container path: the longest {@code IB_MOUNT_*} mount containing it, else
     * the path re-rooted under {@code IB_VOLUME_ROOT} when that exists, else the path unchanged.
     *
     * @param containerPath an absolute path as written in the pod spec
     * @return the path to open
     */
    public Path resolve(String containerPath) {
        if (!containerPath.startsWith("/")) {
            return Path.of(containerPath);
        }
        String prefix = containerPath;
        while (!prefix.isEmpty()) {
            String mounted = env.get(mountEnvName(prefix));
            if (mounted != null && !mounted.isBlank()) {
                String rest = containerPath.substring(prefix.length()).replaceFirst("^/+", "");
                return rest.isEmpty() ? Path.of(mounted) : Path.of(mounted).resolve(rest);
            }
            int slash = prefix.lastIndexOf('/');
            prefix = slash <= 0 ? "" : prefix.substring(0, slash);
        }
        String root = env.get(VOLUME_ROOT_ENV);
        if (root != null && !root.isBlank()) {
            Path rerooted = Path.of(root).resolve(containerPath.replaceFirst("^/+", ""));
            if (Files.exists(rerooted) || !Files.exists(Path.of(containerPath))) {
                return rerooted;
            }
        }
        return Path.of(containerPath);
    }

    /**
     * The local node's variable for a mount path: upper-cased, every run of other characters than
     * letters and digits replaced by {@code _}, no leading or trailing {@code _}.
     *
     * @param mountPath e.g. {@code /etc/config}
     * @return e.g. {@code IB_MOUNT_ETC_CONFIG}
     */
    static String mountEnvName(String mountPath) {
        String upper = mountPath.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]+", "_");
        return MOUNT_ENV_PREFIX + upper.replaceAll("^_+|_+$", "");
    }
}
