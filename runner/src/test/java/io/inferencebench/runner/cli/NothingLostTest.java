package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Failures are counted, classified and decide the exit code; no result is silently lost. */
class NothingLostTest {

    static TrueNumbersTest.Outcome run(List<String> args) {
        return TrueNumbersTest.run(args.toArray(String[]::new));
    }

    static List<String> args(String baseUrl, Path results, String... more) {
        List<String> a = new java.util.ArrayList<>(TrueNumbersTest.common(baseUrl, results, more));
        a.addAll(List.of("--random-output-len", "4"));
        return a;
    }

    /** Answers every third request with 429, the others like an OpenAI server. */
    static final class RateLimiting implements StubServer.Handler {
        final OpenAiStub stub = new OpenAiStub(1, 0, true);
        final AtomicInteger count = new AtomicInteger();

        @Override
        public void handle(StubServer.Request request, StubServer.Exchange exchange)
                throws Exception {
            if (count.incrementAndGet() % 3 == 0) {
                exchange.respond(
                        429, "application/json", "{\"error\":{\"message\":\"rate limited\"}}");
                return;
            }
            stub.handle(request, exchange);
        }
    }

    @Test
    void rateLimitedRequestsAreHttp429AndAFailureRatioAboveTheLimitExitsOne(@TempDir Path dir)
            throws Exception {
        try (StubServer server = new StubServer(new RateLimiting())) {
            Path results = dir.resolve("r");
            TrueNumbersTest.Outcome o =
                    run(
                            args(
                                    server.baseUrl(),
                                    results,
                                    "--request-rate",
                                    "inf",
                                    "--num-prompts",
                                    "30"));
            assertThat(o.code()).as(o.err()).isEqualTo(1);
            assertThat(o.err())
                    .contains("stage 1: 33.3 % of requests failed (http_429: 10)")
                    .contains("--max-failure-ratio")
                    .doesNotContain("\tat ");
            JsonNode m = TrueNumbersTest.profiles(results).get(0).get("metrics");
            assertThat(m.at("/errors_by_class/http_429").asInt()).isEqualTo(10);
            assertThat(m.at("/errors_by_class/http_4xx").asInt()).isZero();
            // The summary is printed and the profile written all the same.
            assertThat(o.out()).contains("ttft p50").contains("profile: ");
        }
        try (StubServer server = new StubServer(new RateLimiting())) {
            TrueNumbersTest.Outcome o =
                    run(
                            args(
                                    server.baseUrl(),
                                    dir.resolve("r2"),
                                    "--request-rate",
                                    "inf",
                                    "--num-prompts",
                                    "30",
                                    "--max-failure-ratio",
                                    "0.5"));
            assertThat(o.code()).as(o.err()).isZero();
        }
    }

    @Test
    void aServerThatDiesMidStageMakesClassifiedFailuresAndExitOne(@TempDir Path dir)
            throws Exception {
        AtomicReference<StubServer> self = new AtomicReference<>();
        OpenAiStub stub = new OpenAiStub(1, 0, true);
        AtomicInteger count = new AtomicInteger();
        StubServer server =
                new StubServer(
                        (req, ex) -> {
                            if (count.incrementAndGet() == 10) {
                                self.get().close();
                                return;
                            }
                            stub.handle(req, ex);
                        });
        self.set(server);
        try (server) {
            Path results = dir.resolve("r");
            TrueNumbersTest.Outcome o =
                    run(
                            args(
                                    server.baseUrl(),
                                    results,
                                    "--request-rate",
                                    "20",
                                    "--num-prompts",
                                    "30"));
            assertThat(o.code()).as(o.err()).isEqualTo(1);
            JsonNode m = TrueNumbersTest.profiles(results).get(0).get("metrics");
            // At most the responses the server finished writing before it died count as
            // completed (closing its sockets may still reset one on the wire).
            int completed = m.get("completed").asInt();
            assertThat(completed).isBetween(0, stub.written.size());
            assertThat(stub.written.size()).isLessThan(10);
            assertThat(m.get("failures").asInt()).isEqualTo(30 - completed);
            long classified =
                    m.at("/errors_by_class/connect").asLong()
                            + m.at("/errors_by_class/reset").asLong();
            assertThat(classified).isEqualTo(30 - completed);
            assertThat(o.err())
                    .containsPattern(
                            "stage 1: (no successful request|.* of requests failed) \\(connect: ");
            assertThat(o.out()).contains("profile: ");
        }
    }

    @Test
    void anUnusableResultDirectoryIsRefusedBeforeAnyRequest(@TempDir Path dir) throws Exception {
        OpenAiStub stub = new OpenAiStub(1, 0, true);
        try (StubServer server = new StubServer(stub)) {
            Path file = dir.resolve("a-file");
            Files.writeString(file, "not a directory");
            TrueNumbersTest.Outcome o =
                    run(
                            args(
                                    server.baseUrl(),
                                    file.resolve("results"),
                                    "--request-rate",
                                    "inf",
                                    "--num-prompts",
                                    "3"));
            assertThat(o.code()).as(o.err()).isEqualTo(2);
            assertThat(o.err()).contains("--result-dir").contains(file.toString());
            assertThat(server.requests()).isZero();
        }
    }

    @Test
    void aProfileThatCannotBeWrittenIsNamedAndTheSweepGoesOn(@TempDir Path dir) throws Exception {
        Path results = dir.resolve("r");
        OpenAiStub stub = new OpenAiStub(1, 0, true);
        AtomicInteger count = new AtomicInteger();
        // After the start-up check passed, the directory is replaced by a file: every write
        // into it fails from then on, as on a disk that filled up.
        try (StubServer server =
                new StubServer(
                        (req, ex) -> {
                            if (count.incrementAndGet() == 1) {
                                Files.delete(results);
                                Files.writeString(results, "in the way");
                            }
                            stub.handle(req, ex);
                        })) {
            TrueNumbersTest.Outcome o =
                    run(
                            args(
                                    server.baseUrl(),
                                    results,
                                    "--request-rate",
                                    "inf,inf",
                                    "--num-prompts",
                                    "10"));
            assertThat(o.code()).as(o.err()).isEqualTo(1);
            // Both stages ran, both are in the summary, and each lost file is named in full.
            assertThat(server.requests()).isEqualTo(20);
            assertThat(o.out().lines().filter(l -> l.matches("\\s+[12]\\s+inf.*"))).hasSize(2);
            assertThat(o.err())
                    .contains("error: stage 1: profile not written to " + results.toAbsolutePath())
                    .contains("error: stage 2: profile not written to " + results.toAbsolutePath())
                    .contains("retried once");
            assertThat(o.out()).contains("profile NOT written: " + results.toAbsolutePath());
        }
    }
}
