package io.inferencebench.profile.prom;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Parser for the Prometheus text exposition format 0.0.4 and OpenMetrics 1.0 text.
 *
 * <p>Handles metric names with colons, label value escapes ({@code \\ \" \n}), {@code NaN}/{@code
 * +Inf}/{@code -Inf}, optional timestamps (integer milliseconds in 0.0.4, float seconds in
 * OpenMetrics), HELP/TYPE/UNIT comments, {@code # EOF}, untyped metrics, histogram and summary
 * families (their {@code _bucket}/{@code _sum}/{@code _count} series grouped under one family),
 * OpenMetrics exemplars (ignored), CRLF line ends and gzip-compressed bodies. {@code _created}
 * series are dropped.
 *
 * <p>Malformed lines never abort parsing: each one is reported as a {@link ParseProblem} with its
 * line number and skipped. The parser never throws on page content.
 *
 * <p>Stateless and thread-safe.
 */
public final class PrometheusTextParser {

    /** Exposition formats. */
    public enum Format {
        /** Prometheus text format 0.0.4 ({@code text/plain; version=0.0.4}). */
        TEXT_0_0_4,
        /** OpenMetrics 1.0 text ({@code application/openmetrics-text}). */
        OPENMETRICS_1_0
    }

    /** The Accept header to send when scraping: the 0.0.4 text format. */
    public static final String ACCEPT_HEADER = "text/plain;version=0.0.4";

    /** At most this many problems are kept in a {@link ParsedPage} (all are counted). */
    public static final int MAX_PROBLEMS = 200;

    private static final int EXCERPT_LENGTH = 120;

    private PrometheusTextParser() {}

    /**
     * Parses a raw HTTP body, decompressing gzip when the body starts with the gzip magic bytes (at
     * most {@link ScrapeBodyReader#DEFAULT_MAX_BYTES} decompressed: a scraper reads the body with
     * {@link ScrapeBodyReader}, which bounds it while reading), and choosing the format from the
     * Content-Type (or from the body when it is absent).
     *
     * @param body the response body
     * @param contentType the Content-Type header, or {@code null}
     * @return the parsed page
     */
    public static ParsedPage parse(byte[] body, String contentType) {
        byte[] bytes = body;
        if (body.length >= 2 && (body[0] & 0xff) == 0x1f && (body[1] & 0xff) == 0x8b) {
            try {
                bytes = gunzip(body);
            } catch (IOException e) {
                Parse p = new Parse(Format.TEXT_0_0_4);
                p.problem(0, "cannot decompress body: " + e.getMessage(), "");
                return p.finish();
            }
        }
        return parse(new String(bytes, StandardCharsets.UTF_8), formatOf(contentType));
    }

    /**
     * Parses a raw body, detecting gzip and the format from the content.
     *
     * @param body the body
     * @return the parsed page
     */
    public static ParsedPage parse(byte[] body) {
        return parse(body, null);
    }

    /**
     * Parses page text.
     *
     * @param text the page
     * @param format the format, or {@code null} to detect it (OpenMetrics when the page ends with
     *     {@code # EOF})
     * @return the parsed page
     */
    public static ParsedPage parse(String text, Format format) {
        Format f = format != null ? format : detect(text);
        Parse p = new Parse(f);
        p.run(text);
        return p.finish();
    }

    /**
     * Parses page text, detecting the format.
     *
     * @param text the page
     * @return the parsed page
     */
    public static ParsedPage parse(String text) {
        return parse(text, null);
    }

    /**
     * The format a Content-Type names.
     *
     * @param contentType a Content-Type header value, or {@code null}
     * @return the format, or {@code null} when the header does not say
     */
    public static Format formatOf(String contentType) {
        if (contentType == null) {
            return null;
        }
        String ct = contentType.toLowerCase(Locale.ROOT);
        if (ct.contains("application/openmetrics-text")) {
            return Format.OPENMETRICS_1_0;
        }
        if (ct.contains("text/plain")) {
            return Format.TEXT_0_0_4;
        }
        return null;
    }

    private static Format detect(String text) {
        int end = text.length();
        while (end > 0 && Character.isWhitespace(text.charAt(end - 1))) {
            end--;
        }
        return text.startsWith("# EOF", Math.max(0, end - 5)) && end >= 5
                ? Format.OPENMETRICS_1_0
                : Format.TEXT_0_0_4;
    }

    private static byte[] gunzip(byte[] body) throws IOException {
        return GUNZIP.read(new ByteArrayInputStream(body), "gzip", System.nanoTime());
    }

    private static final ScrapeBodyReader GUNZIP =
            new ScrapeBodyReader(ScrapeBodyReader.DEFAULT_MAX_BYTES, Duration.ofMinutes(5));

    /** Sample-name suffixes and the family types they belong to. */
    private static final String[] SUFFIXES = {
        "_bucket", "_count", "_sum", "_total", "_created", "_gcount", "_gsum", "_info"
    };

    private static boolean suffixFits(String suffix, MetricType type) {
        return switch (suffix) {
            case "_bucket" -> type == MetricType.HISTOGRAM || type == MetricType.GAUGE_HISTOGRAM;
            case "_count", "_sum" -> type == MetricType.HISTOGRAM || type == MetricType.SUMMARY;
            case "_gcount", "_gsum" -> type == MetricType.GAUGE_HISTOGRAM;
            case "_total" -> type == MetricType.COUNTER;
            case "_created" ->
                    type == MetricType.COUNTER
                            || type == MetricType.HISTOGRAM
                            || type == MetricType.SUMMARY;
            case "_info" -> type == MetricType.INFO;
            default -> false;
        };
    }

    private static final class FamilyBuilder {
        final String name;
        MetricType type = MetricType.UNKNOWN;
        boolean typeDeclared;
        String help;
        String unit;
        final List<Sample> samples = new ArrayList<>();

        FamilyBuilder(String name) {
            this.name = name;
        }
    }

    /** State of one parse. */
    private static final class Parse {
        final Format format;
        final LinkedHashMap<String, FamilyBuilder> families = new LinkedHashMap<>();

        /** Sample name to its family, so each distinct sample name is resolved once. */
        final HashMap<String, FamilyBuilder> resolved = new HashMap<>();

        final List<ParseProblem> problems = new ArrayList<>();
        int problemCount;
        int sampleCount;

        /** Reused while reading one label value. */
        final StringBuilder scratch = new StringBuilder();

        /**
         * Names and label values repeat on every line of a page; reusing their String instances
         * saves most allocation (a direct-mapped cache keyed by the characters).
         */
        final String[] stringCache = new String[8192];

        String cached(int from, int length) {
            if (length > 96) {
                return new String(buf, from, length);
            }
            int h = 0;
            for (int i = from; i < from + length; i++) {
                h = 31 * h + buf[i];
            }
            int slot = (h ^ (h >>> 15)) & (stringCache.length - 1);
            String s = stringCache[slot];
            if (s != null && s.length() == length) {
                boolean same = true;
                for (int i = 0; i < length; i++) {
                    if (s.charAt(i) != buf[from + i]) {
                        same = false;
                        break;
                    }
                }
                if (same) {
                    return s;
                }
            }
            s = new String(buf, from, length);
            stringCache[slot] = s;
            return s;
        }

        char[] buf;
        int lineNo;
        int pos;
        int end;

        Parse(Format format) {
            this.format = format;
        }

        ParsedPage finish() {
            Map<String, MetricFamily> out = new LinkedHashMap<>();
            for (FamilyBuilder f : families.values()) {
                if (isCreatedCompanion(f)) {
                    sampleCount -= f.samples.size();
                    continue;
                }
                out.put(f.name, new MetricFamily(f.name, f.type, f.help, f.unit, f.samples));
            }
            return new ParsedPage(format, out, problems, problemCount, sampleCount);
        }

        /** 0.0.4 pages from some clients carry {@code foo_created} as a separate gauge family. */
        private boolean isCreatedCompanion(FamilyBuilder f) {
            if (!f.name.endsWith("_created")) {
                return false;
            }
            String base = f.name.substring(0, f.name.length() - "_created".length());
            FamilyBuilder b = families.get(base);
            if (b != null
                    && (b.type == MetricType.COUNTER
                            || b.type == MetricType.HISTOGRAM
                            || b.type == MetricType.SUMMARY)) {
                return true;
            }
            FamilyBuilder total = families.get(base + "_total");
            return total != null && total.type == MetricType.COUNTER;
        }

        void problem(int line, String message, String excerpt) {
            problemCount++;
            if (problems.size() < MAX_PROBLEMS) {
                problems.add(new ParseProblem(line, message, excerpt));
            }
        }

        void problemHere(int lineStart, int lineEnd, String message) {
            int len = Math.min(EXCERPT_LENGTH, lineEnd - lineStart);
            problem(lineNo, message, new String(buf, lineStart, Math.max(0, len)));
        }

        void run(String text) {
            buf = text.toCharArray();
            int n = buf.length;
            int start = 0;
            boolean eofSeen = false;
            while (start < n) {
                int nl = start;
                while (nl < n && buf[nl] != '\n') {
                    nl++;
                }
                lineNo++;
                int lineEnd = nl;
                if (lineEnd > start && buf[lineEnd - 1] == '\r') {
                    lineEnd--;
                }
                if (eofSeen) {
                    if (!isBlank(start, lineEnd)) {
                        problemHere(start, lineEnd, "content after # EOF ignored");
                        break;
                    }
                } else {
                    eofSeen = line(start, lineEnd);
                }
                start = nl + 1;
            }
        }

        private boolean isBlank(int from, int to) {
            for (int i = from; i < to; i++) {
                if (buf[i] != ' ' && buf[i] != '\t') {
                    return false;
                }
            }
            return true;
        }

        /** Handles one line; returns true at {@code # EOF}. */
        boolean line(int start, int lineEnd) {
            int i = start;
            while (i < lineEnd && (buf[i] == ' ' || buf[i] == '\t')) {
                i++;
            }
            if (i == lineEnd) {
                return false;
            }
            if (buf[i] == '#') {
                return comment(start, i + 1, lineEnd);
            }
            try {
                sample(start, i, lineEnd);
            } catch (Malformed e) {
                problemHere(start, lineEnd, e.getMessage());
            }
            return false;
        }

        private boolean comment(int lineStart, int i, int lineEnd) {
            pos = i;
            end = lineEnd;
            if (!skipSpaces()) {
                return false; // a lone "#"
            }
            int keywordStart = pos;
            while (pos < end && buf[pos] != ' ' && buf[pos] != '\t') {
                pos++;
            }
            String keyword = new String(buf, keywordStart, pos - keywordStart);
            if (keyword.equals("EOF")) {
                if (pos == end || isBlank(pos, end)) {
                    return true;
                }
                return false;
            }
            if (!keyword.equals("HELP") && !keyword.equals("TYPE") && !keyword.equals("UNIT")) {
                return false; // an ordinary comment
            }
            if (!skipSpaces()) {
                problemHere(lineStart, lineEnd, "# " + keyword + " without a metric name");
                return false;
            }
            int nameStart = pos;
            String name;
            if (buf[pos] == '"') {
                pos++;
                try {
                    name = labelValue("name");
                } catch (Malformed e) {
                    problemHere(lineStart, lineEnd, "invalid quoted metric name in # " + keyword);
                    return false;
                }
            } else {
                if (!isNameStart(buf[pos])) {
                    problemHere(lineStart, lineEnd, "invalid metric name in # " + keyword);
                    return false;
                }
                while (pos < end && isNameChar(buf[pos])) {
                    pos++;
                }
                name = new String(buf, nameStart, pos - nameStart);
            }
            if (pos < end && buf[pos] != ' ' && buf[pos] != '\t') {
                problemHere(lineStart, lineEnd, "invalid metric name in # " + keyword);
                return false;
            }
            String rest = "";
            if (pos < end) {
                pos++; // exactly one separator; HELP text keeps further spaces
                rest = new String(buf, pos, end - pos);
            }
            switch (keyword) {
                case "HELP" -> {
                    FamilyBuilder f = familyNamed(name);
                    if (f.help != null) {
                        problemHere(lineStart, lineEnd, "second HELP for " + name + " ignored");
                    } else {
                        try {
                            f.help = unescapeHelp(rest);
                        } catch (Malformed e) {
                            problemHere(lineStart, lineEnd, e.getMessage());
                        }
                    }
                }
                case "TYPE" -> {
                    MetricType type = typeOf(rest.trim());
                    if (type == null) {
                        problemHere(
                                lineStart,
                                lineEnd,
                                "unknown metric type '" + rest.trim() + "' for " + name);
                        type = MetricType.UNKNOWN;
                    }
                    FamilyBuilder f = familyNamed(name);
                    if (f.typeDeclared) {
                        problemHere(lineStart, lineEnd, "second TYPE for " + name + " ignored");
                    } else if (!f.samples.isEmpty()) {
                        problemHere(
                                lineStart,
                                lineEnd,
                                "TYPE for " + name + " after its samples ignored");
                    } else {
                        f.type = type;
                        f.typeDeclared = true;
                        resolved.clear(); // sample names may now resolve to this family
                    }
                }
                default -> familyNamed(name).unit = rest.trim();
            }
            return false;
        }

        private FamilyBuilder familyNamed(String name) {
            return families.computeIfAbsent(name, FamilyBuilder::new);
        }

        private static MetricType typeOf(String text) {
            return switch (text) {
                case "counter" -> MetricType.COUNTER;
                case "gauge" -> MetricType.GAUGE;
                case "histogram" -> MetricType.HISTOGRAM;
                case "gaugehistogram" -> MetricType.GAUGE_HISTOGRAM;
                case "summary" -> MetricType.SUMMARY;
                case "info" -> MetricType.INFO;
                case "stateset" -> MetricType.STATESET;
                case "untyped", "unknown" -> MetricType.UNKNOWN;
                default -> null;
            };
        }

        private String unescapeHelp(String text) {
            if (text.indexOf('\\') < 0) {
                return text;
            }
            StringBuilder sb = new StringBuilder(text.length());
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                if (c == '\\' && i + 1 < text.length()) {
                    char e = text.charAt(++i);
                    switch (e) {
                        case 'n' -> sb.append('\n');
                        case '\\' -> sb.append('\\');
                        case '"' -> sb.append('"');
                        default -> sb.append('\\').append(e); // 0.0.4 keeps unknown escapes
                    }
                } else {
                    sb.append(c);
                }
            }
            return sb.toString();
        }

        /** Returns false when the line ended. */
        private boolean skipSpaces() {
            while (pos < end && (buf[pos] == ' ' || buf[pos] == '\t')) {
                pos++;
            }
            return pos < end;
        }

        private void sample(int lineStart, int i, int lineEnd) {
            pos = i;
            end = lineEnd;
            String name = null;
            Map<String, String> labels = Collections.emptyMap();
            if (buf[pos] == '{') {
                // UTF-8 form: the (quoted) metric name is the first element inside the braces
                pos++;
                quotedMetricName = null;
                labels = labels(true);
                name = quotedMetricName;
                if (name == null) {
                    throw new Malformed("missing metric name");
                }
                skipSpaces();
            } else {
                if (!isNameStart(buf[pos])) {
                    throw new Malformed("invalid metric name");
                }
                int nameStart = pos;
                while (pos < end && isNameChar(buf[pos])) {
                    pos++;
                }
                name = cached(nameStart, pos - nameStart);
                skipSpaces();
                if (pos < end && buf[pos] == '{') {
                    pos++;
                    labels = labels(false);
                    skipSpaces();
                } else if (pos < end && pos == nameStart + name.length()) {
                    throw new Malformed(
                            "unexpected character '" + buf[pos] + "' after metric name");
                }
            }
            if (pos >= end) {
                throw new Malformed("missing value");
            }
            int valueStart = pos;
            while (pos < end && buf[pos] != ' ' && buf[pos] != '\t') {
                pos++;
            }
            double value = parseValue(valueStart, pos);
            Long timestamp = null;
            if (skipSpaces() && buf[pos] != '#') {
                int tsStart = pos;
                while (pos < end && buf[pos] != ' ' && buf[pos] != '\t') {
                    pos++;
                }
                timestamp = parseTimestamp(tsStart, pos);
                skipSpaces();
            }
            if (pos < end) {
                if (buf[pos] == '#' && format == Format.OPENMETRICS_1_0) {
                    // an exemplar: "# {labels} value [timestamp]"; not needed for statistics
                } else {
                    throw new Malformed("unexpected text after the value");
                }
            }
            addSample(name, labels, value, timestamp);
        }

        private void addSample(String name, Map<String, String> labels, double value, Long ts) {
            FamilyBuilder family = resolved.get(name);
            if (family == null) {
                family = resolve(name);
                resolved.put(name, family);
            }
            if (name.endsWith("_created") && family.name.length() < name.length()) {
                return; // OpenMetrics creation timestamps: not a measurement
            }
            if ((family.type == MetricType.HISTOGRAM || family.type == MetricType.GAUGE_HISTOGRAM)
                    && name.endsWith("_bucket")
                    && !labels.containsKey("le")) {
                throw new Malformed("histogram bucket without an le label");
            }
            family.samples.add(new Sample(name, labels, value, ts));
            sampleCount++;
        }

        private FamilyBuilder resolve(String name) {
            FamilyBuilder exact = families.get(name);
            if (exact != null && exact.typeDeclared) {
                return exact;
            }
            for (String suffix : SUFFIXES) {
                if (name.endsWith(suffix)) {
                    FamilyBuilder base =
                            families.get(name.substring(0, name.length() - suffix.length()));
                    if (base != null && suffixFits(suffix, base.type)) {
                        return base;
                    }
                }
            }
            return exact != null ? exact : familyNamed(name);
        }

        /** Reused for the label names and values of one sample. */
        String[] labelScratch = new String[16];

        /** The metric name found inside the braces by {@link #labels(boolean)}, if any. */
        String quotedMetricName;

        private Map<String, String> labels(boolean metricNameInside) {
            int count = 0;
            boolean first = true;
            while (true) {
                if (!skipSpaces()) {
                    throw new Malformed("unterminated label set");
                }
                if (buf[pos] == '}') {
                    pos++;
                    return count == 0
                            ? Collections.emptyMap()
                            : new LabelMap(Arrays.copyOf(labelScratch, count * 2), count);
                }
                String labelName;
                if (buf[pos] == '"') {
                    pos++;
                    String quoted = labelValue("name");
                    skipSpaces();
                    if (pos < end && buf[pos] != '=') {
                        if (!metricNameInside || !first) {
                            throw new Malformed("quoted metric name must come first in '{'");
                        }
                        quotedMetricName = quoted;
                        first = false;
                        if (buf[pos] == ',') {
                            pos++;
                        } else if (buf[pos] != '}') {
                            throw new Malformed("expected ',' or '}' after the metric name");
                        }
                        continue;
                    }
                    labelName = quoted;
                } else {
                    if (!isLabelNameStart(buf[pos])) {
                        throw new Malformed("invalid label name");
                    }
                    int nameStart = pos;
                    while (pos < end && isLabelNameChar(buf[pos])) {
                        pos++;
                    }
                    labelName = cached(nameStart, pos - nameStart);
                }
                first = false;
                skipSpaces();
                if (pos >= end || buf[pos] != '=') {
                    throw new Malformed("expected '=' after label name " + labelName);
                }
                pos++;
                skipSpaces();
                if (pos >= end || buf[pos] != '"') {
                    throw new Malformed("expected '\"' to open the value of label " + labelName);
                }
                pos++;
                String value = labelValue(labelName);
                for (int i = 0; i < count * 2; i += 2) {
                    if (labelScratch[i].equals(labelName)) {
                        throw new Malformed("duplicate label " + labelName);
                    }
                }
                if (labelScratch.length < count * 2 + 2) {
                    labelScratch = Arrays.copyOf(labelScratch, labelScratch.length * 2);
                }
                labelScratch[count * 2] = labelName;
                labelScratch[count * 2 + 1] = value;
                count++;
                skipSpaces();
                if (pos >= end) {
                    throw new Malformed("unterminated label set");
                }
                if (buf[pos] == ',') {
                    pos++;
                } else if (buf[pos] != '}') {
                    throw new Malformed("expected ',' or '}' after label " + labelName);
                }
            }
        }

        private String labelValue(String labelName) {
            int start = pos;
            while (pos < end && buf[pos] != '"' && buf[pos] != '\\') {
                pos++;
            }
            if (pos < end && buf[pos] == '"') {
                return cached(start, pos++ - start);
            }
            StringBuilder sb = scratch;
            sb.setLength(0);
            sb.append(buf, start, pos - start);
            while (pos < end) {
                char c = buf[pos++];
                if (c == '"') {
                    return sb.toString();
                }
                if (c == '\\') {
                    if (pos >= end) {
                        break;
                    }
                    char e = buf[pos++];
                    switch (e) {
                        case '\\' -> sb.append('\\');
                        case '"' -> sb.append('"');
                        case 'n' -> sb.append('\n');
                        default ->
                                throw new Malformed(
                                        "invalid escape '\\" + e + "' in label " + labelName);
                    }
                } else {
                    sb.append(c);
                }
            }
            throw new Malformed("unterminated value of label " + labelName);
        }

        private double parseValue(int from, int to) {
            double fast = fastDecimal(buf, from, to);
            if (!Double.isNaN(fast)) {
                return fast;
            }
            String s = new String(buf, from, to - from);
            double v = parseFloat(s);
            if (Double.isNaN(v) && !isNaNLiteral(s)) {
                throw new Malformed("invalid value '" + s + "'");
            }
            return v;
        }

        private Long parseTimestamp(int from, int to) {
            String s = new String(buf, from, to - from);
            if (format == Format.OPENMETRICS_1_0) {
                double seconds = parseFloat(s);
                if (!Double.isFinite(seconds)) {
                    throw new Malformed("invalid timestamp '" + s + "'");
                }
                return Math.round(seconds * 1000.0);
            }
            try {
                return Long.parseLong(s);
            } catch (NumberFormatException e) {
                throw new Malformed("invalid timestamp '" + s + "' (0.0.4 wants integer ms)");
            }
        }
    }

    private static final double[] POWERS_OF_TEN = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22
    };

    /**
     * Clinger's fast path: a plain decimal with at most 15 significant digits is an exact integer
     * divided by an exact power of ten, so one IEEE division rounds it correctly (the same double
     * as {@link Double#parseDouble}). Returns NaN when the text needs the general parser.
     */
    static double fastDecimal(char[] buf, int from, int to) {
        int i = from;
        boolean negative = false;
        if (i < to && (buf[i] == '-' || buf[i] == '+')) {
            negative = buf[i] == '-';
            i++;
        }
        long mantissa = 0;
        int digits = 0;
        int fractionDigits = 0;
        boolean dot = false;
        boolean any = false;
        for (; i < to; i++) {
            char c = buf[i];
            if (c >= '0' && c <= '9') {
                any = true;
                if (mantissa != 0 || c != '0') {
                    digits++;
                }
                if (digits > 15) {
                    return Double.NaN;
                }
                mantissa = mantissa * 10 + (c - '0');
                if (dot) {
                    fractionDigits++;
                }
            } else if (c == '.' && !dot) {
                dot = true;
            } else {
                return Double.NaN;
            }
        }
        if (!any || fractionDigits >= POWERS_OF_TEN.length) {
            return Double.NaN;
        }
        double v = fractionDigits == 0 ? mantissa : mantissa / POWERS_OF_TEN[fractionDigits];
        return negative ? -v : v;
    }

    private static boolean isNaNLiteral(String s) {
        return s.equalsIgnoreCase("nan");
    }

    /**
     * Parses a float as Go's {@code strconv.ParseFloat} (which Prometheus uses) accepts it, minus
     * hexadecimal floats: decimal numbers, {@code NaN}, {@code Inf}/{@code Infinity} with an
     * optional sign, case-insensitive.
     *
     * @return the value, or NaN for invalid text (callers tell real NaN apart)
     */
    static double parseFloat(String s) {
        int n = s.length();
        if (n == 0) {
            return Double.NaN;
        }
        char first = s.charAt(0);
        int digitsFrom = (first == '+' || first == '-') ? 1 : 0;
        if (n > digitsFrom) {
            char c = s.charAt(digitsFrom);
            if (c == 'i' || c == 'I' || c == 'n' || c == 'N') {
                String word = s.substring(digitsFrom).toLowerCase(Locale.ROOT);
                if (word.equals("inf") || word.equals("infinity")) {
                    return first == '-' ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
                }
                return Double.NaN; // "nan" (any case) or garbage; the caller distinguishes
            }
        }
        boolean digit = false;
        for (int i = digitsFrom; i < n; i++) {
            char c = s.charAt(i);
            if (c >= '0' && c <= '9') {
                digit = true;
            } else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' && c != '_') {
                return Double.NaN; // rejects Java-only forms such as "1f" or "0x1p3"
            }
        }
        if (!digit) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(s.indexOf('_') >= 0 ? s.replace("_", "") : s);
        } catch (NumberFormatException e) {
            return Double.NaN;
        }
    }

    private static boolean isNameStart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    }

    private static boolean isNameChar(char c) {
        return isNameStart(c) || (c >= '0' && c <= '9');
    }

    private static boolean isLabelNameStart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }

    private static boolean isLabelNameChar(char c) {
        return isLabelNameStart(c) || (c >= '0' && c <= '9');
    }

    /** A malformed line; carries the message only (no stack trace: it is control flow). */
    private static final class Malformed extends RuntimeException {
        Malformed(String message) {
            super(message, null, false, false);
        }
    }
}
