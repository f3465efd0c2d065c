package io.inferencebench.runner.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Files the command line writes (profiles, comparison JSON, reports), never seen half-written: the
 * content goes to a temporary file in the target's own directory, is forced to disk, and only then
 * gets its final name in one step. A write that fails (disk full, too many open files) removes its
 * temporary file and leaves nothing under the final name, so a reader of the directory finds
 * complete files or none.
 *
 * <p>Temporary files are hidden and end in {@code .tmp}, so that no reader of {@code *.json} picks
 * one up while it is being written.
 */
final class AtomicFiles {

    /** Gives up after this many taken names: something else is filling the directory. */
    private static final int MAX_SUFFIX = 100_000;

    private AtomicFiles() {}

    /**
     * Writes {@code content} to {@code file}, creating its directory; an existing file is replaced
     * in one step (a reader sees the old content or the new, never a mix).
     *
     * @throws IOException when it could not be written; then {@code file} is as it was
     */
    static void replace(Path file, String content) throws IOException {
        Path target = file.toAbsolutePath();
        if (Files.isSymbolicLink(target)) {
            try {
                // Replace what the link points at, not the link.
                target = target.toRealPath();
            } catch (IOException dangling) {
                // A link to nothing: write where it points is unknown; replace the link itself.
            }
        }
        Path dir = target.getParent();
        Files.createDirectories(dir);
        Path temp = writeTemporary(dir, content.getBytes(StandardCharsets.UTF_8));
        try {
            Files.move(
                    temp,
                    target,
                    StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
        } finally {
            deleteQuietly(temp);
        }
        syncDirectory(dir);
    }

    /**
     * Writes {@code content} under a name no file in {@code dir} has: {@code stem + extension}, or
     * when that is taken {@code stem-2 + extension}, {@code stem-3 + extension} ... Never replaces
     * a file, also when other processes create the same names in the same directory at the same
     * time (the name is taken with a hard link, which fails rather than replaces).
     *
     * @return the file written
     * @throws IOException when it could not be written; then no file of this write is left
     */
    static Path createNew(Path dir, String stem, String extension, String content)
            throws IOException {
        Path temp = writeTemporary(dir, content.getBytes(StandardCharsets.UTF_8));
        try {
            for (int n = 1; n <= MAX_SUFFIX; n++) {
                Path target = dir.resolve(n == 1 ? stem + extension : stem + "-" + n + extension);
                if (takeName(temp, target)) {
                    syncDirectory(dir);
                    return target;
                }
            }
            throw new FileAlreadyExistsException(
                    dir.resolve(stem + extension).toString(),
                    null,
                    "it and the names with suffixes -2 to -" + MAX_SUFFIX + " are all taken");
        } finally {
            deleteQuietly(temp);
        }
    }

    /**
     * Gives the complete temporary file the name {@code target} unless a file has it.
     *
     * @return whether it did; {@code false} when the name is taken
     */
    private static boolean takeName(Path temp, Path target) throws IOException {
        try {
            Files.createLink(target, temp);
            return true;
        } catch (FileAlreadyExistsException taken) {
            return false;
        } catch (UnsupportedOperationException | FileSystemException noHardLinks) {
            // A file system without hard links (e.g. FAT): reserve the name exclusively, then move
            // the content over the reservation. Only here can a reader see an empty file, for the
            // instant between the two steps.
            try {
                Files.createFile(target);
            } catch (FileAlreadyExistsException taken) {
                return false;
            }
            try {
                Files.move(
                        temp,
                        target,
                        StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
                return true;
            } catch (IOException | RuntimeException e) {
                Files.deleteIfExists(target);
                throw e;
            }
        }
    }

    /**
     * A new hidden file in {@code dir} holding {@code bytes}, forced to disk; removed on failure.
     */
    private static Path writeTemporary(Path dir, byte[] bytes) throws IOException {
        Path temp;
        FileChannel channel;
        while (true) {
            byte[] random = new byte[8];
            ThreadLocalRandom.current().nextBytes(random);
            temp = dir.resolve(".inferencebench-" + HexFormat.of().formatHex(random) + ".tmp");
            try {
                // Opened, not Files.createTempFile: the file keeps the umask's permissions
                // (readable by others like any file the user writes), not 0600.
                channel =
                        FileChannel.open(
                                temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                break;
            } catch (FileAlreadyExistsException again) {
                // drawn twice: draw again
            }
        }
        try (FileChannel out = channel) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
            out.force(true);
        } catch (IOException | RuntimeException e) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return temp;
    }

    /** Removes a temporary file; one that cannot be removed is hidden and named *.tmp. */
    private static void deleteQuietly(Path temp) {
        try {
            Files.deleteIfExists(temp);
        } catch (IOException ignored) {
            // left behind, harmless: no reader takes a hidden *.tmp file for a result
        }
    }

    /** Makes the new name durable; best effort (not every platform can force a directory). */
    private static void syncDirectory(Path dir) {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException | RuntimeException ignored) {
            // the content itself is on disk already
        }
    }
}
