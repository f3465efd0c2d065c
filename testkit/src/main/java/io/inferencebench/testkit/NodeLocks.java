package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The locks a real node holds while it runs: the machine's E2E lock ({@link MachineLock}, the one
 * the scripts take) and its node directory's own.
 */
record NodeLocks(MachineLock machineLock, FileChannel channel, FileLock lock) {

    /**
     * Takes both locks for the node directory {@code dir}, waiting at most {@link
     * MachineLock#DEFAULT_WAIT} in all.
     */
    static NodeLocks acquire(Path dir) throws IOException {
        long deadline = System.nanoTime() + MachineLock.DEFAULT_WAIT.toNanos();
        MachineLock machineLock =
                MachineLock.acquire(
                        MachineLock.file(), MachineLock.DEFAULT_WAIT, "a real node in " + dir);
        Path lockFile = dir.getParent().resolve(dir.getFileName() + ".lock");
        FileChannel channel =
                FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = awaitNodeLock(channel, lockFile, dir, deadline);
        } catch (RuntimeException e) {
            channel.close();
            machineLock.close();
            throw e;
        }
        return new NodeLocks(machineLock, channel, lock);
    }

    /**
     * The node directory's own lock (a Java file lock: a node started without the machine lock,
     * e.g. by a demo whose shell has let go of it, still excludes a second one), waited for until
     * {@code deadline}; prints once whom it waits for.
     */
    private static FileLock awaitNodeLock(
            FileChannel channel, Path lockFile, Path dir, long deadline) throws IOException {
        boolean told = false;
        while (true) {
            FileLock lock = channel.tryLock();
            if (lock != null) {
                return lock;
            }
            String owner = "unknown";
            try {
                owner =
                        MachineLock.describe(
                                Long.parseLong(Files.readString(dir.resolve("owner.pid")).strip()));
            } catch (IOException | NumberFormatException e) {
                // starting or gone
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "another real node runs on this machine (lock "
                                + lockFile
                                + " still held after "
                                + MachineLock.DEFAULT_WAIT
                                + ", owner "
                                + owner
                                + " per "
                                + dir.resolve("owner.pid")
                                + ")");
            }
            if (!told) {
                System.err.println(
                        "[real-node] waiting for "
                                + lockFile
                                + " (another real node runs: owner "
                                + owner
                                + ")");
                told = true;
            }
            LocalControlPlane.sleep(1000);
        }
    }

    /** Lets go of both locks. */
    void release() {
        try {
            lock.release();
            channel.close();
        } catch (IOException e) {
            // the lock goes with the process anyway
        }
        machineLock.close();
    }
}
