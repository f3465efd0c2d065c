package io.inferencebench.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * The machine's E2E lock: one cluster per machine. It is the {@code flock(1)} lock on {@code
 * /tmp/inferencebench-e2e.lock} (env {@code E2E_LOCK}) that the scripts ({@code make e2e-node},
 * {@code make demo}) take, so a test JVM and a script exclude each other.
 *
 * <p>Java's {@code FileLock} is an fcntl lock, which Linux keeps apart from {@code flock(2)} locks;
 * the lock is therefore held by a {@code flock} child process that lives as long as its stdin pipe
 * from this JVM is open (a crashed JVM releases it too). When a process this JVM descends from
 * already holds the lock ({@code flock /tmp/inferencebench-e2e.lock mvn ...}), taking it again
 * would wait for ourselves: then nothing is taken and the caller's lock covers the run.
 */
public final class MachineLock implements AutoCloseable {

    public static final Path DEFAULT_FILE = Path.of("/tmp/inferencebench-e2e.lock");
    public static final Duration DEFAULT_WAIT = Duration.ofMinutes(20);

    /** What this JVM holds, per lock file: nested acquisitions share it (reentrant). */
    private static final java.util.Map<Path, MachineLock> HELD = new java.util.HashMap<>();

    private final Path file;
    private final Process holder;
    private int users = 1;

    private MachineLock(Path file, Process holder) {
        this.file = file;
        this.holder = holder;
    }

    /** The lock file: {@code E2E_LOCK} when set, else {@link #DEFAULT_FILE}. */
    public static Path file() {
        String env = System.getenv("E2E_LOCK");
        return env == null || env.isBlank() ? DEFAULT_FILE : Path.of(env);
    }

    /**
     * Takes the lock, waiting at most {@code atMost} for its holder to let go; prints once that it
     * waits and for whom. Fails with a message naming the holder when the wait runs out.
     */
    public static MachineLock acquire(Path file, Duration atMost, String purpose) {
        Path key = file.toAbsolutePath().normalize();
        synchronized (HELD) {
            MachineLock mine = HELD.get(key);
            if (mine != null) {
                // this JVM holds it already (a fixture took it before starting the node)
                mine.users++;
                return mine;
            }
        }
        MachineLock taken = take(file, atMost, purpose);
        synchronized (HELD) {
            HELD.put(key, taken);
        }
        return taken;
    }

