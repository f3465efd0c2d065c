package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FreePortsTest {

    @Test
    void claimedPortsAreDistinctOutsideTheEphemeralRangeAndBindable() throws Exception {
        Set<Integer> ports = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            int port = FreePorts.claim();
            assertThat(port).isBetween(FreePorts.FIRST, FreePorts.LAST);
            assertThat(ports.add(port)).as("port %d handed out twice", port).isTrue();
        }
        int port = ports.iterator().next();
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            assertThat(s.getLocalPort()).isEqualTo(port);
        }
    }

    @Test
    void anotherProcessCannotTakeAPortThisOneHolds(@TempDir Path dir) throws Exception {
        int held = FreePorts.claim();
        Path probe = dir.resolve("Probe.java");
        Files.writeString(
                probe,
                """
                import java.nio.channels.FileChannel;
                import java.nio.file.*;
                public class Probe {
                    public static void main(String[] a) throws Exception {
                        try (FileChannel c = FileChannel.open(Path.of(a[0]), StandardOpenOption.WRITE)) {
                            System.out.print(c.tryLock() == null ? "held" : "free");
                        }
                    }
                }
                """);
        String javaCommand = ProcessHandle.current().info().command().orElse("java");
        String lockFile =
                Path.of(
                                System.getProperty("java.io.tmpdir"),
                                "inferencebench-ports",
                                held + ".lock")
                        .toString();
        Process p = new ProcessBuilder(javaCommand, probe.toString(), lockFile).start();
        String answer = new String(p.getInputStream().readAllBytes()).strip();
        assertThat(p.waitFor()).isZero();
        assertThat(answer).as("another JVM locking port %d's file", held).isEqualTo("held");
    }
}
