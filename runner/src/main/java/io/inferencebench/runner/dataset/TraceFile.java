package io.inferencebench.runner.dataset;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.crds.v1alpha1.TraceFormat;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * A request trace read from its file: each recorded request's arrival offset and token counts and,
 * where the layout has them, its prefix-block hashes and prompt text. The public layouts are read
 * as published (see {@link TraceFormat}); a request recorded with no input or no output tokens (a
 * failure in BurstGPT's log) cannot be sent as recorded and is skipped, and counted.
 *
 * @param format the layout read
 * @param requests the requests replayed, by offset (from the first one replayed): those of the
 *     window, at most the cap
 * @param skipped requests of the window left out because they recorded 0 input or output tokens
 * @param windowRequests requests recorded in the window (before the cap, with the skipped ones)
 */
public record TraceFile(
        TraceFormat format, List<Request> requests, long skipped, long windowRequests) {

    /**
     * One recorded request.
     *
     * @param offsetNanos when it arrived: from the trace's first request as read, from the first
     *     one replayed in a {@link TraceFile}
     * @param inputTokens its prompt's tokens
     * @param outputTokens the tokens it generated (asked for as {@code max_tokens})
     * @param hashIds its prompt's prefix blocks, in order, or {@code null}
     * @param text its prompt text, or {@code null}
     * @param line the line of the file it was read from
     */
    public record Request(
            long offsetNanos,
            int inputTokens,
            int outputTokens,
            long[] hashIds,
            String text,
            int line) {}

    /**
     * Which part of the trace to replay.
     *
     * @param start requests recorded at or after this point of the trace's clock, or {@code null}
     * @param end requests recorded before this point, or {@code null}
     * @param cap at most this many requests (the first of the window), {@code 0} for all
     * @param limit the most requests held: more in the window without a cap is an error
     */
    public record Window(Duration start, Duration end, long cap, int limit) {}

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /** Azure's {@code 2023-11-16 18:15:46.6805900}: up to nine digits of a second. */
    private static final DateTimeFormatter AZURE_TIME =
            new DateTimeFormatterBuilder()
                    .appendPattern("yyyy-MM-dd HH:mm:ss")
                    .optionalStart()
                    .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
                    .optionalEnd()
                    .toFormatter(Locale.ROOT);

    /**
     * Reads the trace.
     *
     * @param format its layout, or {@code null} to tell it from the first line
     * @throws IOException naming the file, line and field of what cannot be read
     */
    public static TraceFile read(Path file, TraceFormat format, Window window) throws IOException {
        List<Request> all = new ArrayList<>();
        TraceFormat layout = format;
        try (Utf8Files.Lines lines = Utf8Files.lines(file)) {
            String line;
            Columns columns = null;
            while ((line = lines.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                int number = lines.lineNumber();
                if (layout == null) {
                    layout = detect(file, line);
                }
                if (layout == TraceFormat.MOONCAKE) {
                    all.add(mooncake(file, number, line));
                    continue;
                }
                if (columns == null) {
                    columns = Columns.of(file, layout, line);
                    continue;
                }
                all.add(columns.request(file, number, line));
            }
        }
        if (layout == null) {
            throw new IOException(file + ": the trace is empty");
        }
        if (all.isEmpty()) {
            throw new IOException(file + ": the trace has no requests");
        }
        // Offsets from the trace's first request, in arrival order (ties keep the file's order).
        all.sort(Comparator.comparingLong(Request::offsetNanos));
        long origin = all.get(0).offsetNanos();
        long start = window.start() == null ? Long.MIN_VALUE : window.start().toNanos();
        long end = window.end() == null ? Long.MAX_VALUE : window.end().toNanos();
        List<Request> kept = new ArrayList<>();
        long skipped = 0;
        long inWindow = 0;
        for (Request r : all) {
            long at = r.offsetNanos() - origin;
            if (at < start || at >= end) {
                continue;
            }
            inWindow++;
            if (r.inputTokens() == 0 || r.outputTokens() == 0) {
                skipped++;
                continue;
            }
            if (window.cap() > 0 && kept.size() >= window.cap()) {
                continue;
            }
            kept.add(
                    new Request(
                            at,
                            r.inputTokens(),
                            r.outputTokens(),
                            r.hashIds(),
                            r.text(),
                            r.line()));
        }
        if (kept.isEmpty()) {
            throw new IOException(
                    file
                            + ": no request of the trace to replay"
                            + (inWindow == 0
                                    ? " in the window (the trace spans "
                                            + seconds(
                                                    all.get(all.size() - 1).offsetNanos() - origin)
                                            + " s from its first request)"
                                    : " (every one in the window recorded 0 input or output"
                                            + " tokens)"));
        }
        if (kept.size() > window.limit()) {
            throw new IOException(
                    file
                            + ": "
                            + kept.size()
                            + " requests to replay, more than the "
                            + window.limit()
                            + " held in memory; cap them or narrow the window");
        }
        // The replay starts with its first request: offsets from it.
        long first = kept.get(0).offsetNanos();
        List<Request> replayed = new ArrayList<>(kept.size());
        for (Request r : kept) {
            replayed.add(
                    new Request(
                            r.offsetNanos() - first,
                            r.inputTokens(),
                            r.outputTokens(),
                            r.hashIds(),
                            r.text(),
                            r.line()));
        }
        return new TraceFile(layout, List.copyOf(replayed), skipped, inWindow);
    }

    /**
     * Each replayed request's recorded offset from the first one replayed (the window's first),
     * nanoseconds.
     */
    public long[] offsetsNanos() {
        long[] offsets = new long[requests.size()];
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = requests.get(i).offsetNanos();
        }
        return offsets;
    }

    /**
     * One runner pod's share of the requests replayed: those at positions {@code index}, {@code
     * index + pods}, ... (so the pods together send every request, each at its own offset), with
     * their offsets kept from the first request of the whole replay.
     */
    public TraceFile share(int index, int pods) {
        if (pods == 1) {
            return this;
        }
        List<Request> mine = new ArrayList<>();
        for (int i = index; i < requests.size(); i += pods) {
            mine.add(requests.get(i));
        }
        return new TraceFile(format, List.copyOf(mine), skipped, windowRequests);
    }

    private static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1e9);
    }

    /**
     * The cells of a CSV line, each stripped of blanks and of the double quotes some exports put
     * around every cell (the traces' cells hold no commas).
     */
    static List<String> cells(String line) {
        List<String> cells = new ArrayList<>();
        for (String cell : line.split(",", -1)) {
            String c = cell.strip();
            if (c.length() >= 2 && c.startsWith("\"") && c.endsWith("\"")) {
                c = c.substring(1, c.length() - 1).strip();
            }
            cells.add(c);
        }
        return cells;
    }

    /** The layout of a trace from its first line: a JSON object, or a CSV header. */
    static TraceFormat detect(Path file, String firstLine) throws IOException {
        String line = firstLine.strip();
        if (line.startsWith("{")) {
            return TraceFormat.MOONCAKE;
        }
        List<String> header = cells(line);
        if (header.contains("TIMESTAMP") && header.contains("ContextTokens")) {
            return TraceFormat.AZURE;
        }
        if (header.contains("Timestamp") && header.contains("Request tokens")) {
            return TraceFormat.BURSTGPT;
        }
        throw new IOException(
                file
                        + " line 1: not a trace layout this runner knows (mooncake: JSON lines with"
                        + " timestamp, input_length, output_length; azure: a CSV header with"
                        + " TIMESTAMP, ContextTokens, GeneratedTokens; burstgpt: a CSV header with"
                        + " Timestamp, Request tokens, Response tokens); name it with the trace"
                        + " format");
    }

    private static Request mooncake(Path file, int number, String line) throws IOException {
        JsonNode node;
        try {
            node = MAPPER.readTree(line);
        } catch (IOException e) {
            throw new IOException(at(file, number) + "not JSON (mooncake trace)");
        }
        if (node == null || !node.isObject()) {
            throw new IOException(at(file, number) + "not a JSON object");
        }
        double millis = number(file, number, node, "timestamp");
        int input = count(file, number, node, "input_length");
        int output = count(file, number, node, "output_length");
        long[] hashIds = null;
        JsonNode hashes = node.get("hash_ids");
        if (hashes != null && !hashes.isNull()) {
            if (!hashes.isArray()) {
                throw new IOException(at(file, number) + "hash_ids must be an array of integers");
            }
            hashIds = new long[hashes.size()];
            for (int i = 0; i < hashIds.length; i++) {
                JsonNode h = hashes.get(i);
                if (!h.isIntegralNumber() || !h.canConvertToLong()) {
                    throw new IOException(
                            at(file, number) + "hash_ids[" + i + "] is not an integer");
                }
                hashIds[i] = h.asLong();
            }
        }
        String text = null;
        for (String field : List.of("text_input", "text", "prompt")) {
            if (node.path(field).isTextual()) {
                text = node.get(field).asText();
                break;
            }
        }
        return new Request(Math.round(millis * 1e6), input, output, hashIds, text, number);
    }

    /** Where a problem of the trace is: the file and the line, e.g. {@code t.jsonl line 3: }. */
    private static String at(Path file, int number) {
        return file + " line " + number + ": ";
    }

    private static double number(Path file, int number, JsonNode node, String field)
            throws IOException {
        JsonNode value = node.get(field);
        if (value == null || !value.isNumber() || !Double.isFinite(value.asDouble())) {
            throw new IOException(
                    at(file, number)
                            + field
                            + (value == null ? " is missing" : " is not a number"));
        }
        if (value.asDouble() < 0) {
            throw new IOException(at(file, number) + field + " is negative");
        }
        return value.asDouble();
    }

    private static int count(Path file, int number, JsonNode node, String field)
            throws IOException {
        double value = number(file, number, node, field);
        return tokens(file, number, field, value);
    }

    private static int tokens(Path file, int number, String field, double value)
            throws IOException {
        if (value != Math.rint(value)
                || value > io.inferencebench.crds.v1alpha1.TokenDistribution.MAX_TOKENS) {
            throw new IOException(
                    at(file, number)
                            + field
                            + " must be a whole number of tokens up to "
                            + io.inferencebench.crds.v1alpha1.TokenDistribution.MAX_TOKENS
                            + ", got "
                            + value);
        }
        return (int) value;
    }

    /**
     * The columns of a CSV trace, found by name in its header.
     *
     * @param names the time, input and output columns' names in the layout
     */
    private record Columns(
            TraceFormat format, List<String> names, int time, int input, int output, int width) {

        static Columns of(Path file, TraceFormat format, String headerLine) throws IOException {
            List<String> header = cells(headerLine);
            List<String> names =
                    switch (format) {
                        case AZURE -> List.of("TIMESTAMP", "ContextTokens", "GeneratedTokens");
                        case BURSTGPT -> List.of("Timestamp", "Request tokens", "Response tokens");
                        case MOONCAKE ->
                                throw new IllegalStateException("mooncake traces have no header");
                    };
            return new Columns(
                    format,
                    names,
                    column(file, header, names.get(0)),
                    column(file, header, names.get(1)),
                    column(file, header, names.get(2)),
                    header.size());
        }

        private static int column(Path file, List<String> header, String name) throws IOException {
            int at = header.indexOf(name);
            if (at < 0) {
                throw new IOException(file + " line 1: the header has no column '" + name + "'");
            }
            return at;
        }

        Request request(Path file, int number, String line) throws IOException {
            List<String> cells = cells(line);
            if (cells.size() < width) {
                throw new IOException(
                        at(file, number) + cells.size() + " columns, the header has " + width);
            }
            String timeText = cells.get(time);
            long nanos;
            if (format == TraceFormat.AZURE) {
                try {
                    LocalDateTime t = LocalDateTime.parse(timeText, AZURE_TIME);
                    nanos =
                            Math.addExact(
                                    Math.multiplyExact(
                                            t.toEpochSecond(java.time.ZoneOffset.UTC),
                                            1_000_000_000L),
                                    t.getNano());
                } catch (DateTimeParseException | ArithmeticException e) {
                    throw new IOException(
                            at(file, number)
                                    + "TIMESTAMP is not a date and time like 2023-11-16"
                                    + " 18:15:46.6805900");
                }
            } else {
                double seconds = cell(file, number, names.get(0), timeText);
                nanos = Math.round(seconds * 1e9);
            }
            return new Request(
                    nanos,
                    count(file, number, names.get(1), cells.get(input)),
                    count(file, number, names.get(2), cells.get(output)),
                    null,
                    null,
                    number);
        }

        private static int count(Path file, int number, String name, String text)
                throws IOException {
            return tokens(file, number, name, cell(file, number, name, text));
        }

        private static double cell(Path file, int number, String name, String text)
                throws IOException {
            double value;
            try {
                value = Double.parseDouble(text.strip());
            } catch (NumberFormatException e) {
                throw new IOException(at(file, number) + name + " is not a number");
            }
            if (!Double.isFinite(value) || value < 0) {
                throw new IOException(at(file, number) + name + " must be a number >= 0");
            }
            return value;
        }
    }
}
