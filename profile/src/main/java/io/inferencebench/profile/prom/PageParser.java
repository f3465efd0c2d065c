package io.inferencebench.profile.prom;

import static io.inferencebench.profile.prom.PrometheusTextParser.fastDecimal;
import static io.inferencebench.profile.prom.PrometheusTextParser.parseFloat;

import io.inferencebench.profile.prom.PrometheusTextParser.Format;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One parse of one page for {@link PrometheusTextParser}: its state (families so far, problems, the
 * position in the text) and the grammar of a line (comment, sample, labels, value, timestamp). Used
 * once, by one thread.
 */
final class PageParser {

    private static final int EXCERPT_LENGTH = 120;

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
     * Names and label values repeat on every line of a page; reusing their String instances saves
     * most allocation (a direct-mapped cache keyed by the characters).
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

    PageParser(Format format) {
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
        if (problems.size() < PrometheusTextParser.MAX_PROBLEMS) {
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
                            lineStart, lineEnd, "TYPE for " + name + " after its samples ignored");
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
                throw new Malformed("unexpected character '" + buf[pos] + "' after metric name");
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

    private static boolean isNaNLiteral(String s) {
        return s.equalsIgnoreCase("nan");
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
