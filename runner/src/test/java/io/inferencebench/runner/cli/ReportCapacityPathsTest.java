package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code report} of a capacity.json reads the probe profiles it names only inside its own
 * directory, and a file that fails to parse is named with the place, never quoted.
 */
class ReportCapacityPathsTest {

    private static final String SECRET = "topsecret-token-8842";

    private static TrueNumbersTest.Outcome report(Path capacity, Path out) {
        return StartupErrorsTest.usage("report", capacity.toString(), "--output", out.toString());
    }

    private static Path capacity(Path dir, String profile) throws Exception {
        Path file = dir.resolve("capacity.json");
        Files.writeString(
                file,
                "{\"max_request_rate\": 4.0, \"probes\": [{\"rate\": 4.0, \"profile\": \""
                        + profile.replace("\\", "\\\\")
                        + "\"}]}");
        return file;
    }

    @Test
    void probeProfilesOutsideTheDirectoryOfTheCapacityFileAreRefused(@TempDir Path tmp)
            throws Exception {
        Path outside = tmp.resolve("secret.json");
        Files.writeString(outside, SECRET + " is not JSON\n");
        Path search = Files.createDirectories(tmp.resolve("search"));
        Path out = tmp.resolve("report.html");

        String absolute = report(capacity(search, outside.toString()), out).err();
        assertThat(absolute)
                .contains("probes[0].profile: '" + outside + "' is an absolute path")
                .doesNotContain(SECRET);

        for (String escaping : new String[] {"../secret.json", "sub/../../secret.json"}) {
            assertThat(report(capacity(search, escaping), out).err())
                    .as(escaping)
                    .contains("probes[0].profile: '" + escaping + "' leaves the directory")
                    .doesNotContain(SECRET);
        }

        Files.createSymbolicLink(search.resolve("probe-1.json"), outside);
        assertThat(report(capacity(search, "probe-1.json"), out).err())
                .contains("'probe-1.json' is a link that leads outside " + search)
                .doesNotContain(SECRET);

        assertThat(report(capacity(search, "missing.json"), out).err())
                .contains("'missing.json' is not a file in " + search);
        assertThat(Files.exists(out)).isFalse();
    }

    @Test
    void aProbeProfileThatIsNotJsonIsNamedWithItsPlaceNotItsContent(@TempDir Path tmp)
            throws Exception {
        Path search = Files.createDirectories(tmp.resolve("search"));
        Files.writeString(search.resolve("probe-1.json"), "{\"metrics\": " + SECRET + "}\n");
        assertThat(report(capacity(search, "probe-1.json"), tmp.resolve("r.html")).err())
                .contains(search.resolve("probe-1.json") + " is not valid JSON (line 1, column ")
                .doesNotContain(SECRET)
                .doesNotContain("topsecret");
    }
}
