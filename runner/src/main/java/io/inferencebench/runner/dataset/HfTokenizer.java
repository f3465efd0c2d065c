package io.inferencebench.runner.dataset;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A HuggingFace {@code tokenizer.json} read from disk through the DJL binding (its native library
 * ships inside the jar; nothing is downloaded). Thread-safe.
 */
public final class HfTokenizer implements TokenCounter, AutoCloseable {

    private final HuggingFaceTokenizer tokenizer;
    private final String id;
    private final int vocabSize;

    private HfTokenizer(HuggingFaceTokenizer tokenizer, String id, int vocabSize) {
        this.tokenizer = tokenizer;
        this.id = id;
        this.vocabSize = vocabSize;
    }

    /**
     * Loads {@code tokenizer.json}, or the {@code tokenizer.json} inside a directory.
     *
     * @throws IOException when the file is missing or not a tokenizer
     */
    public static HfTokenizer load(Path path) throws IOException {
        Path file = Files.isDirectory(path) ? path.resolve("tokenizer.json") : path;
        if (!Files.isRegularFile(file)) {
            throw new IOException("no tokenizer.json at " + path);
        }
        int vocab;
        // A byte order mark (Windows editors write one) is dropped here: the native tokenizer's
        // JSON reader refuses it.
        byte[] json = Utf8Files.withoutBom(Files.readAllBytes(file));
        try {
            JsonNode root = new ObjectMapper().readTree(json);
            // Ids run from 0 to the largest one, in the model's vocabulary (an id map, or a list
            // for Unigram) or among the added tokens - which often repeat ids of the vocabulary
            // (special tokens), so their count must not be added on top.
            JsonNode v = root.path("model").path("vocab");
            int limit = v.isArray() ? v.size() : 0;
            if (v.isObject()) {
                for (JsonNode id : v) {
                    limit = Math.max(limit, id.asInt() + 1);
                }
            }
            for (JsonNode added : root.path("added_tokens")) {
                limit = Math.max(limit, added.path("id").asInt(-1) + 1);
            }
            vocab = limit;
        } catch (IOException e) {
            throw new IOException("not a tokenizer.json: " + file + " (" + e.getMessage() + ")", e);
        }
        HuggingFaceTokenizer tokenizer =
                HuggingFaceTokenizer.newInstance(
                        new java.io.ByteArrayInputStream(json),
                        Map.of(
                                "addSpecialTokens",
                                "false",
                                "truncation",
                                "false",
                                "padding",
                                "false"));
        String id =
                file.getParent() == null
                        ? file.toString()
                        : file.getParent().getFileName() + "/" + file.getFileName();
        return new HfTokenizer(tokenizer, id, vocab);
    }

    @Override
    public int count(String text) {
        if (text.isEmpty()) {
            return 0;
        }
        return tokenizer.encode(text, false, false).getIds().length;
    }

    public long[] encode(String text) {
        return tokenizer.encode(text, false, false).getIds();
    }

    public String decode(long[] ids) {
        return tokenizer.decode(ids, true);
    }

    public int vocabSize() {
        return vocabSize;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
