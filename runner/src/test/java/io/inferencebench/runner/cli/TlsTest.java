package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.SelfSignedCertificate;
import io.inferencebench.runner.stub.StubServer;
import io.inferencebench.runner.stub.VocabularyStub;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An https target's certificate is checked; the API key never goes to an unverified server. */
class TlsTest {

    static final class Recording implements StubServer.Handler {
        final OpenAiStub stub = new OpenAiStub(1, 0, true);
        final ConcurrentLinkedQueue<String> authorization = new ConcurrentLinkedQueue<>();

        @Override
        public void handle(StubServer.Request request, StubServer.Exchange exchange)
                throws Exception {
            if (request.header("authorization") != null) {
                authorization.add(request.header("authorization"));
            }
            stub.handle(request, exchange);
        }
    }

    static TrueNumbersTest.Outcome run(String baseUrl, Path dir, String... more) throws Exception {
        Path key = dir.resolve("key");
        Files.writeString(key, "sk-tls-secret\n");
        List<String> args =
                TrueNumbersTest.quick(
                        baseUrl,
                        dir.resolve("r-" + System.nanoTime()),
                        3,
                        "--api-key-file",
                        key.toString());
        args.addAll(List.of(more));
        return TrueNumbersTest.run(args.toArray(String[]::new));
    }

    @Test
    void aSelfSignedCertificateIsRefusedWithoutItsCaAndAcceptedWithItOrTheOptOut(@TempDir Path dir)
            throws Exception {
        SelfSignedCertificate cert =
                SelfSignedCertificate.create(dir, "ip:127.0.0.1,dns:localhost");
        Recording handler = new Recording();
        try (StubServer server = new StubServer(handler, cert.serverContext())) {
            // Refused: classified as tls with the reason; nothing reached the server.
            TrueNumbersTest.Outcome refused = run(server.baseUrl(), dir);
            assertThat(refused.code()).as(refused.err()).isEqualTo(1);
            assertThat(refused.err())
                    .contains("tls x3")
                    .contains("not signed by a trusted CA")
                    .contains("--ca-cert")
                    .contains("no successful request (tls: 3)");
            assertThat(handler.authorization).isEmpty();
            assertThat(handler.stub.bodies).isEmpty();

            TrueNumbersTest.Outcome trusted =
                    run(server.baseUrl(), dir, "--ca-cert", cert.pem().toString());
            assertThat(trusted.code()).as(trusted.err()).isZero();
            assertThat(trusted.err()).doesNotContain("WARNING");
            assertThat(handler.authorization).containsOnly("Bearer sk-tls-secret");

            TrueNumbersTest.Outcome skipped =
                    run(server.baseUrl(), dir, "--insecure-skip-tls-verify");
            assertThat(skipped.code()).as(skipped.err()).isZero();
            assertThat(skipped.err())
                    .contains("WARNING: --insecure-skip-tls-verify")
                    .contains("NOT checked")
                    .contains("API key");
        }
    }

    @Test
    void theHostNameIsVerifiedAndServerNameChoosesWhichOne(@TempDir Path dir) throws Exception {
        SelfSignedCertificate cert = SelfSignedCertificate.create(dir, "dns:llm.bench.internal");
        try (StubServer server = new StubServer(new Recording(), cert.serverContext())) {
            // Trusted CA, but the certificate does not name 127.0.0.1.
            TrueNumbersTest.Outcome wrongName =
                    run(server.baseUrl(), dir, "--ca-cert", cert.pem().toString());
            assertThat(wrongName.code()).as(wrongName.err()).isEqualTo(1);
            assertThat(wrongName.err())
                    .contains(
                            "tls x3, first: hostname mismatch: the certificate does not name this host")
                    .contains("--tls-server-name");
            Path results = dir.resolve("named");
            TrueNumbersTest.Outcome named =
                    TrueNumbersTest.run(
                            TrueNumbersTest.quick(
                                            server.baseUrl(),
                                            results,
                                            3,
                                            "--ca-cert",
                                            cert.pem().toString(),
                                            "--tls-server-name",
                                            "llm.bench.internal")
                                    .toArray(String[]::new));
            assertThat(named.code()).as(named.err()).isZero();
            JsonNode m = TrueNumbersTest.profiles(results).get(0).get("metrics");
            assertThat(m.get("completed").asInt()).isEqualTo(3);
        }
    }

