package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.stub.StubServer;
import io.inferencebench.runner.stub.VocabularyStub;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Random prompts without a local tokenizer against a model whose vocabulary (60 ids here) is far
 * smaller than the ids a blind choice would draw: the server's /tokenize decides, else text; and a
 * warm-up answered "out of vocabulary" stops the run with the two ways to give a tokenizer.
 */
class ServerTokenizerCliTest {

    private static final int VOCABULARY = 60;

    private static List<Path> profiles(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }

    private static CliTest.Outcome run(StubServer server, Path results, String... extra) {
        List<String> args =
                new java.util.ArrayList<>(
                        java.util.Arrays.asList(
                                argv(
                                        "run --base-url %s --backend vllm --dataset-name random"
                                                + " --random-input-len 16 --random-output-len 4"
                                                + " --request-rate inf --max-concurrency 4"
                                                + " --num-prompts 12 --no-self-warmup --result-dir %s",
                                        server.baseUrl(), results)));
        args.addAll(List.of(extra));
        return CliTest.run(args.toArray(String[]::new));
    }

    @Test
    void completionsSendOnlyIdsTheServersTokenizerProduced(@TempDir Path dir) throws Exception {
        CliTest.ModelServer model = new CliTest.ModelServer(1, 0.2);
        VocabularyStub vocabulary = new VocabularyStub(VOCABULARY, true, model);
        try (StubServer server = new StubServer(vocabulary)) {
            CliTest.Outcome o = run(server, dir.resolve("r"));
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(o.err()).contains("built with the server's tokenizer");
            assertThat(vocabulary.rejected).hasValue(0);
            assertThat(model.stub.bodies).hasSize(12);
            for (JsonNode body : model.stub.bodies) {
                JsonNode prompt = body.path("prompt");
                assertThat(prompt.isArray()).isTrue();
                assertThat(prompt.size()).isEqualTo(16);
                prompt.forEach(id -> assertThat(id.asInt()).isBetween(0, VOCABULARY - 1));
            }
            JsonNode profile =
                    new ObjectMapper().readTree(profiles(dir.resolve("r")).get(0).toFile());
            assertThat(profile.at("/dimensions/prompt_format").asText()).isEqualTo("token_ids");
            assertThat(profile.at("/metrics/completed").asInt()).isEqualTo(12);
        }
    }

    @Test
    void chatTextIsExactByTheServersCount(@TempDir Path dir) throws Exception {
        CliTest.ModelServer model = new CliTest.ModelServer(1, 0.2);
        VocabularyStub vocabulary = new VocabularyStub(VOCABULARY, true, model);
        try (StubServer server = new StubServer(vocabulary)) {
            CliTest.Outcome o = run(server, dir.resolve("r"), "--api", "chat");
            assertThat(o.code()).as(o.err()).isZero();
            // The probe, the id pool, then at least one count per prompt.
            assertThat(vocabulary.tokenizeCalls.get()).isGreaterThanOrEqualTo(2 + 12);
            for (JsonNode body : model.stub.bodies) {
                String content = body.at("/messages/0/content").asText();
                // The stub's tokenizer is one word per token, so the server counts 16.
                assertThat(content.trim().split("\\s+")).hasSize(16);
            }
        }
    }

    @Test
    void withoutTokenizeEndpointsPromptsAreTextLabelledApproximate(@TempDir Path dir)
            throws Exception {
        CliTest.ModelServer model = new CliTest.ModelServer(1, 0.2);
        VocabularyStub vocabulary = new VocabularyStub(VOCABULARY, false, model);
        try (StubServer server = new StubServer(vocabulary)) {
            CliTest.Outcome o = run(server, dir.resolve("r"));
            assertThat(o.code()).as(o.err()).isZero();
            assertThat(o.err()).contains("/tokenize did not answer").contains("HTTP 404");
            assertThat(o.err()).contains("prompts random (approximation)");
            assertThat(vocabulary.rejected).hasValue(0);
            assertThat(model.stub.bodies)
                    .allSatisfy(b -> assertThat(b.path("prompt").isTextual()).isTrue());
            JsonNode profile =
                    new ObjectMapper().readTree(profiles(dir.resolve("r")).get(0).toFile());
            assertThat(profile.at("/dimensions/prompt_format").asText()).isEqualTo("text");
        }
    }

    @Test
    void outOfVocabularyInTheWarmUpStopsBeforeAnyStage(@TempDir Path dir) throws Exception {
        CliTest.ModelServer model = new CliTest.ModelServer(1, 0.2);
        VocabularyStub vocabulary = new VocabularyStub(VOCABULARY, false, model);
        try (StubServer server = new StubServer(vocabulary)) {
            // Ids drawn blind (no tokenizer anywhere), no warm-up asked for: one check request.
            CliTest.Outcome o = run(server, dir.resolve("r"), "--prompt-format", "token-ids");
            assertThat(o.code()).as(o.err()).isEqualTo(2);
            assertThat(o.err())
                    .contains("is out of vocabulary")
                    .contains("--tokenizer")
                    .contains("spec.workload.tokenizer")
                    .contains("No stage was run");
            assertThat(vocabulary.rejected).hasValue(1);
            assertThat(model.stub.bodies).isEmpty();
            assertThat(profiles(dir.resolve("r"))).isEmpty();
        }
    }
}
