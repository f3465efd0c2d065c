package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDir;

/** Private temporary directories: owner-only, keys deleted first, dead JVMs' reaped. */
@TempDirCheck({TempDirsTest.PREFIX + "{pid}-*"})
class TempDirsTest {

    static final String PREFIX = "ib-tempdirs-test-";

    @TempDir Path outside;

    @AfterEach
    void removeWhatATestLeft() {
        TempDirs.own(PREFIX).forEach(TempDirs::delete);
    }

    @Test
    void aDirectoryIsOwnerOnlyAndNamedAfterThisJvm() throws Exception {
        Path dir = TempDirs.create(PREFIX);
        assertThat(dir.getParent()).isEqualTo(TempDirs.root());
        assertThat(dir.getFileName().toString())
                .startsWith(PREFIX + ProcessHandle.current().pid() + "-");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
                .isEqualTo("rwx------");
        assertThat(TempDirs.own(PREFIX)).containsExactly(dir);
        TempDirs.delete(dir);
        assertThat(dir).doesNotExist();
        assertThat(TempDirs.own(PREFIX)).isEmpty();
    }

    @Test
    void privateKeysAreFoundAndDeletedWithoutFollowingLinks() throws Exception {
        Path dir = TempDirs.create(PREFIX);
        Files.writeString(dir.resolve("apiserver.key"), "anything");
        Files.writeString(dir.resolve("apiserver.crt"), "-----BEGIN CERTIFICATE-----\n");
        Files.createDirectories(dir.resolve("sub"));
        Files.writeString(
                dir.resolve("sub/tls.pem"), "-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END");
        Files.writeString(dir.resolve("config"), "users:\n- user:\n    client-key-data: LS0t\n");
        Path kept = Files.writeString(outside.resolve("not-ours.key"), "x");
        Files.createSymbolicLink(dir.resolve("link"), outside);

        assertThat(TempDirs.privateKeys(dir))
                .containsExactlyInAnyOrder(
                        dir.resolve("apiserver.key"),
                        dir.resolve("sub/tls.pem"),
                        dir.resolve("config"));
        TempDirs.delete(dir);
        assertThat(dir).doesNotExist();
        assertThat(kept).as("a link is removed, not followed").exists();
    }

    @Test
    void theNextJvmReapsTheDirectoriesOfDeadOnesAndLeavesLiveOnes() throws Exception {
        Path mine = TempDirs.create(PREFIX);
        Process gone = new ProcessBuilder("true").start();
        assertThat(gone.waitFor(10, TimeUnit.SECONDS)).isTrue();
        Path dead = Files.createDirectories(TempDirs.root().resolve(PREFIX + gone.pid() + "-x"));
        Files.writeString(dead.resolve("client.key"), "secret");
        // A live process whose pid a dead JVM had: it started after the directory was written.
        Path reused =
                Files.createDirectories(
                        TempDirs.root().resolve(PREFIX + ProcessHandle.current().pid() + "-old"));
        Files.setLastModifiedTime(reused, FileTime.from(Instant.parse("2001-01-01T00:00:00Z")));

        assertThat(TempDirs.reapDead(TempDirs.root(), PREFIX))
                .containsExactlyInAnyOrder(dead, reused);
        assertThat(dead).doesNotExist();
        assertThat(reused).doesNotExist();
        assertThat(mine).exists();
    }

    @TempDirCheck({PREFIX + "{pid}-*"})
    static final class Sample {}

    /** A stand-in for JUnit's context: the class, a store and a name. */
    private static ExtensionContext context() {
        Map<Object, Object> values = new HashMap<>();
        ExtensionContext.Store store =
                (ExtensionContext.Store)
                        Proxy.newProxyInstance(
                                TempDirsTest.class.getClassLoader(),
                                new Class<?>[] {ExtensionContext.Store.class},
                                (proxy, method, args) ->
                                        switch (method.getName()) {
                                            case "put" -> values.put(args[0], args[1]);
                                            case "get" -> values.get(args[0]);
                                            default -> throw new UnsupportedOperationException();
                                        });
        return (ExtensionContext)
                Proxy.newProxyInstance(
                        TempDirsTest.class.getClassLoader(),
                        new Class<?>[] {ExtensionContext.class},
                        (proxy, method, args) ->
                                switch (method.getName()) {
                                    case "getRequiredTestClass" -> Sample.class;
                                    case "getStore" -> store;
                                    case "getDisplayName" -> "Sample";
                                    default -> throw new UnsupportedOperationException();
                                });
    }

    @Test
    void theCheckFailsAClassThatLeavesAMatchingEntryAndNamesIt() throws Exception {
        TempDirCheck.Extension check = new TempDirCheck.Extension();
        ExtensionContext clean = context();
        check.beforeAll(clean);
        TempDirs.delete(TempDirs.create(PREFIX));
        check.afterAll(clean);

        ExtensionContext leaky = context();
        check.beforeAll(leaky);
        Path left = TempDirs.create(PREFIX);
        assertThatThrownBy(() -> check.afterAll(leaky))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("Sample left in " + TempDirs.root())
                .hasMessageContaining(left.getFileName().toString());
    }

    @Test
    void theCheckCountsOnlyWhatAppearedWhileTheClassRan() throws Exception {
        Path earlier = TempDirs.create(PREFIX);
        TempDirCheck.Extension check = new TempDirCheck.Extension();
        ExtensionContext context = context();
        check.beforeAll(context);
        check.afterAll(context);
        assertThat(earlier).exists();
    }
}
