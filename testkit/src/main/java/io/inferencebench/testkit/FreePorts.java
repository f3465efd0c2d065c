package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for servers the fixtures start as other processes (etcd, kube-apiserver, the simulator,
 * Prometheus), free of the race of bind-to-0-then-close.
 *
 * <p>Why: a port found by binding to 0 and closing is free only for that instant. Another fixture
 * (in this JVM or a parallel one) binding to 0 may be handed the same port before our child process
 * binds it, and the kernel hands out the same range for client sockets. Here a port comes from
 * below the kernel's ephemeral range (bind-to-0 and outgoing connections never use it), is claimed
 * across processes by an exclusive lock on a file named after it, held until this JVM exits, and is
 * checked to be bindable now.
 */
public final class FreePorts {

    /** Below Linux's default ephemeral range (32768-60999). */
    static final int FIRST = 20_000;

    static final int LAST = 32_000;

    private static final Path LOCK_DIR =
            Path.of(System.getProperty("java.io.tmpdir"), "inferencebench-ports");

    /** Locks held for the life of this JVM; released by the OS when it exits. */
    private static final Map<Integer, FileLock> HELD = new ConcurrentHashMap<>();

    private FreePorts() {}

    /** A loopback port that no other fixture holds and that can be bound now. */
    public static int claim() {
        return claim("127.0.0.1");
    }

    /** A port on {@code host} that no other fixture holds and that can be bound now. */
    public static int claim(String host) {
        try {
            Files.createDirectories(LOCK_DIR);
            for (int attempt = 0; attempt < 2_000; attempt++) {
                int port = ThreadLocalRandom.current().nextInt(FIRST, LAST);
                if (HELD.containsKey(port) || !lock(port)) {
                    continue;
                }
                if (bindable(host, port)) {
                    return port;
                }
                // Something outside the fixtures uses it; keep the lock so nobody retries it.
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no free port in " + FIRST + "-" + LAST);
    }

    private static boolean lock(int port) throws IOException {
        FileChannel channel =
                FileChannel.open(
                        LOCK_DIR.resolve(port + ".lock"),
                        StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
        try {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                channel.close();
                return false;
            }
            HELD.put(port, lock);
            return true;
        } catch (OverlappingFileLockException e) {
            channel.close();
            return false;
        }
    }

    private static boolean bindable(String host, int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(host), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
