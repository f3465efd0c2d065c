package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The host-wide state a real node can change, as sorted text lines per section, so that a test can
 * compare a listing taken before a cluster started with one taken after it stopped: the sysctls
 * kubelet and kube-proxy write, nft tables, iptables/ip6tables rules of the filter, nat and mangle
 * tables, and the links, network namespaces and mounts of the kinds a node creates (CNI veths and
 * bridges, {@code cni-*} namespaces, mounts under the node's directory, {@code /run/containerd} and
 * kubelet paths), and which of the fixed paths kubelet, containerd and CNI use exist. Links,
 * namespaces and mounts of other programs on the machine are left out: they may come and go while a
 * test runs.
 */
public final class HostState {

    /**
     * What kubelet's setupKernelTunables writes: a real node restores these at teardown ({@link
     * HostRestore}). The other sysctls of {@link #SYSCTLS} are only compared by tests (nothing of
     * the node writes them; restoring them could undo another program's change).
     */
    static final List<String> KUBELET_SYSCTLS =
            List.of(
                    "vm.overcommit_memory",
                    "vm.panic_on_oom",
                    "kernel.panic",
                    "kernel.panic_on_oops",
                    "kernel.keys.root_maxkeys",
                    "kernel.keys.root_maxbytes");

    /** Sysctls kubelet (setupKernelTunables), kube-proxy or a CNI plugin may write. */
    public static final List<String> SYSCTLS =
            Stream.concat(
                            KUBELET_SYSCTLS.stream(),
                            Stream.of(
                                    "net.ipv4.ip_forward",
                                    "net.ipv4.conf.all.forwarding",
                                    "net.ipv4.conf.all.route_localnet",
                                    "net.ipv6.conf.all.forwarding",
                                    "net.bridge.bridge-nf-call-iptables",
                                    "net.netfilter.nf_conntrack_max"))
                    .toList();

    static final List<String> IPTABLES_TABLES = List.of("filter", "nat", "mangle");

    private HostState() {}

    /** Reads a sysctl, or null when this kernel does not have it. */
    public static String sysctl(String name) {
        Path file = sysctlPath(name);
        if (!Files.exists(file)) {
            return null;
        }
        // Not Files.readString: it trusts the size procfs reports and returned "1" for 1000000
        // on this kernel; a stream reads to the end.
        try (var in = Files.newInputStream(file)) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return null;
        }
    }

    static Path sysctlPath(String name) {
        return Path.of("/proc/sys", name.replace('.', '/'));
    }

    /** Sections of host state, each a sorted list of lines; {@code nodeDir} filters the mounts. */
    public static Map<String, List<String>> capture(Path nodeDir) {
        Map<String, List<String>> state = new LinkedHashMap<>();
        List<String> sysctls = new ArrayList<>();
        for (String name : SYSCTLS) {
            String value = sysctl(name);
            if (value != null) {
                sysctls.add(name + " = " + value);
            }
        }
        state.put("sysctls", sysctls);
        state.put(
                "links",
                lines("ip", "-o", "link", "show").stream()
                        .map(l -> l.split(":\\s+")[1].split("@")[0])
                        .filter(
                                n ->
                                        n.startsWith("veth")
                                                || n.startsWith("cni")
                                                || n.startsWith("kube")
                                                || n.startsWith("flannel"))
                        .sorted()
                        .toList());
        state.put(
                "netns",
                lines("ip", "netns", "list").stream()
                        .map(l -> l.split("\\s+")[0])
                        .filter(n -> n.startsWith("cni-"))
                        .sorted()
                        .toList());
        // A tool the node's provisioning installs may be missing before the first node starts:
        // without it there is nothing to compare with (an empty section would make its default
        // policies look like left-overs), so its sections are left out of this capture.
        if (onPath("nft")) {
            state.put("nft tables", sorted(lines("nft", "list", "tables")));
        }
        for (String cmd : List.of("iptables", "ip6tables")) {
            if (!onPath(cmd)) {
                continue;
            }
            for (String table : IPTABLES_TABLES) {
                state.put(cmd + " -t " + table, sorted(lines(cmd, "-t", table, "-S")));
            }
        }
        state.put(
                "paths",
                java.util.stream.Stream.of(
                                "/var/lib/kubelet",
                                "/var/lib/cni",
                                "/var/log/containers",
                                "/var/log/pods",
                                "/run/containerd",
                                "/etc/cni",
                                "/opt/cni")
                        .filter(p -> Files.exists(Path.of(p)))
                        .toList());
        state.put(
                "mounts",
                mounts().stream()
                        .filter(
                                m ->
                                        m.startsWith(nodeDir.toString())
                                                || m.startsWith("/run/containerd")
                                                || m.startsWith("/var/lib/kubelet")
                                                || m.startsWith("/var/lib/cni")
                                                || m.startsWith("/run/netns/cni-"))
                        .sorted()
                        .toList());
        return state;
    }

    static boolean onPath(String command) {
        String path = System.getenv("PATH");
        for (String dir : (path == null ? "/usr/sbin:/usr/bin:/sbin:/bin" : path).split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Human-readable differences between two captures (empty when equal); a section only {@code
     * after} has (a tool installed in between) is not compared.
     */
    public static List<String> differences(
            Map<String, List<String>> before, Map<String, List<String>> after) {
        List<String> diffs = new ArrayList<>();
        for (String section : before.keySet()) {
            List<String> b = before.get(section);
            List<String> a = after.getOrDefault(section, List.of());
            b.stream().filter(l -> !a.contains(l)).forEach(l -> diffs.add(section + ": - " + l));
            a.stream().filter(l -> !b.contains(l)).forEach(l -> diffs.add(section + ": + " + l));
        }
        return diffs;
    }

    static List<String> mounts() {
        try {
            return Files.readAllLines(Path.of("/proc/self/mounts")).stream()
                    .map(l -> l.split(" ")[1].replace("\\040", " "))
                    .toList();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static List<String> sorted(List<String> lines) {
        return lines.stream().filter(l -> !l.isBlank()).sorted().toList();
    }

    /** A command's output lines; empty when it fails or is missing. */
    static List<String> lines(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(false).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes());
            p.getErrorStream().transferTo(java.io.OutputStream.nullOutputStream());
            p.waitFor();
            return p.exitValue() == 0 ? List.of(out.split("\n")) : List.of();
        } catch (IOException e) {
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }
}
