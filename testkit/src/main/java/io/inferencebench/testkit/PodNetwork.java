package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * The pod network of a local cluster: a Linux bridge {@code ibbr<k>} holding the gateway address
 * {@code <prefix>.<k>.1/24} (the node's and the API server's address), and one network namespace
 * per pod ({@code ib<k>p<n>}) joined to the bridge by a veth pair, with the pod's address {@code
 * <prefix>.<k>.<n>} on its {@code eth0} and its own {@code lo}.
 *
 * <p>Why not 127.x loopback addresses: the API server's EndpointSlice and Endpoints validation
 * refuses loopback addresses, so Services could never get endpoints. Nothing is added to the host
 * network except the bridge and its gateway address; the subnet index k is claimed atomically by
 * creating the bridge, and bridges left behind by dead JVMs are reclaimed.
 *
 * <p>Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and the {@code ip} tool. The prefix defaults to
 * {@code 10.213} (override: env {@code IB_POD_NET_PREFIX}).
 */
public final class PodNetwork implements AutoCloseable {

    private static final Path STATE_DIR = Path.of("/run/inferencebench-net");

    private final String prefix;
    private final int index;
    private final String bridge;
    private final BitSet used = new BitSet(256);
    private boolean closed;

    /** One pod's network namespace and address. */
    public record Sandbox(String namespace, String ip, String hostVeth) {
        /** Prefix that runs a command inside the sandbox. */
        public List<String> execPrefix() {
            return namespace == null ? List.of() : List.of("ip", "netns", "exec", namespace);
        }
    }

    private PodNetwork(String prefix, int index) {
        this.prefix = prefix;
        this.index = index;
        this.bridge = "ibbr" + index;
        used.set(0);
        used.set(1);
        used.set(255);
    }

    public static PodNetwork create() {
        String prefix = System.getenv().getOrDefault("IB_POD_NET_PREFIX", "10.213");
        String routes = ChildProcess.run(List.of("ip", "-4", "route", "show"));
        for (int k = 1; k < 255; k++) {
            String subnet = prefix + "." + k + ".";
            if (routes.contains(subnet)) {
                if (reclaimIfStale(k)) {
                    routes = ChildProcess.run(List.of("ip", "-4", "route", "show"));
                } else {
                    continue;
                }
            }
            if (routes.contains(subnet)) {
                continue;
            }
            try {
                ChildProcess.run(List.of("ip", "link", "add", "ibbr" + k, "type", "bridge"));
            } catch (IllegalStateException taken) {
                if (!String.valueOf(taken.getMessage()).contains("File exists")) {
                    throw new IllegalStateException(
                            "cannot create the pod network bridge (the local node needs root:"
                                    + " CAP_NET_ADMIN and CAP_SYS_ADMIN for network namespaces)",
                            taken);
                }
                if (!reclaimIfStale(k)) {
                    continue;
                }
                try {
                    ChildProcess.run(List.of("ip", "link", "add", "ibbr" + k, "type", "bridge"));
                } catch (IllegalStateException stillTaken) {
                    continue;
                }
            }
            PodNetwork network = new PodNetwork(prefix, k);
            network.recordOwner();
            ChildProcess.run(
                    List.of("ip", "addr", "add", network.gateway() + "/24", "dev", "ibbr" + k));
            ChildProcess.run(List.of("ip", "link", "set", "ibbr" + k, "up"));
            return network;
        }
        throw new IllegalStateException("no free pod subnet under " + prefix + ".0.0/16");
    }

    /** The host side address: node InternalIP, API server bind address, pods' default gateway. */
    public String gateway() {
        return prefix + "." + index + ".1";
    }

    /**
     * This cluster's Service ClusterIP range. One /24 per network so that several clusters on one
     * machine never share a ClusterIP (their proxies bind them as local addresses).
     */
    public String serviceCidr() {
        return servicePrefix() + ".0/24";
    }

    public String serviceIp(int host) {
        return servicePrefix() + "." + host;
    }

    private String servicePrefix() {
        return System.getenv().getOrDefault("IB_SERVICE_NET_PREFIX", "10.96") + "." + index;
    }

    /** Makes a ClusterIP a local address (on the bridge) so the service proxy can bind it. */
    public void addServiceAddress(String ip) {
        ChildProcess.runQuietly("ip", "addr", "add", ip + "/32", "dev", bridge);
    }

    public void removeServiceAddress(String ip) {
        ChildProcess.runQuietly("ip", "addr", "del", ip + "/32", "dev", bridge);
    }

