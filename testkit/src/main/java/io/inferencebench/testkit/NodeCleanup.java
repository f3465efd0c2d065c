package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Removes what a real node under its directory left on the host, running or crashed: its processes
 * (by recorded PID, by command line, in its cgroups), its mounts, its cgroups, then the host state
 * {@link HostRestore} recorded, then the directory itself. In that order: nothing is removed while
 * a process of the node could still write it.
 */
final class NodeCleanup {

    private NodeCleanup() {}

    /** A crashed earlier run (dead owner) is cleaned up; the caller holds the lock. */
    static void cleanUpStale(Path dir) {
        if (Files.exists(dir)) {
            System.err.println("[real-node] cleaning up what an earlier run left in " + dir);
            cleanUp(dir);
        }
    }

    /**
     * Removes every trace a node under {@code dir} may have left, running or crashed, and restores
     * the host state recorded when it started.
     */
    static void cleanUp(Path dir) {
        killRecordedProcesses(dir);
        killByCommandLine(dir.resolve("containerd/containerd.sock").toString());
        NodeCgroups.killProcesses();
        unmountUnder(dir);
        NodeCgroups.remove();
        HostRestore.restore(dir);
        deleteTree(dir);
    }

    private static void killRecordedProcesses(Path dir) {
        Path pids = dir.resolve("pids");
        if (!Files.exists(pids)) {
            return;
        }
        try {
            for (String l : Files.readAllLines(pids)) {
                String[] f = l.strip().split(" ");
                if (f.length < 1 || f[0].isEmpty()) {
                    continue;
                }
                long pid = Long.parseLong(f[0]);
                // only if it is still ours: every component's command line names the node dir
                String cmdline = cmdline(pid);
                if (cmdline.contains(dir.toString())) {
                    Command.run(List.of("kill", "-KILL", "--", "-" + pid), Duration.ofSeconds(5));
                    Command.run(
                            List.of("kill", "-KILL", Long.toString(pid)), Duration.ofSeconds(5));
                }
            }
        } catch (IOException | NumberFormatException e) {
            System.err.println("[real-node] reading " + pids + ": " + e);
        }
    }

    private static String cmdline(long pid) {
        try {
            return new String(
                            Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
                            StandardCharsets.UTF_8)
                    .replace('\0', ' ');
        } catch (IOException e) {
            return "";
        }
    }

    /** Kills, by PID, the processes whose command line contains {@code marker} (our shims). */
    private static void killByCommandLine(String marker) {
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.map(p -> p.getFileName().toString())
                    .filter(n -> n.chars().allMatch(Character::isDigit))
                    .map(Long::parseLong)
                    .filter(pid -> pid != ProcessHandle.current().pid())
                    .filter(pid -> cmdline(pid).contains(marker))
                    .forEach(
                            pid ->
                                    Command.run(
                                            List.of("kill", "-KILL", Long.toString(pid)),
                                            Duration.ofSeconds(5)));
        } catch (IOException e) {
            System.err.println("[real-node] listing /proc: " + e);
        }
    }

    private static void unmountUnder(Path dir) {
        for (int pass = 0; pass < 3; pass++) {
            List<String> mounts =
                    HostState.mounts().stream()
                            .filter(m -> m.startsWith(dir + "/"))
                            .sorted(Comparator.reverseOrder())
                            .toList();
            if (mounts.isEmpty()) {
                return;
            }
            for (String m : mounts) {
                Command.run(List.of("umount", "-l", m), Duration.ofSeconds(10));
            }
        }
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        // never follow into a mount that is still there
        if (HostState.mounts().stream().anyMatch(m -> m.startsWith(dir + "/"))) {
            System.err.println("[real-node] mounts left under " + dir + "; not deleting it");
            return;
        }
        Command.run(
                List.of("rm", "-rf", "--one-file-system", dir.toString()), Duration.ofSeconds(60));
    }
}
