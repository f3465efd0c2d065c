package io.inferencebench.runner.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DatasetTest {

    static Path testTokenizer() {
        return Path.of("src/test/resources/tokenizer/tokenizer.json");
    }

    /** 50 token-id prompts of 50 to 150 tokens, each asking for 64, drawn with {@code seed}. */
    private static List<Prompt> fiftyTokenIdPrompts(long seed) throws Exception {
        return RandomDataset.generate(
                50,
                LengthDistribution.rangeRatio(100, 0.5),
                LengthDistribution.fixed(64),
                RandomDataset.local(true, null),
                seed);
    }

    @Test
    void randomTokenIdPromptsHaveExactLengthsAndAreReproducible() throws Exception {
        List<Prompt> a = fiftyTokenIdPrompts(7);
        List<Prompt> b = fiftyTokenIdPrompts(7);
        List<Prompt> c = fiftyTokenIdPrompts(8);
        for (int i = 0; i < a.size(); i++) {
            Prompt p = a.get(i);
            assertThat(p.tokenIds()).hasSize(p.inputTokens());
            assertThat(p.inputTokens()).isBetween(50, 150);
            assertThat(p.maxTokens()).isEqualTo(64);
            assertThat(p.inputSource()).isEqualTo("token_ids");
            assertThat(p.tokenIds()).isEqualTo(b.get(i).tokenIds());
        }
        assertThat(a.stream().mapToInt(Prompt::inputTokens).distinct().count()).isGreaterThan(10);
        assertThat(a.get(0).tokenIds()).isNotEqualTo(c.get(0).tokenIds());
    }

    @Test
    void normalLengthsCentreOnTheMean() throws Exception {
        List<Prompt> prompts =
                RandomDataset.generate(
                        2000,
                        LengthDistribution.normal(200, 20),
                        LengthDistribution.fixed(8),
                        RandomDataset.local(true, null),
                        1);
        double mean = prompts.stream().mapToInt(Prompt::inputTokens).average().orElseThrow();
        assertThat(mean).isBetween(197.0, 203.0);
    }

    @Test
    void vocabularySizeCountsAddedTokensThatRepeatVocabularyIdsOnce(
            @org.junit.jupiter.api.io.TempDir Path dir) throws IOException {
        com.fasterxml.jackson.databind.ObjectMapper json =
                new com.fasterxml.jackson.databind.ObjectMapper();
        var root =
                (com.fasterxml.jackson.databind.node.ObjectNode)
                        json.readTree(testTokenizer().toFile());
        int size = root.path("model").path("vocab").size();
        String first = root.path("model").path("vocab").fieldNames().next();
        var added = root.putArray("added_tokens");
        // a special token that is also in the vocabulary, and one beyond it
        added.addObject()
                .put("id", root.path("model").path("vocab").path(first).asInt())
                .put("content", first)
                .put("single_word", false)
                .put("lstrip", false)
                .put("rstrip", false)
                .put("normalized", false)
                .put("special", true);
        added.addObject()
                .put("id", size)
                .put("content", "<extra>")
                .put("single_word", false)
                .put("lstrip", false)
                .put("rstrip", false)
                .put("normalized", false)
                .put("special", true);
        Path file = dir.resolve("tokenizer.json");
        json.writeValue(file.toFile(), root);
        try (HfTokenizer tokenizer = HfTokenizer.load(file)) {
            assertThat(tokenizer.vocabSize()).isEqualTo(size + 1);
        }
    }

    @Test
    void randomTextIsExactWithATokenizer() throws Exception {
        try (HfTokenizer tokenizer = HfTokenizer.load(testTokenizer())) {
            List<Prompt> prompts =
                    RandomDataset.generate(
                            30,
                            LengthDistribution.rangeRatio(60, 0.5),
                            LengthDistribution.fixed(16),
                            RandomDataset.local(false, tokenizer),
                            3);
            for (Prompt p : prompts) {
                assertThat(p.inputSource()).isEqualTo("tokenizer");
                assertThat(tokenizer.count(p.text())).isEqualTo(p.inputTokens());
            }
            long exactTargets =
                    prompts.stream()
                            .filter(p -> p.inputTokens() >= 30 && p.inputTokens() <= 90)
                            .count();
            assertThat(exactTargets).isEqualTo(prompts.size());
        }
    }

    @Test
    void randomTextWithoutTokenizerIsLabelledApproximate() throws Exception {
        Prompt p =
                RandomDataset.generate(
                                1,
                                LengthDistribution.fixed(20),
                                LengthDistribution.fixed(5),
                                RandomDataset.local(false, null),
                                1)
                        .get(0);
        assertThat(p.inputSource()).isEqualTo("approximation");
        assertThat(p.text().split(" ")).hasSize(20);
    }

    @Test
    void shareGptTakesFirstTurnsFiltersAndSamplesWithASeed(@TempDir Path dir) throws IOException {
        StringBuilder json = new StringBuilder("[");
        for (int i = 0; i < 40; i++) {
            if (i > 0) {
                json.append(',');
            }
            String prompt = "question number " + i + " " + "word ".repeat(i * 3);
            String reply = "answer " + "text ".repeat(10 + i);
            json.append("{\"id\":\"")
                    .append(i)
                    .append("\",\"conversations\":[{\"from\":\"human\",\"value\":\"")
                    .append(prompt)
                    .append("\"},{\"from\":\"gpt\",\"value\":\"")
                    .append(reply)
                    .append("\"}]}");
        }
        json.append(
                ",{\"id\":\"short\",\"conversations\":[{\"from\":\"human\",\"value\":\"hi\"}]}]");
        Path file = dir.resolve("sharegpt.json");
        Files.writeString(file, json);
        try (HfTokenizer tokenizer = HfTokenizer.load(testTokenizer())) {
            FileDatasets.Filters filters = new FileDatasets.Filters(10, 60, 4, null, null, null);
            List<Prompt> a = FileDatasets.shareGpt(file, 20, filters, tokenizer, 5);
            List<Prompt> b = FileDatasets.shareGpt(file, 20, filters, tokenizer, 5);
            List<Prompt> c = FileDatasets.shareGpt(file, 20, filters, tokenizer, 6);
            assertThat(a).hasSize(20);
            assertThat(a).extracting(Prompt::text).isEqualTo(b.stream().map(Prompt::text).toList());
            assertThat(a)
                    .extracting(Prompt::text)
                    .isNotEqualTo(c.stream().map(Prompt::text).toList());
            for (Prompt p : a) {
                assertThat(p.inputTokens()).isBetween(10, 60).isEqualTo(tokenizer.count(p.text()));
                assertThat(p.text()).startsWith("question number");
                assertThat(p.maxTokens()).isGreaterThanOrEqualTo(10);
            }
        }
    }

    @Test
    void jsonlReadsPromptsMessagesAndMaxTokens(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("p.jsonl");
        Files.writeString(
                file,
                "{\"prompt\":\"the model server is fast\",\"max_tokens\":12}\n"
                        + "\n"
                        + "{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
                        + "{\"role\":\"user\",\"content\":\"what is latency\"}]}\n");
        List<Prompt> prompts =
                FileDatasets.jsonl(
                        file,
                        4,
                        new FileDatasets.Filters(null, null, null, null, null, null),
                        32,
                        null,
                        1);
        assertThat(prompts).hasSize(4);
        Prompt text = prompts.stream().filter(p -> p.text() != null).findFirst().orElseThrow();
        assertThat(text.maxTokens()).isEqualTo(12);
        assertThat(text.inputSource()).isEqualTo("approximation");
        Prompt chat = prompts.stream().filter(p -> p.messages() != null).findFirst().orElseThrow();
        assertThat(chat.maxTokens()).isEqualTo(32);
        assertThat(chat.messages()).hasSize(2);
        assertThat(chat.messages().get(0).role()).isEqualTo("system");
    }

    @Test
    void jsonlRejectsLinesWithoutPromptNamingTheLine(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("bad.jsonl");
        Files.writeString(file, "{\"prompt\":\"ok\"}\n{\"text\":\"no\"}\n");
        assertThatThrownBy(
                        () ->
                                FileDatasets.jsonl(
                                        file,
                                        1,
                                        new FileDatasets.Filters(
                                                null, null, null, null, null, null),
                                        null,
                                        null,
                                        1))
                .hasMessageContaining("line 2")
                .hasMessageContaining("\"prompt\"");
    }

    private static final FileDatasets.Filters NO_FILTERS =
            new FileDatasets.Filters(null, null, null, null, null, null);

    private static final byte[] BOM = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};

    private static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static byte[] utf8(String text) {
        return text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void aBinaryDatasetIsNotUtf8TextNamingTheFileTheLineAndTheOffset(@TempDir Path dir)
            throws IOException {
        // Far beyond any read-ahead buffer, so the line named is the line of the bad byte.
        String good = "{\"prompt\":\"the model server is fast, é\"}\n".repeat(2000);
        Path jsonl = dir.resolve("p.jsonl");
        Files.write(jsonl, concat(utf8(good), new byte[] {'{', (byte) 0xFF, '}', '\n'}));
        assertThatThrownBy(() -> FileDatasets.jsonl(jsonl, 1, NO_FILTERS, null, null, 1))
                .hasMessageContaining(jsonl.toString())
                .hasMessageContaining(
                        "not UTF-8 text: byte 0xFF at byte offset "
                                + (utf8(good).length + 1)
                                + " (line 2001)")
                .hasMessageNotContaining("Input length");
        // Text in another encoding (Latin-1 é) is the same problem.
        Files.write(
                jsonl,
                "{\"prompt\":\"caf\u00e9\"}\n"
                        .getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        assertThatThrownBy(() -> FileDatasets.jsonl(jsonl, 1, NO_FILTERS, null, null, 1))
                .hasMessageContaining("not UTF-8 text: byte 0xE9 at byte offset 14 (line 1)");
        Path shareGpt = dir.resolve("sharegpt.json");
        Files.write(
                shareGpt,
                concat(
                        utf8("[{\"conversations\": [{\"from\": \"human\", \"value\": \"a"),
                        new byte[] {(byte) 0xC3, (byte) 0x28},
                        utf8("\"}]}]")));
        assertThatThrownBy(() -> FileDatasets.shareGpt(shareGpt, 1, NO_FILTERS, null, 1))
                .hasMessageContaining(shareGpt.toString())
                .hasMessageContaining("not UTF-8 text")
                .hasMessageContaining("byte offset")
                .hasMessageContaining("(line 1)");
        // A real binary file: gzip's magic number.
        Files.write(shareGpt, new byte[] {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0});
        assertThatThrownBy(() -> FileDatasets.shareGpt(shareGpt, 1, NO_FILTERS, null, 1))
                .hasMessageContaining("not UTF-8 text");
        Files.write(jsonl, new byte[] {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0});
        assertThatThrownBy(() -> FileDatasets.jsonl(jsonl, 1, NO_FILTERS, null, null, 1))
                .hasMessageContaining("not UTF-8 text: byte 0x8B at byte offset 1 (line 1)");
    }

    @Test
    void anEmptyDatasetHasNoPrompts(@TempDir Path dir) throws IOException {
        Path jsonl = dir.resolve("p.jsonl");
        for (String text : List.of("", "\n\n  \n")) {
            Files.writeString(jsonl, text);
            assertThatThrownBy(() -> FileDatasets.jsonl(jsonl, 1, NO_FILTERS, null, null, 1))
                    .hasMessageContaining(jsonl + ": the file has no prompts");
        }
        Path shareGpt = dir.resolve("sharegpt.json");
        for (String text : List.of("", "  \n", "[]", "[ ]\n")) {
            Files.writeString(shareGpt, text);
            assertThatThrownBy(() -> FileDatasets.shareGpt(shareGpt, 1, NO_FILTERS, null, 1))
                    .as(text)
                    .hasMessageContaining(shareGpt + ": the file has no prompts");
        }
        // Prompts that the filters all drop are another matter, and said so.
        Files.writeString(jsonl, "{\"prompt\":\"hi\"}\n");
        assertThatThrownBy(
                        () ->
                                FileDatasets.jsonl(
                                        jsonl,
                                        1,
                                        new FileDatasets.Filters(100, null, null, null, null, null),
                                        null,
                                        null,
                                        1))
                .hasMessageContaining("no prompt passed the length filters");
    }

    @Test
    void aByteOrderMarkIsAcceptedInDatasetsAndTokenizers(@TempDir Path dir) throws IOException {
        Path jsonl = dir.resolve("p.jsonl");
        Files.write(
                jsonl, concat(BOM, utf8("{\"prompt\":\"first\"}\r\n{\"prompt\":\"second\"}\r\n")));
        List<Prompt> prompts = FileDatasets.jsonl(jsonl, 2, NO_FILTERS, null, null, 1);
        assertThat(prompts).extracting(Prompt::text).containsExactlyInAnyOrder("first", "second");
        Path shareGpt = dir.resolve("sharegpt.json");
        Files.write(
                shareGpt,
                concat(
                        BOM,
                        utf8(
                                "[{\"conversations\": [{\"from\": \"human\", \"value\": \"a question\"},"
                                        + " {\"from\": \"gpt\", \"value\": \"an answer\"}]}]")));
        assertThat(FileDatasets.shareGpt(shareGpt, 1, NO_FILTERS, null, 1))
                .extracting(Prompt::text)
                .containsExactly("a question");
        Path tokenizerFile = dir.resolve("tokenizer.json");
        Files.write(tokenizerFile, concat(BOM, Files.readAllBytes(testTokenizer())));
        try (HfTokenizer withBom = HfTokenizer.load(tokenizerFile);
                HfTokenizer plain = HfTokenizer.load(testTokenizer())) {
            assertThat(withBom.encode("the model server is fast"))
                    .isEqualTo(plain.encode("the model server is fast"));
            assertThat(withBom.vocabSize()).isEqualTo(plain.vocabSize());
        }
    }

    @Test
    void jsonlRefusesAMaxTokensThatIsNotAPositiveIntNamingFileAndLine(@TempDir Path dir)
            throws IOException {
        FileDatasets.Filters none = new FileDatasets.Filters(null, null, null, null, null, null);
        Path file = dir.resolve("bad.jsonl");
        for (String value : List.of("99999999999", "-4", "0", "\"abc\"", "2.5", "true")) {
            Files.writeString(
                    file,
                    "{\"prompt\":\"ok\",\"max_tokens\":8}\n{\"prompt\":\"x\",\"max_tokens\":"
                            + value
                            + "}\n");
            assertThatThrownBy(() -> FileDatasets.jsonl(file, 1, none, null, null, 1))
                    .as(value)
                    .isInstanceOf(IOException.class)
                    .hasMessageStartingWith(file + " line 2: max_tokens must be a whole number")
                    .hasMessageEndingWith(
                            "got "
                                    + (value.startsWith("\"")
                                            ? "a string"
                                            : value.equals("true") ? "a boolean" : value));
        }
        // null is "not given", and an --output-len override makes the file's values unused
        Files.writeString(file, "{\"prompt\":\"x\",\"max_tokens\":null}\n");
        assertThat(FileDatasets.jsonl(file, 1, none, 7, null, 1).get(0).maxTokens()).isEqualTo(7);
        Files.writeString(file, "{\"prompt\":\"x\",\"max_tokens\":-4}\n");
        assertThat(
                        FileDatasets.jsonl(
                                        file,
                                        1,
                                        new FileDatasets.Filters(null, null, null, null, null, 5),
                                        null,
                                        null,
                                        1)
                                .get(0)
                                .maxTokens())
                .isEqualTo(5);
        Files.writeString(file, "{\"prompt\":\"x\",\"max_tokens\":2147483647}\n");
        assertThat(FileDatasets.jsonl(file, 1, none, null, null, 1).get(0).maxTokens())
                .isEqualTo(Integer.MAX_VALUE);
    }
}