    /** Shell commands that remove this network and kill everything in its pod namespaces. */
    String cleanupScript() {
        return "for ns in $(ip netns list | awk '{print $1}' | grep '^ib"
                + index
                + "p'); do ip netns pids $ns | xargs -r kill -KILL; ip netns del $ns; done; ip link del "
                + bridge
                + "; rm -f "
                + STATE_DIR.resolve(index + ".owner");
    }

    /** The bridge device that holds the gateway address. */
    public String bridge() {
        return bridge;
    }

    public String cidr() {
        return prefix + "." + index + ".0/24";
    }

    public synchronized Sandbox allocate() {
        int n = used.nextClearBit(2);
        if (n >= 255) {
            throw new IllegalStateException("pod subnet " + cidr() + " is full");
        }
        used.set(n);
        String ns = "ib" + index + "p" + n;
        String veth = "ib" + index + "v" + n;
        String ip = prefix + "." + index + "." + n;
        try {
            ChildProcess.runQuietly("ip", "netns", "del", ns);
            ChildProcess.run(List.of("ip", "netns", "add", ns));
            ChildProcess.run(
                    List.of(
                            "ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0",
                            "netns", ns));
            ChildProcess.run(List.of("ip", "link", "set", veth, "master", bridge, "up"));
            ChildProcess.run(List.of("ip", "-n", ns, "addr", "add", ip + "/24", "dev", "eth0"));
            ChildProcess.run(List.of("ip", "-n", ns, "link", "set", "eth0", "up"));
            ChildProcess.run(List.of("ip", "-n", ns, "link", "set", "lo", "up"));
            ChildProcess.run(List.of("ip", "-n", ns, "route", "add", "default", "via", gateway()));
            return new Sandbox(ns, ip, veth);
        } catch (RuntimeException e) {
            ChildProcess.runQuietly("ip", "netns", "del", ns);
            used.clear(n);
            throw e;
        }
    }

    /** Kills whatever still runs in the namespace and removes it (its veth goes with it). */
    public synchronized void release(Sandbox sandbox) {
        if (sandbox == null || sandbox.namespace() == null) {
            return;
        }
        killAll(sandbox.namespace());
        ChildProcess.runQuietly("ip", "netns", "del", sandbox.namespace());
        ChildProcess.runQuietly("ip", "link", "del", sandbox.hostVeth());
        String ip = sandbox.ip();
        used.clear(Integer.parseInt(ip.substring(ip.lastIndexOf('.') + 1)));
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        cleanup(index);
    }

    private static void killAll(String namespace) {
        try {
            String pids = ChildProcess.run(List.of("ip", "netns", "pids", namespace)).strip();
            if (!pids.isEmpty()) {
                List<String> kill = new ArrayList<>(List.of("kill", "-KILL"));
                kill.addAll(List.of(pids.split("\\s+")));
                ChildProcess.runQuietly(kill.toArray(String[]::new));
            }
        } catch (RuntimeException e) {
            // namespace already gone
        }
    }

    private static void cleanup(int k) {
        try {
            for (String ns : ChildProcess.run(List.of("ip", "netns", "list")).split("\n")) {
                String name = ns.strip().split("\\s+")[0];
                if (name.startsWith("ib" + k + "p")) {
                    killAll(name);
                    ChildProcess.runQuietly("ip", "netns", "del", name);
                }
            }
        } catch (RuntimeException e) {
            // nothing to list
        }
        ChildProcess.runQuietly("ip", "link", "del", "ibbr" + k);
        try {
            Files.deleteIfExists(STATE_DIR.resolve(k + ".owner"));
        } catch (IOException e) {
            // stale owner file is handled on the next claim
        }
    }

    private void recordOwner() {
        try {
            Files.createDirectories(STATE_DIR);
            Files.writeString(
                    STATE_DIR.resolve(index + ".owner"),
                    String.valueOf(ProcessHandle.current().pid()));
        } catch (IOException e) {
            // without the owner file a crashed JVM's bridge is just not reclaimed automatically
        }
    }

    /** Reclaims subnet k when the JVM that claimed it is gone. */
    private static boolean reclaimIfStale(int k) {
        Path owner = STATE_DIR.resolve(k + ".owner");
        try {
            if (!Files.exists(owner)) {
                return false;
            }
            long pid = Long.parseLong(Files.readString(owner).strip());
            if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                return false;
            }
        } catch (IOException | NumberFormatException e) {
            return false;
        }
        cleanup(k);
        return true;
    }
}