    private static MachineLock take(Path file, Duration atMost, String purpose) {
        try {
            if (!Files.exists(file)) {
                Files.createDirectories(file.toAbsolutePath().getParent());
                Files.writeString(file, "");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("creating the lock file " + file, e);
        }
        Optional<ProcessHandle> ancestor = ancestorHolding(file);
        if (ancestor.isPresent()) {
            System.err.println(
                    "[machine-lock] "
                            + file
                            + " is held by the calling process "
                            + describe(ancestor.get().pid())
                            + "; "
                            + purpose
                            + " runs under it");
            return new MachineLock(file, null);
        }
        if (!flockAvailable()) {
            System.err.println(
                    "[machine-lock] no flock(1) on this machine: " + purpose + " takes no lock");
            return new MachineLock(file, null);
        }
        long seconds = Math.max(1, atMost.toSeconds());
        Process p;
        try {
            p =
                    new ProcessBuilder(
                                    "flock",
                                    "-w",
                                    Long.toString(seconds),
                                    file.toString(),
                                    "sh",
                                    "-c",
                                    "echo locked; exec cat >/dev/null")
                            .redirectErrorStream(true)
                            .start();
        } catch (IOException e) {
            throw new UncheckedIOException("starting flock on " + file, e);
        }
        BufferedReader out =
                new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> firstLine =
                CompletableFuture.supplyAsync(
                        () -> {
                            try {
                                String line = out.readLine();
                                return line == null ? "" : line;
                            } catch (IOException e) {
                                return e.toString();
                            }
                        },
                        r -> Thread.ofVirtual().start(r));
        long start = System.nanoTime();
        try {
            String line;
            try {
                line = firstLine.get(1, TimeUnit.SECONDS);
            } catch (TimeoutException notYet) {
                System.err.println(
                        "[machine-lock] "
                                + purpose
                                + " waits (at most "
                                + atMost
                                + ") for "
                                + file
                                + ", held by "
                                + holders(file));
                try {
                    line = firstLine.get(seconds + 5, TimeUnit.SECONDS);
                } catch (TimeoutException stuck) {
                    line = "";
                }
            }
            if (!"locked".equals(line.strip())) {
                String holdersNow = holders(file);
                p.destroyForcibly();
                throw new IllegalStateException(
                        "the machine's E2E lock "
                                + file
                                + " was not free within "
                                + atMost
                                + " (held by "
                                + holdersNow
                                + "; flock said: '"
                                + line
                                + "')");
            }
            long waited = (System.nanoTime() - start) / 1_000_000;
            if (waited >= 1000) {
                System.err.println(
                        "[machine-lock] " + purpose + " took " + file + " after " + waited + " ms");
            }
            return new MachineLock(file, p);
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for " + file, e);
        } catch (ExecutionException e) {
            p.destroyForcibly();
            throw new IllegalStateException("reading flock's answer", e);
        }
    }

    /** Whether this object holds the lock itself (false: a calling process holds it, or none). */
    public boolean ownsLock() {
        return holder != null && holder.isAlive();
    }

    public Path lockFile() {
        return file;
    }

    /**
     * Releases the lock (when this object took it) once every nested {@link #acquire} of this JVM
     * has closed; extra closes do nothing.
     */
    @Override
    public void close() {
        synchronized (HELD) {
            if (users == 0) {
                return;
            }
            if (--users > 0) {
                return;
            }
            HELD.remove(file.toAbsolutePath().normalize());
        }
        if (holder == null) {
            return;
        }
        try {
            holder.getOutputStream().close();
            if (!holder.waitFor(5, TimeUnit.SECONDS)) {
                holder.destroyForcibly();
            }
        } catch (IOException e) {
            holder.destroyForcibly();
        } catch (InterruptedException e) {
            holder.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The nearest ancestor of this process with {@code file} open while some process holds a flock
     * on it: the lock this JVM runs under. An open file alone is not enough (a process that waits
     * for the lock has it open too).
     */
    static Optional<ProcessHandle> ancestorHolding(Path file) {
        Path real;
        long inode;
        try {
            real = file.toRealPath();
            inode = ((Number) Files.getAttribute(real, "unix:ino")).longValue();
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return Optional.empty();
        }
        if (flockHolderPids(inode).isEmpty()) {
            return Optional.empty();
        }
        Optional<ProcessHandle> p = ProcessHandle.current().parent();
        while (p.isPresent() && p.get().pid() > 1) {
            if (hasOpen(p.get().pid(), real)) {
                return p;
            }
            p = p.get().parent();
        }
        return Optional.empty();
    }

    private static boolean hasOpen(long pid, Path real) {
        Path fds = Path.of("/proc", Long.toString(pid), "fd");
        try (Stream<Path> entries = Files.list(fds)) {
            for (Path fd : entries.toList()) {
                try {
                    if (Files.readSymbolicLink(fd).equals(real)) {
                        return true;
                    }
                } catch (IOException gone) {
                    // closed meanwhile
                }
            }
        } catch (IOException | SecurityException e) {
            // not ours to read
        }
        return false;
    }

    /**
     * Pids of the flock locks on {@code inode} in {@code /proc/locks} (0 when the locking process
     * has exited and only an inherited descriptor keeps the lock).
     */
    static List<Long> flockHolderPids(long inode) {
        List<Long> pids = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/locks"))) {
                // "1: FLOCK  ADVISORY  WRITE 1234 08:01:56789 0 EOF"; "->" lines are waiters
                String[] f = line.strip().split("\\s+");
                if (f.length >= 6 && "FLOCK".equals(f[1])) {
                    String[] dev = f[5].split(":");
                    if (dev.length == 3 && dev[2].equals(Long.toString(inode))) {
                        pids.add(Long.parseLong(f[4]));
                    }
                }
            }
        } catch (IOException | NumberFormatException e) {
            // no /proc/locks: no holder known
        }
        return pids;
    }

    private static String holders(Path file) {
        try {
            long inode = ((Number) Files.getAttribute(file.toRealPath(), "unix:ino")).longValue();
            List<Long> pids = flockHolderPids(inode);
            if (pids.isEmpty()) {
                return "an unknown process";
            }
            return pids.stream().map(MachineLock::describe).reduce((a, b) -> a + ", " + b).get();
        } catch (IOException | UnsupportedOperationException e) {
            return "an unknown process";
        }
    }

    static String describe(long pid) {
        if (pid <= 0) {
            return "a process that has exited (its child keeps the descriptor)";
        }
        String cmd =
                ProcessHandle.of(pid)
                        .flatMap(h -> h.info().commandLine())
                        .map(c -> c.length() > 160 ? c.substring(0, 160) + "..." : c)
                        .orElse("?");
        return "pid " + pid + " (" + cmd + ")";
    }

    private static boolean flockAvailable() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, "flock"))) {
                return true;
            }
        }
        return false;
    }
}
