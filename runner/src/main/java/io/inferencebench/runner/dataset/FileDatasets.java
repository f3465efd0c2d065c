package io.inferencebench.runner.dataset;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
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
            return acceptTurn(in, 0, out);
        }

        /**
         * A conversation's turn: the input bounds apply to its question, the total to the whole
         * request (the history before the question, the question and the reply asked for).
         */
        boolean acceptTurn(int question, int history, int out) {
            return (minInputLen == null || question >= minInputLen)
                    && (maxInputLen == null || question <= maxInputLen)
                    && (minOutputLen == null || out <= 0 || out >= minOutputLen)
                    && (maxOutputLen == null || out <= maxOutputLen)
                    && (maxTotalLen == null
                            || history + question + Math.max(0, out) <= maxTotalLen);
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
        return shareGpt(path, count, 0, filters, tokenizer, seed);
    }

    /**
     * ShareGPT conversations replayed turn by turn: {@code sessions} sessions of {@code turns}
     * requests, laid out session by session. Each is the first {@code turns} question-and-reply
     * pairs of a conversation that has at least that many (human or user, then gpt, chatgpt,
     * assistant or bard), after a system message when one comes first; turn t carries the system
     * message and the t - 1 pairs before it with their recorded replies, then its own question, and
     * asks for its recorded reply's length (or the override). The filters apply to every turn: the
     * input bounds to its question, the total to its whole request; a conversation is kept only
     * when every turn passes. Conversations are sampled with the seed; a file with fewer is cycled.
     */
    public static List<Prompt> shareGptConversations(
            Path path, int sessions, int turns, Filters filters, HfTokenizer tokenizer, long seed)
            throws IOException {
        if (turns < 1) {
            throw new IllegalArgumentException("a session needs at least one turn, got " + turns);
        }
        return shareGpt(path, sessions, turns, filters, tokenizer, seed);
    }

    /** The single prompts ({@code turns} 0) or the conversations of a ShareGPT file. */
    private static List<Prompt> shareGpt(
            Path path, int count, int turns, Filters filters, HfTokenizer tokenizer, long seed)
            throws IOException {
        List<List<Prompt>> candidates = new ArrayList<>();
        int entries = 0;
        int shaped = 0;
        String firstKeys = null;
        // Streamed entry by entry: a file larger than the heap never exists as one tree, and
        // what is kept are the prompts that pass the filters.
        try (JsonParser parser = MAPPER.getFactory().createParser(path.toFile())) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                throw noPrompts(path, "it is empty");
            }
            if (first != JsonToken.START_ARRAY) {
                throw new IOException(
                        path
                                + ": not a ShareGPT file: that is one JSON array of"
                                + " {\"conversations\": [{\"from\": \"human\", \"value\": ...},"
                                + " {\"from\": \"gpt\", \"value\": ...}]}, this file starts with "
                                + (first == null ? "nothing" : first.asString())
                                + (first == JsonToken.START_OBJECT
                                        ? " (one JSON object per line is --dataset-name jsonl)"
                                        : ""));
            }
            JsonToken token;
            while ((token = parser.nextToken()) != JsonToken.END_ARRAY && token != null) {
                entries++;
                if (token != JsonToken.START_OBJECT) {
                    parser.skipChildren();
                    continue;
                }
                JsonNode entry = parser.readValueAsTree();
                if (firstKeys == null) {
                    List<String> keys = new ArrayList<>();
                    entry.fieldNames().forEachRemaining(keys::add);
                    firstKeys = String.join(", ", keys);
                }
                JsonNode messages =
                        entry.has("conversations")
                                ? entry.get("conversations")
                                : entry.get("conversation");
                if (messages == null || !messages.isArray() || messages.size() < 2) {
                    continue;
                }
                String prompt = text(messages.get(0));
                if (prompt.isEmpty() && turns == 0) {
                    continue;
                }
                shaped++;
                if (turns > 0) {
                    List<Prompt> session = session(messages, turns, filters, tokenizer);
                    if (session != null) {
                        candidates.add(session);
                    }
                    continue;
                }
                int in = countTokens(prompt, tokenizer);
                int out =
                        filters.outputLenOverride() != null
                                ? filters.outputLenOverride()
                                : countTokens(text(messages.get(1)), tokenizer);
                if (!filters.accept(in, out)) {
                    continue;
                }
                candidates.add(List.of(new Prompt(prompt, null, null, in, out, source(tokenizer))));
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            String reason = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
            // A byte that is not UTF-8, or a control character no JSON text has: a binary file.
            if (reason.startsWith("Invalid UTF-8") || reason.contains("(CTRL-CHAR")) {
                throw notUtf8(path, e);
            }
            throw new IOException(
                    path
                            + ": not valid JSON at line "
                            + e.getLocation().getLineNr()
                            + ", column "
                            + e.getLocation().getColumnNr()
                            + ": "
                            + e.getOriginalMessage().lines().findFirst().orElse(""),
                    e);
        } catch (OutOfMemoryError e) {
            candidates = null;
            throw tooLarge(path, entries);
        }
        if (entries == 0) {
            throw noPrompts(path, "an empty JSON array");
        }
        if (shaped == 0 && entries > 0) {
            throw new IOException(
                    path
                            + ": not a ShareGPT file: none of its "
                            + entries
                            + " entries has a \"conversations\" array with a prompt and a reply"
                            + (firstKeys != null ? " (the first has: " + firstKeys + ")" : ""));
        }
        if (turns > 0 && candidates.isEmpty()) {
            throw new IOException(
                    path
                            + ": no conversation has "
                            + turns
                            + " question-and-reply pairs whose every turn passes the length"
                            + " filters; ask for fewer turns or widen the filters");
        }
        List<Prompt> out = new ArrayList<>();
        for (List<Prompt> unit : sample(candidates, count, seed, path)) {
            out.addAll(unit);
        }
        return out;
    }

    /** A message's text: ShareGPT's {@code value}, or {@code content}. */
    private static String text(JsonNode message) {
        return message.path("value").asText(message.path("content").asText(""));
    }

    private static final java.util.Set<String> ASKERS = java.util.Set.of("human", "user");
    private static final java.util.Set<String> REPLIERS =
            java.util.Set.of("gpt", "chatgpt", "assistant", "bard", "model");

    /**
     * The first {@code turns} turns of a conversation as requests carrying their history, or {@code
     * null} when it has fewer question-and-reply pairs or a turn fails the filters.
     */
    private static List<Prompt> session(
            JsonNode messages, int turns, Filters filters, HfTokenizer tokenizer) {
        List<Prompt.ChatMessage> history = new ArrayList<>();
        List<Prompt> session = new ArrayList<>(turns);
        int historyTokens = 0;
        int i = 0;
        if (role(messages.get(0)).equals("system")) {
            // A system prompt starts every turn's history.
            String system = text(messages.get(0));
            history.add(new Prompt.ChatMessage("system", system));
            historyTokens += countTokens(system, tokenizer);
            i = 1;
        }
        while (session.size() < turns) {
            // A question, then its reply; anything else (a system message, two questions in a
            // row) ends the pairs.
            if (i + 1 >= messages.size()
                    || !ASKERS.contains(role(messages.get(i)))
                    || !REPLIERS.contains(role(messages.get(i + 1)))) {
                return null;
            }
            String question = text(messages.get(i));
            String reply = text(messages.get(i + 1));
            if (question.isEmpty() || reply.isEmpty()) {
                return null;
            }
            int questionTokens = countTokens(question, tokenizer);
            int out =
                    filters.outputLenOverride() != null
                            ? filters.outputLenOverride()
                            : countTokens(reply, tokenizer);
            if (!filters.acceptTurn(questionTokens, historyTokens, out)) {
                return null;
            }
            history.add(new Prompt.ChatMessage("user", question));
            session.add(
                    new Prompt(
                            null,
                            null,
                            List.copyOf(history),
                            historyTokens + questionTokens,
                            out,
                            source(tokenizer)));
            history.add(new Prompt.ChatMessage("assistant", reply));
            historyTokens += questionTokens + countTokens(reply, tokenizer);
            i += 2;
        }
        return session;
    }

    private static String role(JsonNode message) {
        return message.path("from")
                .asText(message.path("role").asText(""))
                .toLowerCase(java.util.Locale.ROOT);
    }

    private static IOException noPrompts(Path path, String why) {
        return new IOException(path + ": the file has no prompts (" + why + ")");
    }

    /**
     * Jackson's "Invalid UTF-8 start byte 0xff" (or a control character outside a string) as the
     * user's problem: where, and what to do.
     */
    private static IOException notUtf8(
            Path path, com.fasterxml.jackson.core.JsonProcessingException e) {
        com.fasterxml.jackson.core.JsonLocation at = e.getLocation();
        long offset = at == null ? -1 : at.getByteOffset();
        String where =
                offset >= 0
                        ? "at byte offset " + offset + " (line " + at.getLineNr() + ")"
                        : "on line " + (at == null ? "?" : at.getLineNr());
        return new IOException(
                path
                        + ": not UTF-8 text: a byte "
                        + where
                        + " is not part of UTF-8 text (a binary file, or text in another"
                        + " encoding; save it as UTF-8)",
                e);
    }

    private static IOException tooLarge(Path path, int read) {
        return new IOException(
                path
                        + ": too large for the heap ("
                        + Runtime.getRuntime().maxMemory() / (1 << 20)
                        + " MB): memory ran out after "
                        + read
                        + " entries; use a smaller file, stricter length filters, or more heap"
                        + " (java -Xmx...)");
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
        int lineNumber = 0;
        int prompts = 0;
        try (Utf8Files.Lines reader = Utf8Files.lines(path)) {
            String line;
            while ((line = reader.readLine()) != null) {
                lineNumber++;
                if (line.isBlank()) {
                    continue;
                }
                prompts++;
                JsonNode node;
                try {
                    node = MAPPER.readTree(line);
                } catch (IOException e) {
                    throw new IOException(path + " line " + lineNumber + ": not JSON", e);
                }
                int maxTokens =
                        filters.outputLenOverride() != null
                                ? filters.outputLenOverride()
                                : maxTokens(
                                        node.get("max_tokens"),
                                        defaultMaxTokens == null ? 0 : defaultMaxTokens,
                                        path,
                                        lineNumber);
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
        } catch (OutOfMemoryError e) {
            candidates = null;
            throw tooLarge(path, lineNumber);
        }
        if (prompts == 0) {
            throw noPrompts(path, lineNumber == 0 ? "it is empty" : "only blank lines");
        }
        return sample(candidates, count, seed, path);
    }

    /**
     * A line's {@code max_tokens}: a whole number from 1 to {@link Integer#MAX_VALUE}, else the
     * line is refused (a value that were cut to an int, or dropped, would send a request of another
     * length than the file asks for, with ignore_eos still making the server generate to its
     * limit).
     */
    private static int maxTokens(JsonNode value, int fallback, Path path, int lineNumber)
            throws IOException {
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (value.isIntegralNumber() && value.canConvertToInt() && value.intValue() >= 1) {
            return value.intValue();
        }
        String got;
        if (value.isNumber()) {
            String text = value.asText();
            got = text.length() > 30 ? text.substring(0, 30) + "…" : text;
        } else if (value.isTextual()) {
            got = "a string";
        } else if (value.isBoolean()) {
            got = "a boolean";
        } else {
            got = value.isArray() ? "an array" : "an object";
        }
        throw new IOException(
                path
                        + " line "
                        + lineNumber
                        + ": max_tokens must be a whole number from 1 to "
                        + Integer.MAX_VALUE
                        + ", got "
                        + got);
    }

    /** Seeded shuffle, then the first {@code count}; a smaller file is cycled. */
    static <T> List<T> sample(List<T> candidates, int count, long seed, Path path)
            throws IOException {
        if (candidates.isEmpty()) {
            throw new IOException(path + ": no prompt passed the length filters");
        }
        List<T> shuffled = new ArrayList<>(candidates);
        Collections.shuffle(shuffled, new Random(seed));
        List<T> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(shuffled.get(i % shuffled.size()));
        }
        return out;
    }
}
