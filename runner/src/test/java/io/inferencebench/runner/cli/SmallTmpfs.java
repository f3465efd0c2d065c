package io.inferencebench.runner.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A file system of a few KiB that fills up as a real disk does: a tmpfs mounted for one test
 * (mounting needs root; the test is skipped with the reason otherwise) and unmounted on close. A
 * mount left behind by an earlier test whose JVM died is unmounted before a new one is made.
 */
final class SmallTmpfs implements AutoCloseable {

    /** Where the mounts go: one directory per JVM and mount, named {@code <pid>-<n>}. */
    static final Path ROOT =
            Path.of(System.getProperty("java.io.tmpdir"), "inferencebench-small-tmpfs");

    private static final AtomicInteger COUNT = new AtomicInteger();

    final Path dir;

    private SmallTmpfs(Path dir) {
        this.dir = dir;
    }

    /**
     * Mounts a tmpfs of {@code kib} KiB, or skips the calling test saying why it cannot.
     *
     * @return the mount, to be closed
     */
    static SmallTmpfs mountOrSkip(int kib) throws Exception {
        Assumptions.assumeTrue(
                "root".equals(System.getProperty("user.name")),
                () ->
                        "skipped: mounting a "
                                + kib
                                + " KiB tmpfs (a disk that fills up) needs root; this runs as "
                                + System.getProperty("user.name"));
        unmountLeftOvers();
        Path dir = ROOT.resolve(ProcessHandle.current().pid() + "-" + COUNT.incrementAndGet());
        Files.createDirectories(dir);
        String failure =
                run("mount", "-t", "tmpfs", "-o", "size=" + kib + "k", "ib-test", dir.toString());
        if (failure != null) {
            Files.deleteIfExists(dir);
            Assumptions.abort("skipped: cannot mount a tmpfs here: " + failure);
        }
        return new SmallTmpfs(dir);
    }

    /** Writes a file into the mount until the file system is full, to the last byte. */
    void fill() throws IOException {
        Path filler = dir.resolve("filler");
        try (OutputStream out = Files.newOutputStream(filler)) {
            for (int chunk : new int[] {4096, 1}) {
                try {
                    while (true) {
                        out.write(new byte[chunk]);
                        out.flush();
                    }
                } catch (IOException full) {
                    // no room for another chunk of this size
                }
            }
        } catch (IOException closingAFullFile) {
            // the last write already failed; what is written stays
        }
    }

    @Override
    public void close() throws Exception {
        String failure = run("umount", dir.toString());
        if (failure != null) {
            throw new IllegalStateException("cannot unmount " + dir + ": " + failure);
        }
        Files.deleteIfExists(dir);
        try {
            Files.deleteIfExists(ROOT);
        } catch (java.nio.file.DirectoryNotEmptyException inUse) {
            // another test JVM's mount is there
        }
    }

    /** Unmounts the mounts under {@link #ROOT} of JVMs that no longer run. */
    private static void unmountLeftOvers() throws Exception {
        List<Path> mounted = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/self/mounts"))) {
            String[] fields = line.split(" ");
            if (fields.length > 1 && fields[1].startsWith(ROOT + "/")) {
                mounted.add(Path.of(fields[1]));
            }
        }
        for (Path mount : mounted) {
            String name = mount.getFileName().toString();
            long pid = Long.parseLong(name.substring(0, name.indexOf('-')));
            if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                continue; // another test JVM's, in use
            }
            run("umount", "-l", mount.toString());
            try (Stream<Path> files = Files.walk(mount)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** Runs a command; {@code null} when it succeeded, else its output. */
    private static String run(String... command) throws Exception {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return e.getMessage();
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return String.join(" ", command) + " did not finish in 30 s";
        }
        return p.exitValue() == 0
                ? null
                : String.join(" ", command) + ": exit " + p.exitValue() + ": " + output.strip();
    }
}
