package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The cgroups of a real node's pods: the driver the host wants, the root of their own that kubelet
 * gets under cgroupfs, and, at teardown, what still runs there killed and the root removed.
 */
final class NodeCgroups {

    /** The cgroup root of the node's pods (cgroupfs driver), in every hierarchy. */
    static final String ROOT = "inferencebench-node";

    private NodeCgroups() {}

    static boolean cgroupV2() {
        return Files.exists(Path.of("/sys/fs/cgroup/cgroup.controllers"));
    }

    static boolean systemdIsInit() {
        try {
            return "systemd".equals(readPseudoFile(Path.of("/proc/1/comm")).strip());
        } catch (IOException e) {
            return false;
        }
    }

    /** systemd where systemd manages cgroup v2 (a usual developer host), else cgroupfs. */
    static String detectCgroupDriver() {
        return cgroupV2() && systemdIsInit() ? "systemd" : "cgroupfs";
    }

    /** Reads a procfs/cgroupfs file to its end (Files.readString trusts a size they misreport). */
    static String readPseudoFile(Path file) throws IOException {
        try (var in = Files.newInputStream(file)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** kubelet wants its cgroup root to exist in every hierarchy (cpuset: with cpus and mems). */
    static void createRoot() throws IOException {
        Path fs = Path.of("/sys/fs/cgroup");
        if (cgroupV2()) {
            Path root = Files.createDirectories(fs.resolve(ROOT));
            String controllers = readPseudoFile(fs.resolve("cgroup.subtree_control")).strip();
            for (String c : controllers.split("\\s+")) {
                if (!c.isBlank()) {
                    try {
                        Files.writeString(root.resolve("cgroup.subtree_control"), "+" + c);
                    } catch (IOException e) {
                        // a controller that cannot be delegated here; kubelet reports what it needs
                    }
                }
            }
            return;
        }
        try (Stream<Path> hierarchies = Files.list(fs)) {
            for (Path h : hierarchies.toList()) {
                String name = h.getFileName().toString();
                // every hierarchy, named ones (systemd) included: kubelet checks them all
                if (Files.isSymbolicLink(h) || !Files.isDirectory(h)) {
                    continue;
                }
                Path root = h.resolve(ROOT);
                Files.createDirectories(root);
                if (name.equals("cpuset")) {
                    for (String f : List.of("cpuset.cpus", "cpuset.mems")) {
                        if (readPseudoFile(root.resolve(f)).isBlank()) {
                            Files.writeString(
                                    root.resolve(f), readPseudoFile(h.resolve(f)).strip());
                        }
                    }
                }
            }
        }
    }

    private static List<Path> dirs() {
        List<Path> dirs = new ArrayList<>();
        Path v2 = Path.of("/sys/fs/cgroup", ROOT);
        if (Files.isDirectory(v2)) {
            dirs.add(v2);
        }
        try (Stream<Path> controllers = Files.list(Path.of("/sys/fs/cgroup"))) {
            controllers
                    .map(c -> c.resolve(ROOT))
                    .filter(Files::isDirectory)
                    .filter(d -> !d.equals(v2))
                    .forEach(dirs::add);
        } catch (IOException e) {
            // no cgroup fs
        }
        return dirs;
    }

    /** Kills what still runs in the pods' cgroups (a crashed run's containers). */
    static void killProcesses() {
        for (Path root : dirs()) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path procs :
                        files.filter(f -> f.getFileName().toString().equals("cgroup.procs"))
                                .toList()) {
                    for (String pid : Files.readAllLines(procs)) {
                        if (!pid.isBlank()) {
                            Command.run(
                                    List.of("kill", "-KILL", pid.strip()), Duration.ofSeconds(5));
                        }
                    }
                }
            } catch (IOException | UncheckedIOException e) {
                // raced with removal
            }
        }
    }

    static void remove() {
        for (Path root : dirs()) {
            for (int attempt = 0; attempt < 20 && Files.exists(root); attempt++) {
                Command.run(
                        List.of(
                                "find",
                                root.toString(),
                                "-depth",
                                "-type",
                                "d",
                                "-exec",
                                "rmdir",
                                "{}",
                                ";"),
                        Duration.ofSeconds(10));
                if (Files.exists(root)) {
                    LocalControlPlane.sleep(250);
                }
            }
        }
    }
}
