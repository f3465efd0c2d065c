package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A private API server's directory holds its keys, is owner-only, and is gone after close; an
 * orphaned etcd's data and WAL directories are named by its command line.
 */
@TempDirCheck({ApiServerFixture.WORK_DIR_PREFIX + "{pid}-*"})
class ApiServerFixtureIT {

    @Test
    void thePrivateDirectoryHoldsTheKeysAndIsGoneAfterClose() throws Exception {
        Path dir;
        try (ApiServerFixture api = ApiServerFixture.start()) {
            dir = api.workDir();
            assertThat(dir.getFileName().toString())
                    .startsWith(TempDirs.ownName(ApiServerFixture.WORK_DIR_PREFIX));
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
                    .isEqualTo("rwx------");
            assertThat(TempDirs.privateKeys(dir))
                    .as("the API server's and the client's keys")
                    .extracting(p -> p.getFileName().toString())
                    .contains("apiserver.key", "client.key");
            assertThat(api.client().namespaces().list().getItems()).isNotEmpty();
        }
        assertThat(dir).doesNotExist();
    }

    @Test
    void anEtcdCommandLineNamesItsDataAndWalDirectories() {
        String[] args = {
            "-data-dir", "/tmp/etcddata1", "-wal-dir", "/tmp/etcdwal2", "--listen-client-urls", "x"
        };
        assertThat(ApiServerFixture.etcdDirectories(args))
                .containsExactly(Path.of("/tmp/etcddata1"), Path.of("/tmp/etcdwal2"));
        assertThat(ApiServerFixture.etcdDirectories(new String[] {"-data-dir"}))
                .isEqualTo(List.of());
    }
}
