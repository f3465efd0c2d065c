package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
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
                                    argv("--request-rate inf --num-prompts 30")));
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
                                    argv(
                                            "--request-rate inf --num-prompts 30 --max-failure-ratio 0.5")));
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
                                    argv("--request-rate 20 --num-prompts 30")));
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
                                    argv("--request-rate inf --num-prompts 3")));
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
                                    argv("--request-rate inf,inf --num-prompts 10")));
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

    /** The paths after {@code prefix} on the lines of {@code out} that start with it. */
    static List<Path> printedPaths(String out, String prefix) {
        return out.lines()
                .filter(l -> l.startsWith(prefix))
                .map(l -> l.substring(prefix.length()))
                .map(l -> l.contains(" (") ? l.substring(0, l.indexOf(" (")) : l)
                .map(Path::of)
                .toList();
    }

    @Test
    void aDiskThatFillsUpLeavesNoPartialFileAndTheFilesWrittenStillCompareAndReport(
            @TempDir Path dir) throws Exception {
        try (SmallTmpfs disk = SmallTmpfs.mountOrSkip(64);
                StubServer server = new StubServer(new OpenAiStub(1, 0, true))) {
            Path results = disk.dir.resolve("r");
            Path outputs = Files.createDirectory(disk.dir.resolve("out"));
            Path oldReport = Files.writeString(outputs.resolve("report.html"), "the last report");
            Path oldComparison =
                    Files.writeString(outputs.resolve("comparison.json"), "{\"last\": true}");
            // Each profile is some 8.5 KiB (three 4 KiB pages): the 64 KiB disk fills up within
            // these eight stages.
            TrueNumbersTest.Outcome o =
                    run(
                            args(
                                    server.baseUrl(),
                                    results,
                                    argv(
                                            "--request-rate 100,200,300,400,500,600,700,800 --num-prompts 10")));
            assertThat(o.code()).as(o.out() + o.err()).isEqualTo(1);
            List<Path> written = printedPaths(o.out(), "profile: ");
            List<Path> lost = printedPaths(o.out(), "profile NOT written: ");
            assertThat(written).as(o.out()).isNotEmpty();
            assertThat(lost).as(o.out()).isNotEmpty();
            assertThat(written.size() + lost.size()).isEqualTo(8);
            assertThat(o.out()).contains("No space left on device");
            // Nothing under a name reported as not written; complete JSON under every other
            // name, and no temporary file left behind.
            for (Path p : lost) {
                assertThat(p).doesNotExist();
            }
            List<Path> files;
            try (Stream<Path> list = Files.list(results)) {
                files = list.sorted().toList();
            }
            assertThat(files).containsExactlyInAnyOrderElementsOf(written);
            for (Path p : written) {
                JsonNode doc = new ObjectMapper().readTree(p.toFile());
                assertThat(doc.at("/metrics/completed").asInt()).as(p.toString()).isEqualTo(10);
            }

            // compare and report read the directory as it is.
            TrueNumbersTest.Outcome compare =
                    TrueNumbersTest.run("compare", results.toString(), results.toString());
            assertThat(compare.code()).as(compare.out() + compare.err()).isZero();
            assertThat(compare.out()).contains("verdict: no significant change");
            Path html = dir.resolve("report.html");
            TrueNumbersTest.Outcome report =
                    TrueNumbersTest.run("report", results.toString(), "-o", html.toString());
            assertThat(report.code()).as(report.out() + report.err()).isZero();
            String page = Files.readString(html);
            for (Path p : written) {
                assertThat(page).contains(p.getFileName().toString());
            }

            // On the full disk a new report or comparison is refused, and the previous one is
            // kept whole: never a truncated file under the name asked for.
            disk.fill();
            TrueNumbersTest.Outcome full =
                    TrueNumbersTest.run("report", results.toString(), "-o", oldReport.toString());
            assertThat(full.code()).as(full.out() + full.err()).isEqualTo(2);
            assertThat(full.err()).contains("--output").contains("No space left on device");
            assertThat(oldReport).hasContent("the last report");
            full =
                    TrueNumbersTest.run(
                            "compare",
                            results.toString(),
                            results.toString(),
                            "-o",
                            oldComparison.toString());
            assertThat(full.code()).as(full.out() + full.err()).isEqualTo(2);
            assertThat(full.err()).contains("--output").contains("No space left on device");
            assertThat(oldComparison).hasContent("{\"last\": true}");
            Path fresh = outputs.resolve("new.json");
            full =
                    TrueNumbersTest.run(
                            "compare",
                            results.toString(),
                            results.toString(),
                            "-o",
                            fresh.toString());
            assertThat(full.code()).isEqualTo(2);
            assertThat(fresh).doesNotExist();
            try (Stream<Path> list = Files.list(outputs)) {
                assertThat(list.map(p -> p.getFileName().toString()))
                        .containsExactlyInAnyOrder("report.html", "comparison.json");
            }
        }
    }

    @Test
    void aModelIdOf300CharactersStillHasItsProfileUnderABoundedName(@TempDir Path dir)
            throws Exception {
        String model = "acme/" + "m".repeat(300);
        try (StubServer server = new StubServer(new OpenAiStub(1, 0, true))) {
            Path results = dir.resolve("r");
            List<String> a =
                    new java.util.ArrayList<>(
                            args(
                                    server.baseUrl(),
                                    results,
                                    argv("--request-rate inf --num-prompts 3")));
            a.set(a.indexOf("--model") + 1, model);
            TrueNumbersTest.Outcome o = run(a);
            // Before: "File name too long", the profile lost.
            assertThat(o.code()).as(o.out() + o.err()).isZero();
            List<Path> written = printedPaths(o.out(), "profile: ");
            assertThat(written).hasSize(1);
            String name = written.get(0).getFileName().toString();
            assertThat(name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
                    .isLessThanOrEqualTo(255);
            assertThat(name).startsWith("openai-infqps-mmmm").endsWith(".json");
            JsonNode doc = new ObjectMapper().readTree(written.get(0).toFile());
            assertThat(doc.at("/dimensions/model_id").asText()).isEqualTo(model);
            assertThat(doc.at("/config/model").asText()).isEqualTo(model);
        }
    }
}
