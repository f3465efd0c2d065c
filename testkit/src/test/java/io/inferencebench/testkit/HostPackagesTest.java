package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * e2e/scripts/provision-host-packages.sh on a PATH without the tools it provides (the host's own
 * commands minus the masked ones), with a stand-in apt-get that records its calls and "installs" a
 * package by putting its command on that PATH: a fresh machine as far as the script can tell, and
 * nothing on the host changes.
 */
class HostPackagesTest {

    /** What the stand-in apt-get puts on PATH per package. */
    private static final Map<String, String> COMMANDS =
            Map.of(
                    "jq", "jq",
                    "nftables", "nft",
                    "iproute2", "ip",
                    "python3", "python3",
                    "procps", "pkill",
                    "gcc", "gcc");

    /** Masked: the tools under test plus what would let the script escape the stand-ins. */
    private static final Set<String> MASKED =
            Set.of("jq", "nft", "ip", "python3", "pkill", "gcc", "apt-get", "sudo", "id");

    @TempDir Path dir;
    Path bin;
    Path calls;
    Path script;

    @BeforeEach
    void freshHost() throws IOException {
        script = RealNode.findScript("e2e/scripts/provision-host-packages.sh");
        assumeTrue(script != null, "provision-host-packages.sh above the working directory");
        bin = Files.createDirectories(dir.resolve("bin"));
        calls = dir.resolve("apt-get.calls");
        for (String d : List.of("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin")) {
            Path source = Path.of(d);
            if (!Files.isDirectory(source)) {
                continue;
            }
            try (Stream<Path> files = Files.list(source)) {
                for (Path f : files.toList()) {
                    Path link = bin.resolve(f.getFileName().toString());
                    if (!MASKED.contains(f.getFileName().toString())
                            && Files.isExecutable(f)
                            && !Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                        Files.createSymbolicLink(link, f);
                    }
                }
            }
        }
        executable("id", "#!/bin/sh\n[ \"$1\" = -u ] && echo \"${FAKE_UID:-0}\" || echo uid=0\n");
    }

    private void executable(String name, String body) throws IOException {
        Path f = bin.resolve(name);
        Files.deleteIfExists(f);
        Files.writeString(f, body);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /** apt-get that logs "ENV args" and, for install, puts each package's command on PATH. */
    private void aptGet(boolean installs) throws IOException {
        StringBuilder provide = new StringBuilder();
        COMMANDS.forEach(
                (pkg, cmd) ->
                        provide.append(
                                "    %s) printf '#!/bin/sh\\n[ \"$1\" = -print-file-name=libc.a ] && echo /usr/lib/libc.a\\nexit 0\\n' > \"%s/%s\"; chmod +x \"%s/%s\" ;;\n"
                                        .formatted(pkg, bin, cmd, bin, cmd)));
        executable(
                "apt-get",
                "#!/bin/bash\n"
                        + "echo \"DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-} $*\" >> '"
                        + calls
                        + "'\n"
                        + "[[ \" $* \" == *' install '* ]] || exit 0\n"
                        + (installs
                                ? "for p in \"$@\"; do\n  case \"$p\" in\n"
                                        + provide
                                        + "  esac\ndone\n"
                                : "")
                        + "exit 0\n");
    }

    private record Result(int exit, String output) {}

    private Result run(Map<String, String> env, String... tools) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(script.toString()));
        command.addAll(List.of(tools));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("PATH", bin.toString());
        pb.environment().put("IB_APT_LOCK", dir.resolve("apt.lock").toString());
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(p.exitValue(), out);
    }

    private List<String> aptCalls() throws IOException {
        return Files.exists(calls) ? Files.readAllLines(calls) : List.of();
    }

    @Test
    void missingToolsAreInstalledAfterAnUpdateAndASecondRunInstallsNothing() throws Exception {
        aptGet(true);
        Result first = run(Map.of(), "jq", "nft", "ip", "gcc", "python3", "pkill");

        assertThat(first.exit()).as(first.output()).isZero();
        List<String> apt = aptCalls();
        assertThat(apt).hasSize(2);
        assertThat(apt.get(0)).contains(" update");
        assertThat(apt.get(1))
                .startsWith("DEBIAN_FRONTEND=noninteractive ")
                .contains(" install ", " -y ")
                .contains("jq", "nftables", "iproute2", "gcc", "libc6-dev", "python3", "procps");
        for (String cmd : List.of("jq", "nft", "ip", "gcc", "python3", "pkill")) {
            assertThat(bin.resolve(cmd)).isExecutable();
        }

        Result second = run(Map.of(), "jq", "nft", "ip", "gcc", "python3", "pkill");
        assertThat(second.exit()).as(second.output()).isZero();
        assertThat(second.output()).contains("present: jq nft ip gcc python3 pkill");
        assertThat(aptCalls()).as("no apt-get call when everything is present").hasSize(2);
    }

    @Test
    void aToolStillMissingAfterTheInstallFailsNamingIt() throws Exception {
        aptGet(false);
        Result r = run(Map.of(), "jq");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.output()).contains("apt-get installed jq but jq is still missing");
    }

    @Test
    void withoutRootItSaysWhatToInstallAndInstallsNothing() throws Exception {
        aptGet(true);
        Result r = run(Map.of("FAKE_UID", "1000"), "jq", "nft");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.output())
                .contains("missing jq nft: run as root")
                .contains("apt-get install jq nftables");
        assertThat(aptCalls()).isEmpty();
    }

    @Test
    void anUnknownToolIsRefusedBeforeAnything() throws Exception {
        aptGet(true);
        Result r = run(Map.of(), "jq", "kubectl");
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.output()).contains("unknown tool 'kubectl'");
        assertThat(aptCalls()).isEmpty();
    }
}