    @Test
    void anExpiredOrNotYetValidCertificateIsSaidToBeSoWithItsDate(@TempDir Path dir)
            throws Exception {
        SelfSignedCertificate expired =
                SelfSignedCertificate.issued(
                        Files.createDirectories(dir.resolve("expired")), "ip:127.0.0.1", "-10d", 2);
        Recording handler = new Recording();
        try (StubServer server = new StubServer(handler, expired.serverContext())) {
            TrueNumbersTest.Outcome o =
                    run(server.baseUrl(), dir, "--ca-cert", expired.pem().toString());
            assertThat(o.code()).as(o.err()).isEqualTo(1);
            assertThat(o.err())
                    .contains(
                            "tls x3, first: certificate expired: the server's certificate (or one"
                                    + " of its chain) is valid only until ")
                    .containsPattern(
                            "until \\w{3} \\w{3} \\d{2} [0-9:]{8} \\w+ \\d{4} \\(notAfter\\)")
                    .contains("renew it, or check this machine's clock")
                    .doesNotContain("not signed by a trusted CA");
            assertThat(handler.stub.bodies).isEmpty();
        }
        SelfSignedCertificate future =
                SelfSignedCertificate.issued(
                        Files.createDirectories(dir.resolve("future")), "ip:127.0.0.1", "+10d", 5);
        try (StubServer server = new StubServer(new Recording(), future.serverContext())) {
            TrueNumbersTest.Outcome o =
                    run(server.baseUrl(), dir, "--ca-cert", future.pem().toString());
            assertThat(o.code()).as(o.err()).isEqualTo(1);
            assertThat(o.err())
                    .contains("tls x3, first: certificate not yet valid: ")
                    .contains("(notBefore)");
        }
    }

    /** A vLLM-like server: /tokenize and /detokenize, completions, and one gauge on /metrics. */
    private static StubServer.Handler tokenizingServerWithMetrics() {
        VocabularyStub vocabulary = new VocabularyStub(60, true, new CliTest.ModelServer(1, 0.2));
        return (request, exchange) -> {
            if (request.path().equals("/metrics")) {
                exchange.respond(
                        200,
                        "text/plain; version=0.0.4",
                        "# TYPE vllm:num_requests_running gauge\n"
                                + "vllm:num_requests_running{model_name=\"m\"} 1\n");
                return;
            }
            vocabulary.handle(request, exchange);
        };
    }

    @Test
    void theTokenizeProbeAndTheMetricsScrapeCheckAsTheLoadDoes(@TempDir Path dir) throws Exception {
        // The certificate names only llm.bench.internal: the URL's 127.0.0.1 passes with
        // --tls-server-name, on every connection (load, /tokenize, /metrics).
        SelfSignedCertificate cert = SelfSignedCertificate.create(dir, "dns:llm.bench.internal");
        try (StubServer server =
                new StubServer(tokenizingServerWithMetrics(), cert.serverContext())) {
            List<List<String>> settings =
                    List.of(
                            List.of(
                                    "--ca-cert",
                                    cert.pem().toString(),
                                    "--tls-server-name",
                                    "llm.bench.internal"),
                            List.of("--insecure-skip-tls-verify"));
            for (List<String> tls : settings) {
                Path results = dir.resolve("r-" + tls.size());
                List<String> args =
                        new ArrayList<>(
                                List.of(
                                        "run",
                                        "--base-url",
                                        server.baseUrl(),
                                        "--backend",
                                        "vllm",
                                        "--random-input-len",
                                        "16",
                                        "--random-output-len",
                                        "4",
                                        "--request-rate",
                                        "inf",
                                        "--num-prompts",
                                        "6",
                                        "--no-self-warmup",
                                        "--progress",
                                        "none",
                                        "--cooldown",
                                        "0",
                                        "--scrape-metrics",
                                        "--scrape-interval",
                                        "100ms",
                                        // TLS is under test, not speed: a handshake on a busy
                                        // machine may take longer than the 100 ms interval
                                        "--scrape-timeout",
                                        "5s",
                                        "--result-dir",
                                        results.toString()));
                args.addAll(tls);
                TrueNumbersTest.Outcome o = TrueNumbersTest.run(args.toArray(String[]::new));
                assertThat(o.code()).as(tls + ": " + o.err()).isZero();
                assertThat(o.err())
                        .as(tls.toString())
                        .contains("prompts: 6 built with the server's tokenizer")
                        .doesNotContain("PKIX")
                        .doesNotContain("did not answer")
                        .doesNotContain("warning: server metrics");
                JsonNode m = TrueNumbersTest.profiles(results).get(0).get("metrics");
                assertThat(m.at("/server_metrics_coverage/ratio").asDouble())
                        .as(tls + " coverage")
                        .isEqualTo(1.0);
                assertThat(m.at("/server_metrics_coverage/succeeded").asInt()).isPositive();
                assertThat(m.get("completed").asInt()).isEqualTo(6);
            }
        }
    }

    @Test
    void tlsFlagsAreCheckedAtStartUp(@TempDir Path dir) throws Exception {
        assertThat(
                        StartupErrorsTest.usage(
                                        argv(
                                                "run --base-url http://127.0.0.1:8000 --ca-cert /nonexistent.pem"))
                                .err())
                .contains("--ca-cert: applies only to an https:// --base-url");
        Path notPem = dir.resolve("not.pem");
        Files.writeString(notPem, "hello");
        assertThat(
                        StartupErrorsTest.usage(
                                        "run",
                                        "--base-url",
                                        "https://127.0.0.1:8443",
                                        "--ca-cert",
                                        notPem.toString())
                                .err())
                .contains("--ca-cert: " + notPem);
    }
}
