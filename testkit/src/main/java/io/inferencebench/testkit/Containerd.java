package io.inferencebench.testkit;

import io.inferencebench.testkit.Command.Result;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A private containerd (the host's {@code containerd}, {@code ctr} and {@code runc}) with its own
 * socket, root and state under one directory, for tests that run the project's images in real
 * containers without touching a containerd the host may run.
 *
 * <p>Host state it can leave and removes on {@link #close()}, and on the next {@link #start} after
 * a crash: its containerd and shim processes, overlay mounts under its directories, the cgroups of
 * its containerd namespace, and {@code /run/containerd} (where containerd 1.6 puts shim sockets,
 * fifos and runc state whatever its own state directory is) when an instance created it and no
 * instance is left. Instances of other live processes run beside it undisturbed.
 */
public final class Containerd implements AutoCloseable {

    private static final Path RUN_CONTAINERD = Path.of("/run/containerd");
    private static final String CREATED_RUN_CONTAINERD = "created-run-containerd";
    private static final java.util.concurrent.atomic.AtomicInteger INSTANCES =
            new java.util.concurrent.atomic.AtomicInteger();

    private final Path home;
    private final String namespace;
    private final Path socket;
    private final ChildProcess daemon;
    private final List<String> containers = new ArrayList<>();

    private Containerd(Path home, Path socket, ChildProcess daemon) {
        this.home = home;
        this.namespace = namespaceOf(home);
        this.socket = socket;
        this.daemon = daemon;
    }

    /** This instance's directory (socket, root, state, logs); gone after {@link #close()}. */
    public Path home() {
        return home;
    }

    /** The containerd namespace (and cgroup parent) of this instance's images and containers. */
    public String namespace() {
        return namespace;
    }

    private static String namespaceOf(Path home) {
        return "inferencebench-test-" + home.getFileName();
    }

    /** Whether containerd, ctr and runc are on this host's PATH. */
    public static boolean available() {
        return Stream.of("containerd", "ctr", "runc")
                .allMatch(
                        b ->
                                run(List.of("sh", "-c", "command -v " + b), Duration.ofSeconds(5))
                                        .ok());
    }

    /**
     * Starts a containerd in a new directory under {@code parent}, after removing what instances of
     * dead processes left there (a crashed run is cleaned up by the next one; instances of live
     * processes, e.g. a concurrent build, are left alone).
     */
    public static Containerd start(Path parent) {
        try {
            Files.createDirectories(parent);
            synchronized (Containerd.class) {
                cleanUpStale(parent);
                if (!Files.exists(RUN_CONTAINERD)) {
                    Files.createDirectories(RUN_CONTAINERD);
                    Files.writeString(parent.resolve(CREATED_RUN_CONTAINERD), "");
                }
            }
            Path home =
                    parent.resolve(
                            ProcessHandle.current().pid() + "-" + INSTANCES.incrementAndGet());
            Files.createDirectories(home);
            Files.writeString(
                    home.resolve("owner.pid"), Long.toString(ProcessHandle.current().pid()));
            Path socket = home.resolve("containerd.sock");
            Path config = home.resolve("config.toml");
            Files.writeString(
                    config,
                    String.join(
                            "\n",
                            "version = 2",
                            "root = \"" + home.resolve("root") + "\"",
                            "state = \"" + home.resolve("state") + "\"",
                            "[grpc]",
                            "  address = \"" + socket + "\"",
                            "[ttrpc]",
                            "  address = \"" + home.resolve("containerd.sock.ttrpc") + "\"",
                            // No Kubernetes here: the CRI plugin would only look for CNI files.
                            "disabled_plugins = [\"io.containerd.grpc.v1.cri\"]",
                            ""));
            ChildProcess daemon =
                    ChildProcess.start(
                            "containerd",
                            List.of("containerd", "--config", config.toString()),
                            Map.of(),
                            false,
                            home,
                            home.resolve("containerd.log"));
            Files.writeString(home.resolve("containerd.pid"), Long.toString(daemon.pid()));
            Containerd containerd = new Containerd(home, socket, daemon);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!containerd.ctr(List.of("version"), Duration.ofSeconds(5)).ok()) {
                if (!daemon.isAlive() || System.nanoTime() > deadline) {
                    String log = daemon.tail(30);
                    containerd.close();
                    throw new IllegalStateException("containerd did not start:\n" + log);
                }
                Thread.sleep(100);
            }
            return containerd;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Imports an image tarball ({@code docker save} or OCI layout); returns ctr's output. */
    public Result importImage(Path tarball) {
        return ctr(
                List.of("-n", namespace, "images", "import", tarball.toString()),
                Duration.ofMinutes(2));
    }

    /** Lists the image references of this fixture's namespace. */
    public List<String> images() {
        Result r = ctr(List.of("-n", namespace, "images", "ls", "-q"), Duration.ofSeconds(30));
        return r.output().lines().filter(l -> !l.isBlank()).toList();
    }

    /**
     * Runs a container to completion. {@code command} is the whole process (ctr does not apply the
     * image's entrypoint). The root filesystem is read-only and /tmp a tmpfs, as in a pod with
     * {@code readOnlyRootFilesystem: true} and an emptyDir on /tmp; the image's user applies.
     */
    public Result run(String name, String image, ContainerOptions options, List<String> command) {
        return ctr(runArgs(name, image, options, command, false), options.timeout());
    }

    /** Starts a container in the background; {@link #close()} removes it. */
    public Result runDetached(
            String name, String image, ContainerOptions options, List<String> command) {
        return ctr(runArgs(name, image, options, command, true), Duration.ofSeconds(60));
    }

    /** Kills and removes a container started with {@link #runDetached}. */
    public void remove(String name) {
        ctr(List.of("-n", namespace, "tasks", "kill", "-s", "KILL", name), Duration.ofSeconds(10));
        for (int i = 0; i < 50; i++) {
            if (ctr(List.of("-n", namespace, "tasks", "rm", "-f", name), Duration.ofSeconds(10))
                    .ok()) {
                break;
            }
            sleep(100);
        }
        ctr(List.of("-n", namespace, "containers", "rm", name), Duration.ofSeconds(10));
        containers.remove(name);
    }

    private List<String> runArgs(
            String name,
            String image,
            ContainerOptions options,
            List<String> command,
            boolean detached) {
        List<String> args = new ArrayList<>(List.of("-n", namespace, "run"));
        if (detached) {
            args.add("-d");
            args.add("--log-uri=file://" + logFile(name));
        } else {
            args.add("--rm");
        }
        args.add("--read-only");
        args.add("--mount");
        args.add("type=tmpfs,src=tmpfs,dst=/tmp,options=nosuid:nodev:mode=1777");
        if (options.hostNetwork()) {
            args.add("--net-host");
        }
        for (var bind : options.binds().entrySet()) {
            args.add("--mount");
            args.add(
                    "type=bind,src="
                            + bind.getKey()
                            + ",dst="
                            + bind.getValue()
                            + ",options=rbind:rw");
        }
        options.env().forEach((k, v) -> args.add("--env=" + k + "=" + v));
        args.add(image);
        args.add(name);
        args.addAll(command);
        containers.add(name);
        return args;
    }

    /** Runs {@code ctr} against this containerd. */
    public Result ctr(List<String> args, Duration timeout) {
        List<String> argv = new ArrayList<>(List.of("ctr", "--address", socket.toString()));
        argv.addAll(args);
        return run(argv, timeout);
    }

    /** What a detached container printed so far. */
    public String containerLog(String name) {
        try {
            return Files.exists(logFile(name)) ? Files.readString(logFile(name)) : "(no log)";
        } catch (IOException e) {
            return e.toString();
        }
    }

    private Path logFile(String name) {
        try {
            return Files.createDirectories(home.resolve("logs")).resolve(name + ".log");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The daemon's log, for failure messages. */
    public String logTail(int lines) {
        return daemon.tail(lines);
    }

    @Override
    public void close() {
        for (String name : List.copyOf(containers)) {
            remove(name);
        }
        daemon.stop(Duration.ofSeconds(10));
        synchronized (Containerd.class) {
            cleanUp(home);
            removeRunContainerdIfLast(home.getParent());
        }
    }

    private static void cleanUpStale(Path parent) throws IOException {
        try (Stream<Path> children = Files.list(parent)) {
            for (Path child : children.filter(Files::isDirectory).toList()) {
                Path owner = child.resolve("owner.pid");
                boolean alive =
                        Files.exists(owner)
                                && ProcessHandle.of(Long.parseLong(Files.readString(owner).trim()))
                                        .map(ProcessHandle::isAlive)
                                        .orElse(false);
                if (!alive) {
                    cleanUp(child);
                }
            }
        }
        removeRunContainerdIfLast(parent);
    }

    /** /run/containerd goes only if an instance created it and no instance is left. */
    private static void removeRunContainerdIfLast(Path parent) {
        try (Stream<Path> children = Files.list(parent)) {
            if (children.anyMatch(Files::isDirectory)) {
                return;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (Files.exists(parent.resolve(CREATED_RUN_CONTAINERD))) {
            run(List.of("rm", "-rf", RUN_CONTAINERD.toString()), Duration.ofSeconds(10));
            parent.resolve(CREATED_RUN_CONTAINERD).toFile().delete();
        }
    }

    /** Removes every trace the instance under {@code home} may have left, running or crashed. */
    static void cleanUp(Path home) {
        String namespace = namespaceOf(home);
        Path pidFile = home.resolve("containerd.pid");
        if (Files.exists(pidFile)) {
            try {
                String pid = Files.readString(pidFile).trim();
                run(List.of("kill", "-9", pid), Duration.ofSeconds(5));
            } catch (IOException ignored) {
                // the directory is removed below anyway
            }
        }
        // Shims outlive containerd; theirs name our socket on their command line.
        run(
                List.of("pkill", "-9", "-f", "containerd-shim.*" + home.resolve("containerd.sock")),
                Duration.ofSeconds(5));
        unmountUnder(home);
        run(
                List.of(
                        "sh",
                        "-c",
                        "for d in /sys/fs/cgroup/"
                                + namespace
                                + " /sys/fs/cgroup/*/"
                                + namespace
                                + "; do [ -d \"$d\" ] && find \"$d\" -depth -type d -exec rmdir {} \\; ; done;"
                                + " rm -rf /run/containerd/runc/"
                                + namespace
                                + "; true"),
                Duration.ofSeconds(10));
        if (Files.exists(home)) {
            try (Stream<Path> paths = Files.walk(home)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot remove " + home, e);
            }
        }
    }

    private static void unmountUnder(Path home) {
        try {
            List<String> mounts =
                    Files.readAllLines(Path.of("/proc/self/mounts"), StandardCharsets.UTF_8)
                            .stream()
                            .map(l -> l.split(" ")[1])
                            .filter(m -> m.startsWith(home.toString() + "/"))
                            .sorted(Comparator.reverseOrder())
                            .toList();
            for (String m : mounts) {
                run(List.of("umount", "-l", m), Duration.ofSeconds(10));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Result run(List<String> argv, Duration timeout) {
        return Command.run(argv, timeout);
    }

    /**
     * How a container runs beyond the read-only root and the /tmp tmpfs every container gets.
     *
     * @param hostNetwork share the host's network namespace (loopback servers of the test)
     * @param binds host path to container path, read-write
     * @param env environment added to the image's
     * @param timeout how long {@link #run} waits
     */
    public record ContainerOptions(
            boolean hostNetwork,
            Map<String, String> binds,
            Map<String, String> env,
            Duration timeout) {
        public static ContainerOptions hostNetwork(Duration timeout) {
            return new ContainerOptions(true, Map.of(), Map.of(), timeout);
        }

        public ContainerOptions withBind(String hostPath, String containerPath) {
            var b = new java.util.LinkedHashMap<>(binds);
            b.put(hostPath, containerPath);
            return new ContainerOptions(hostNetwork, b, env, timeout);
        }

        public ContainerOptions withEnv(String name, String value) {
            var e = new java.util.LinkedHashMap<>(env);
            e.put(name, value);
            return new ContainerOptions(hostNetwork, binds, e, timeout);
        }
    }
}
