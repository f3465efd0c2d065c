package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Private temporary directories of tests and fixtures in {@code java.io.tmpdir}, removed by the JVM
 * that made them and, when it died first (SIGKILL, a CI timeout), by the next JVM that makes one
 * with the same prefix.
 *
 * <p>A directory is named {@code <prefix><pid>-<random>} after the JVM that owns it and is
 * owner-only ({@code rwx------}, never world-writable). Its owner is gone when no process has that
 * pid, or the process that has it now started after the directory was last written (the pid was
 * reused). Deleting removes the private keys first (any file holding a PEM private key or a
 * kubeconfig's {@code client-key-data}), then the rest, without following symbolic links.
 */
public final class TempDirs {

    private static final Set<PosixFilePermission> OWNER_ONLY =
            Set.of(
                    PosixFilePermission.OWNER_READ,
                    PosixFilePermission.OWNER_WRITE,
                    PosixFilePermission.OWNER_EXECUTE);

    /** Files larger than this are not read when looking for keys. */
    private static final long KEY_FILE_LIMIT = 1 << 20;

    private TempDirs() {}

    /** The directory temporary entries go to ({@code java.io.tmpdir}). */
    public static Path root() {
        return Path.of(System.getProperty("java.io.tmpdir", "/tmp"));
    }

    /** The pid part of this JVM's directory names: {@code <prefix><pid>-}. */
    public static String ownName(String prefix) {
        return prefix + ProcessHandle.current().pid() + "-";
    }

    /**
     * Creates {@code java.io.tmpdir/<prefix><pid>-<random>}, owner-only, after removing the
     * directories with this prefix whose JVM is gone.
     *
     * @param prefix e.g. {@code ib-images-}
     * @return the new directory
     */
    public static Path create(String prefix) {
        reapDead(root(), prefix);
        try {
            Path dir = Files.createTempDirectory(root(), ownName(prefix));
            Files.setPosixFilePermissions(dir, OWNER_ONLY);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Deletes a directory tree: files holding private keys first, then everything; symbolic links
     * are removed, never followed. A missing directory is fine.
     *
     * @param dir the directory (or a single file)
     */
    public static void delete(Path dir) {
        if (dir == null || !Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        for (Path key : privateKeys(dir)) {
            try {
                Files.deleteIfExists(key);
            } catch (IOException e) {
                // the whole tree goes next; what stays is reported by the caller's check
            }
        }
        ChildProcess.deleteRecursively(dir);
    }

    /** The regular files under {@code dir} that hold a private key. */
    static List<Path> privateKeys(Path dir) {
        List<Path> keys = new ArrayList<>();
        try {
            Files.walkFileTree(
                    dir,
                    new SimpleFileVisitor<>() {
                        @Override
                        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                            if (attrs.isRegularFile() && holdsPrivateKey(file, attrs.size())) {
                                keys.add(file);
                            }
                            return FileVisitResult.CONTINUE;
                        }

                        @Override
                        public FileVisitResult visitFileFailed(Path file, IOException exc) {
                            return FileVisitResult.CONTINUE;
                        }
                    });
        } catch (IOException e) {
            // nothing readable: nothing to delete first
        }
        return keys;
    }

    private static boolean holdsPrivateKey(Path file, long size) {
        if (file.getFileName().toString().endsWith(".key")) {
            return true;
        }
        if (size > KEY_FILE_LIMIT) {
            return false;
        }
        try {
            String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
            return text.contains("PRIVATE KEY-----") || text.contains("client-key-data:");
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The entries of {@code java.io.tmpdir} named {@code <prefix><this pid>-*}: what this JVM made
     * with {@link #create(String)} and has not deleted.
     */
    public static List<Path> own(String prefix) {
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> entries =
                Files.newDirectoryStream(root(), ownName(prefix) + "*")) {
            entries.forEach(found::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return found;
    }

    /**
     * Removes the directories under {@code parent} named {@code <prefix><pid>-*} whose JVM is gone.
     *
     * @return what was removed
     */
    static List<Path> reapDead(Path parent, String prefix) {
        Pattern name = Pattern.compile(Pattern.quote(prefix) + "(\\d+)-.*");
        List<Path> reaped = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(parent, prefix + "*")) {
            for (Path entry : entries) {
                Matcher m = name.matcher(entry.getFileName().toString());
                if (m.matches() && ownerGone(Long.parseLong(m.group(1)), entry)) {
                    delete(entry);
                    reaped.add(entry);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // nothing to reap now; the next create tries again
        }
        return reaped;
    }

    static boolean ownerGone(long pid, Path dir) {
        Optional<ProcessHandle> owner = ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
        if (owner.isEmpty()) {
            return true;
        }
        Optional<Instant> started = owner.get().info().startInstant();
        try {
            Instant written = Files.getLastModifiedTime(dir, LinkOption.NOFOLLOW_LINKS).toInstant();
            // One second of slack: the start time has that resolution on Linux.
            return started.isPresent() && started.get().isAfter(written.plusSeconds(1));
        } catch (IOException e) {
            return false;
        }
    }
}
