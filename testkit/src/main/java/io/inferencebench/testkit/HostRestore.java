package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * What a real node changes on the host besides its own directory, recorded there when it starts and
 * put back at teardown, also by the next start after a crash: kubelet's sysctls, the iptables rules
 * and chains kubelet adds, kube-proxy's nft tables, the fixed paths and directories the parts
 * create, container log links. Only what the node added goes; what other programs changed meanwhile
 * stays.
 */
final class HostRestore {

    private static final Path RUN_CONTAINERD = Path.of("/run/containerd");
    private static final Path CONTAINER_LOGS = Path.of("/var/log/containers");

    /**
     * Fixed host paths the parts use whatever their configured roots: kubelet's device-plugin
     * socket ({@code /var/lib/kubelet/device-plugins}), libcni's result cache ({@code
     * /var/lib/cni}). Removed at teardown when the node created them (recorded at start).
     */
    static final List<Path> FIXED_PATHS =
            List.of(Path.of("/var/lib/kubelet"), Path.of("/var/lib/cni"));

    private static final String CNI_NETWORK = "ib-node";

    private HostRestore() {}

    /** Records, in the node directory {@code dir}, what the host looks like before the node. */
    static void record(Path dir) {
        try {
            Properties sysctls = new Properties();
            for (String name : HostState.KUBELET_SYSCTLS) {
                String v = HostState.sysctl(name);
                if (v != null) {
                    sysctls.setProperty(name, v);
                }
            }
            try (var out = Files.newOutputStream(dir.resolve("sysctls.before"))) {
                sysctls.store(out, "sysctls before the node started; restored at teardown");
            }
            Files.write(dir.resolve("nft-tables.before"), HostState.lines("nft", "list", "tables"));
            for (String cmd : List.of("iptables", "ip6tables")) {
                for (String table : HostState.IPTABLES_TABLES) {
                    Files.write(
                            dir.resolve(cmd + "-" + table + ".before"),
                            HostState.lines(cmd, "-t", table, "-S"));
                }
            }
            if (!Files.exists(RUN_CONTAINERD)) {
                Files.createDirectories(RUN_CONTAINERD);
                Files.writeString(dir.resolve("created-run-containerd"), "");
            }
            if (!Files.exists(CONTAINER_LOGS)) {
                Files.writeString(dir.resolve("created-var-log-containers"), "");
            }
            List<String> absent = new ArrayList<>();
            for (Path p : FIXED_PATHS) {
                if (!Files.exists(p)) {
                    absent.add(p.toString());
                }
            }
            Files.write(dir.resolve("absent-paths.before"), absent);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Puts back what {@link #record} saw, once the node's processes are gone. */
    static void restore(Path dir) {
        removeContainerLogLinks(dir);
        restoreSysctls(dir);
        removeIptablesRules(dir);
        removeNftTables(dir);
        if (Files.exists(dir.resolve("created-run-containerd"))) {
            // only what is empty: another containerd may have its shim sockets here
            Command.run(
                    List.of(
                            "sh",
                            "-c",
                            "rmdir "
                                    + RUN_CONTAINERD
                                    + "/s "
                                    + RUN_CONTAINERD
                                    + " 2>/dev/null; true"),
                    Duration.ofSeconds(5));
        }
        removeCreatedPaths(dir);
        if (Files.exists(dir.resolve("created-var-log-containers"))) {
            Command.run(
                    List.of("sh", "-c", "rmdir " + CONTAINER_LOGS + " 2>/dev/null; true"),
                    Duration.ofSeconds(5));
        }
    }

    /**
     * Removes the fixed paths that did not exist before the node started. Where they did exist
     * (e.g. the host runs a kubelet of its own), only this node's CNI result cache entries go.
     */
    private static void removeCreatedPaths(Path dir) {
        Path file = dir.resolve("absent-paths.before");
        try {
            List<String> absent = Files.exists(file) ? Files.readAllLines(file) : List.of();
            for (Path p : FIXED_PATHS) {
                if (absent.contains(p.toString())) {
                    if (HostState.mounts().stream().noneMatch(m -> m.startsWith(p.toString()))) {
                        Command.run(
                                List.of("rm", "-rf", "--one-file-system", p.toString()),
                                Duration.ofSeconds(30));
                    }
                }
            }
            Path results = Path.of("/var/lib/cni/results");
            if (Files.isDirectory(results)) {
                try (Stream<Path> entries = Files.list(results)) {
                    for (Path r : entries.toList()) {
                        if (r.getFileName().toString().startsWith(CNI_NETWORK + "-")) {
                            Files.deleteIfExists(r);
                        }
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("[real-node] removing fixed paths: " + e);
        }
    }

    private static void removeContainerLogLinks(Path dir) {
        if (!Files.isDirectory(CONTAINER_LOGS)) {
            return;
        }
        try (Stream<Path> links = Files.list(CONTAINER_LOGS)) {
            for (Path link : links.filter(Files::isSymbolicLink).toList()) {
                if (Files.readSymbolicLink(link).toString().startsWith(dir.toString())) {
                    Files.deleteIfExists(link);
                }
            }
        } catch (IOException e) {
            System.err.println("[real-node] cleaning " + CONTAINER_LOGS + ": " + e);
        }
    }

    private static void restoreSysctls(Path dir) {
        Path file = dir.resolve("sysctls.before");
        if (!Files.exists(file)) {
            return;
        }
        Properties before = new Properties();
        try (var in = Files.newInputStream(file)) {
            before.load(in);
        } catch (IOException e) {
            System.err.println("[real-node] reading " + file + ": " + e);
            return;
        }
        for (String name : before.stringPropertyNames()) {
            String want = before.getProperty(name);
            if (!want.equals(HostState.sysctl(name))) {
                try {
                    Files.writeString(HostState.sysctlPath(name), want);
                } catch (IOException e) {
                    System.err.println(
                            "[real-node] cannot restore " + name + "=" + want + ": " + e);
                }
            }
        }
    }

    private static void removeNftTables(Path dir) {
        Path file = dir.resolve("nft-tables.before");
        if (!Files.exists(file)) {
            return;
        }
        try {
            List<String> before = Files.readAllLines(file);
            for (String table : HostState.lines("nft", "list", "tables")) {
                // only new tables: kube-proxy's, and the iptables-nft tables (ip/ip6 filter, nat,
                // mangle) that kubelet's iptables calls created, once no rule is left in them
                if (table.isBlank() || before.contains(table)) {
                    continue;
                }
                List<String> words = List.of(table.strip().split("\\s+"));
                boolean iptablesTable =
                        words.size() == 3
                                && List.of("ip", "ip6").contains(words.get(1))
                                && List.of("filter", "nat", "mangle").contains(words.get(2));
                if (table.contains("kube-proxy")
                        || (iptablesTable && noRules(words.get(1), words.get(2)))) {
                    List<String> argv = new ArrayList<>(List.of("nft", "delete"));
                    argv.addAll(words);
                    Command.run(argv, Duration.ofSeconds(10));
                }
            }
        } catch (IOException e) {
            System.err.println("[real-node] nft cleanup: " + e);
        }
    }

    /** Whether an nft table holds nothing but (base) chains without rules. */
    static boolean noRules(String family, String table) {
        return HostState.lines("nft", "list", "table", family, table).stream()
                .map(String::strip)
                .allMatch(
                        l ->
                                l.isEmpty()
                                        || l.startsWith("table ")
                                        || l.startsWith("chain ")
                                        || l.equals("}")
                                        || (l.startsWith("type ") && l.endsWith("policy accept;")));
    }

    /**
     * Removes the KUBE-* iptables rules and chains that appeared since the node started (kubelet's
     * KUBE-FIREWALL and KUBE-KUBELET-CANARY, and the jumps to them): rules first, then the chains.
     */
    private static void removeIptablesRules(Path dir) {
        for (String cmd : List.of("iptables", "ip6tables")) {
            for (String table : HostState.IPTABLES_TABLES) {
                Path file = dir.resolve(cmd + "-" + table + ".before");
                if (!Files.exists(file)) {
                    continue;
                }
                try {
                    List<String> before = Files.readAllLines(file);
                    List<String> now = HostState.lines(cmd, "-t", table, "-S");
                    List<String> newChains = new ArrayList<>();
                    for (String rule : now) {
                        // only kubelet's (KUBE-*): rules other programs add meanwhile stay
                        if (rule.isBlank() || before.contains(rule) || !rule.contains("KUBE-")) {
                            continue;
                        }
                        if (rule.startsWith("-A ")) {
                            List<String> argv = new ArrayList<>(List.of(cmd, "-t", table, "-D"));
                            argv.addAll(splitRule(rule.substring(3)));
                            Command.run(argv, Duration.ofSeconds(10));
                        } else if (rule.startsWith("-N ")) {
                            newChains.add(rule.substring(3).strip());
                        }
                    }
                    for (String chain : newChains) {
                        Command.run(List.of(cmd, "-t", table, "-F", chain), Duration.ofSeconds(10));
                        Command.run(List.of(cmd, "-t", table, "-X", chain), Duration.ofSeconds(10));
                    }
                } catch (IOException e) {
                    System.err.println("[real-node] iptables cleanup: " + e);
                }
            }
        }
    }

    /** Splits an {@code iptables -S} rule into arguments, keeping double-quoted words whole. */
    static List<String> splitRule(String rule) {
        List<String> out = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean quoted = false;
        for (char ch : rule.toCharArray()) {
            if (ch == '"') {
                quoted = !quoted;
            } else if (ch == ' ' && !quoted) {
                if (!word.isEmpty()) {
                    out.add(word.toString());
                    word.setLength(0);
                }
            } else {
                word.append(ch);
            }
        }
        if (!word.isEmpty()) {
            out.add(word.toString());
        }
        return out;
    }
}
