package io.inferencebench.runner.dataset;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/** ShareGPT JSON and JSONL prompt files, filtered by length and sampled with a seed. */
public final class FileDatasets {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * Length filters (inclusive; null = no bound).
     *
     * @param outputLenOverride when set, every prompt asks for this many output tokens
     */
    public record Filters(
            Integer minInputLen,
            Integer maxInputLen,
            Integer minOutputLen,
            Integer maxOutputLen,
            Integer maxTotalLen,
            Integer outputLenOverride) {

        /** vLLM's ShareGPT defaults: at least 4 tokens each way, prompt ≤ 1024, total ≤ 2048. */
        public static Filters shareGptDefaults(Integer outputLenOverride) {
            return new Filters(4, 1024, 4, null, 2048, outputLenOverride);
        }

        boolean accept(int in, int out) {
            return (minInputLen == null || in >= minInputLen)
                    && (maxInputLen == null || in <= maxInputLen)
                    && (minOutputLen == null || out <= 0 || out >= minOutputLen)
                    && (maxOutputLen == null || out <= maxOutputLen)
                    && (maxTotalLen == null || in + Math.max(0, out) <= maxTotalLen);
        }
    }

    private FileDatasets() {}

    /** Token counts: exact with a tokenizer, else about 4 characters per token (labelled). */
    static int countTokens(String text, HfTokenizer tokenizer) {
        if (tokenizer != null) {
            return tokenizer.count(text);
        }
        return Math.max(1, (int) Math.round(text.length() / 4.0));
    }

    static String source(HfTokenizer tokenizer) {
        return tokenizer != null ? "tokenizer" : "approximation";
    }

    /**
     * ShareGPT: a JSON array of {@code {"conversations": [{"from": "human", "value": ...}, {"from":
     * "gpt", "value": ...}, ...]}}; the first human turn is the prompt, the reply's length is the
     * requested output length.
     */
    public static List<Prompt> shareGpt(
            Path path, int count, Filters filters, HfTokenizer tokenizer, long seed)
            throws IOException {
        JsonNode root = readJson(path);
        if (!root.isArray()) {
            throw new IOException(path + ": a ShareGPT file is a JSON array of conversations");
        }
        List<Prompt> candidates = new ArrayList<>();
        for (JsonNode entry : root) {
            JsonNode turns =
                    entry.has("conversations")
                            ? entry.get("conversations")
                            : entry.get("conversation");
            if (turns == null || !turns.isArray() || turns.size() < 2) {
                continue;
            }
            String prompt =
                    turns.get(0).path("value").asText(turns.get(0).path("content").asText(""));
            String reply =
                    turns.get(1).path("value").asText(turns.get(1).path("content").asText(""));
            if (prompt.isEmpty()) {
                continue;
            }
            int in = countTokens(prompt, tokenizer);
            int out =
                    filters.outputLenOverride() != null
                            ? filters.outputLenOverride()
                            : countTokens(reply, tokenizer);
            if (!filters.accept(in, out)) {
                continue;
            }
            candidates.add(new Prompt(prompt, null, null, in, out, source(tokenizer)));
        }
        return sample(candidates, count, seed, path);
    }

    /**
     * JSONL: one object per line with {@code prompt} (text) or {@code messages} (chat), and
     * optionally {@code max_tokens}.
     */
    public static List<Prompt> jsonl(
            Path path,
            int count,
            Filters filters,
            Integer defaultMaxTokens,
            HfTokenizer tokenizer,
            long seed)
            throws IOException {
        List<Prompt> candidates = new ArrayList<>();
        try (BufferedReader reader = Files.newBufferedReader(path, StandardCharsets.UTF_8)) {
            String line;
            int lineNumber = 0;
            while ((line = reader.readLine()) != null) {
                lineNumber++;
                if (line.isBlank()) {
                    continue;
                }
                JsonNode node;
                try {
                    node = MAPPER.readTree(line);
                } catch (IOException e) {
                    throw new IOException(path + " line " + lineNumber + ": not JSON", e);
                }
                int maxTokens =
                        filters.outputLenOverride() != null
                                ? filters.outputLenOverride()
                                : node.path("max_tokens")
                                        .asInt(defaultMaxTokens == null ? 0 : defaultMaxTokens);
                Prompt prompt;
                if (node.path("prompt").isTextual()) {
                    String text = node.get("prompt").asText();
                    prompt =
                            new Prompt(
                                    text,
                                    null,
                                    null,
                                    countTokens(text, tokenizer),
                                    maxTokens,
                                    source(tokenizer));
                } else if (node.path("messages").isArray()) {
                    List<Prompt.ChatMessage> messages = new ArrayList<>();
                    StringBuilder all = new StringBuilder();
                    for (JsonNode m : node.get("messages")) {
                        String content = m.path("content").asText("");
                        messages.add(
                                new Prompt.ChatMessage(m.path("role").asText("user"), content));
                        all.append(content).append('\n');
                    }
                    prompt =
                            new Prompt(
                                    null,
                                    null,
                                    List.copyOf(messages),
                                    countTokens(all.toString(), tokenizer),
                                    maxTokens,
                                    source(tokenizer));
                } else {
                    throw new IOException(
                            path
                                    + " line "
                                    + lineNumber
                                    + ": needs a \"prompt\" string or a \"messages\" array");
                }
                if (filters.accept(prompt.inputTokens(), maxTokens)) {
                    candidates.add(prompt);
                }
            }
        }
        return sample(candidates, count, seed, path);
    }

    /** Seeded shuffle, then the first {@code count}; a smaller file is cycled. */
    static List<Prompt> sample(List<Prompt> candidates, int count, long seed, Path path)
            throws IOException {
        if (candidates.isEmpty()) {
            throw new IOException(path + ": no prompt passed the length filters");
        }
        List<Prompt> shuffled = new ArrayList<>(candidates);
        Collections.shuffle(shuffled, new Random(seed));
        List<Prompt> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(shuffled.get(i % shuffled.size()));
        }
        return out;
    }

    private static JsonNode readJson(Path path) throws IOException {
        try {
            return MAPPER.readTree(path.toFile());
        } catch (IOException e) {
            throw new IOException(path + ": not valid JSON (" + e.getMessage() + ")", e);
        }
    }
}
