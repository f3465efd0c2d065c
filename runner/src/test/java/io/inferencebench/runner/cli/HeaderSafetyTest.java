package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Extra headers: hop-by-hop and framing headers are refused by name (the runner frames its own
 * requests), and a header value or API key is never printed, also when it is refused.
 */
class HeaderSafetyTest {

    private static final String SECRET = "sk-Zq81secretvalue";

    private static TrueNumbersTest.Outcome refused(StubServer server, Path dir, String... more) {
        List<String> args =
                TrueNumbersTest.quick(
                        server.baseUrl(), dir.resolve("r-" + System.nanoTime()), 2, more);
        TrueNumbersTest.Outcome o = StartupErrorsTest.usage(args.toArray(String[]::new));
        assertThat(server.requests()).as("nothing is sent").isZero();
        return o;
    }

    @Test
    void hopByHopAndFramingHeadersAreRefusedByNameBeforeAnythingIsSent(@TempDir Path dir)
            throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 0, true))) {
            // Sent as given, these made a request both chunked and of a fixed length.
            assertThat(refused(server, dir, "--header", "Transfer-Encoding=chunked").err())
                    .contains("--header Transfer-Encoding: Transfer-Encoding is a hop-by-hop or")
                    .doesNotContain("chunked");
            for (String name :
                    List.of(
                            "Host",
                            "connection",
                            "Content-Length",
                            "Keep-Alive",
                            "TE",
                            "Upgrade")) {
                assertThat(refused(server, dir, "--header", name + "=x").err())
                        .contains("--header " + name + ": ")
                        .contains("hop-by-hop or framing header")
                        // not the JDK's wording ("restricted header name")
                        .doesNotContain("restricted");
            }
            assertThat(refused(server, dir, "--header", "Host=llm.internal").err())
                    .contains("put the host name in the URL");

            Path config = dir.resolve("bench.yaml");
            Files.writeString(
                    config,
                    """
                    target:
                      headers: {Connection: close, X-Tenant: a}
                    """);
            assertThat(refused(server, dir, "--config", config.toString()).err())
                    .contains("--config " + config + ": target.headers.Connection: ")
                    .contains("hop-by-hop");
        }
    }

    @Test
    void aHeaderValueOrApiKeyWithALineBreakIsRefusedNamingTheHeaderNotTheSecret(@TempDir Path dir)
            throws Exception {
        try (StubServer server = new StubServer(new OpenAiStub(0, 0, true))) {
            String err =
                    refused(server, dir, "--header", "X-Api-Key=" + SECRET + "\r\nX-Evil: 1").err();
            assertThat(err)
                    .contains("--header X-Api-Key: the value contains a line break")
                    .doesNotContain(SECRET)
                    .doesNotContain("X-Evil");
            assertThat(refused(server, dir, "--header", "X-Api-Key=" + SECRET + "\u0000").err())
                    .contains("--header X-Api-Key: ")
                    .doesNotContain(SECRET);
            // A name with a line break is shown escaped, never raw.
            assertThat(refused(server, dir, "--header", "X-A\nX-B=" + SECRET).err())
                    .contains("--header X-A\\x0aX-B: a header name must be an HTTP token")
                    .doesNotContain(SECRET);
            // NAME: VALUE instead of NAME=VALUE: the whole argument may be the credential.
            assertThat(refused(server, dir, "--header", "Authorization: Bearer " + SECRET).err())
                    .contains("--header: the 1st --header is not NAME=VALUE (write NAME=VALUE")
                    .doesNotContain(SECRET);

            Path key = dir.resolve("key");
            Files.writeString(key, SECRET + "\nsecond-line\n");
            assertThat(refused(server, dir, "--api-key-file", key.toString()).err())
                    .contains("--api-key-file: " + key + " holds a line break")
                    .doesNotContain(SECRET)
                    .doesNotContain("second-line");

            Path config = dir.resolve("bench.yaml");
            Files.writeString(
                    config, "target:\n  headers: {X-Token: \"" + SECRET + "\\r\\nX-Evil: 1\"}\n");
            assertThat(refused(server, dir, "--config", config.toString()).err())
                    .contains("target.headers.X-Token: the value contains a line break")
                    .doesNotContain(SECRET);
        }
    }

    @Test
    void ordinaryHeadersAndATrailingNewlineInTheKeyFileAreSent(@TempDir Path dir) throws Exception {
        TlsTest.Recording handler = new TlsTest.Recording();
        try (StubServer server = new StubServer(handler)) {
            TrueNumbersTest.Outcome ok =
                    TlsTest.run(server.baseUrl(), dir, "--header", "X-Tenant=team\ta");
            assertThat(ok.code()).as(ok.err()).isZero();
            assertThat(handler.authorization).containsOnly("Bearer sk-tls-secret");
        }
    }
}
