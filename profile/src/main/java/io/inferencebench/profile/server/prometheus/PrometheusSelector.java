package io.inferencebench.profile.server.prometheus;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Label matchers that pick the model server's series in Prometheus, for example {@code
 * {namespace="llm",service="vllm"}} or {@code job=~"vllm-.*"}.
 *
 * <p>Accepted syntax: PromQL label matchers ({@code name op value}, op one of {@code =}, {@code
 * !=}, {@code =~}, {@code !~}; values in double, single or back quotes), separated by commas, with
 * or without the surrounding braces. A metric name and the {@code __name__} label are not allowed:
 * the source chooses the metric names itself. Immutable.
 *
 * @param matchers the matchers in order
 */
public record PrometheusSelector(List<Matcher> matchers) {

    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

    /** The empty selector: every series of the wanted metric names. */
    public static final PrometheusSelector ALL = new PrometheusSelector(List.of());

    /** Defensive copy. */
    public PrometheusSelector {
        matchers = matchers == null ? List.of() : List.copyOf(matchers);
    }

    /** Matcher operators of PromQL. */
    public enum Op {
        /** Equal. */
        EQ("="),
        /** Not equal. */
        NEQ("!="),
        /** Fully matches the RE2 regular expression. */
        RE("=~"),
        /** Does not fully match the RE2 regular expression. */
        NRE("!~");

        private final String text;

        Op(String text) {
            this.text = text;
        }

        /**
         * The PromQL spelling.
         *
         * @return for example {@code =~}
         */
        public String text() {
            return text;
        }
    }

    /**
     * One label matcher.
     *
     * @param label label name
     * @param op operator
     * @param value value or regular expression (unescaped)
     */
    public record Matcher(String label, Op op, String value) {

        /**
         * Whether a label value satisfies this matcher (regular expressions are evaluated with
         * Java's engine, which agrees with RE2 on the usual expressions); an absent label counts as
         * empty, as in PromQL.
         *
         * @param labelValue the series' value of {@link #label}, {@code null} when absent
         * @return whether it matches
         */
        public boolean matches(String labelValue) {
            String v = labelValue == null ? "" : labelValue;
            return switch (op) {
                case EQ -> v.equals(value);
                case NEQ -> !v.equals(value);
                case RE -> Pattern.compile(value).matcher(v).matches();
                case NRE -> !Pattern.compile(value).matcher(v).matches();
            };
        }
    }

    /**
     * Parses a selector.
     *
     * @param text the selector, {@code null} or blank for {@link #ALL}
     * @return the selector
     * @throws IllegalArgumentException with a message saying what is wrong and where (see {@link
     *     #problem})
     */
    public static PrometheusSelector parse(String text) {
        if (text == null || text.isBlank()) {
            return ALL;
        }
        return new Parser(text.trim()).parse();
    }

    /**
     * Checks a selector without throwing.
     *
     * @param text the selector
     * @return what is wrong, or {@code null} when it parses
     */
    public static String problem(String text) {
        try {
            parse(text);
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /**
     * This selector plus equality matchers.
     *
     * @param label label name
     * @param value required value
     * @return a new selector
     */
    public PrometheusSelector and(String label, String value) {
        List<Matcher> all = new ArrayList<>(matchers);
        all.add(new Matcher(label, Op.EQ, value));
        return new PrometheusSelector(all);
    }

    /**
     * Whether a series' labels satisfy every matcher.
     *
     * @param labels label name to value
     * @return whether all matchers match
     */
    public boolean matches(java.util.Map<String, String> labels) {
        for (Matcher m : matchers) {
            if (!m.matches(labels.get(m.label()))) {
                return false;
            }
        }
        return true;
    }

    /**
     * The matchers in PromQL syntax without braces, for example {@code namespace="x",job=~"a.*"}.
     *
     * @return the matcher list (empty when there are none)
     */
    public String render() {
        StringBuilder b = new StringBuilder();
        for (Matcher m : matchers) {
            if (b.length() > 0) {
                b.append(',');
            }
            b.append(m.label()).append(m.op().text()).append(quote(m.value()));
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return "{" + render() + "}";
    }

    /**
     * A PromQL double-quoted string literal.
     *
     * @param value raw value
     * @return the quoted, escaped literal
     */
    static String quote(String value) {
        StringBuilder b = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\\' -> b.append("\\\\");
                case '"' -> b.append("\\\"");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> b.append(c);
            }
        }
        return b.append('"').toString();
    }

    private static final class Parser {
        private final String s;
        private int pos;

        Parser(String s) {
            this.s = s;
        }

        PrometheusSelector parse() {
            boolean braces = s.startsWith("{");
            if (!braces && !s.isEmpty() && LABEL_NAME.matcher(s).matches()) {
                throw fail(
                        "'"
                                + s
                                + "' looks like a metric name; give label matchers only, for"
                                + " example {job=\""
                                + s
                                + "\"}");
            }
            if (!braces && s.indexOf('{') > 0) {
                throw fail("a metric name before '{' is not allowed; give label matchers only");
            }
            if (braces) {
                if (!s.endsWith("}")) {
                    throw fail("missing closing '}'");
                }
                pos = 1;
            }
            int end = braces ? s.length() - 1 : s.length();
            List<Matcher> out = new ArrayList<>();
            skipSpace(end);
            while (pos < end) {
                out.add(matcher(end));
                skipSpace(end);
                if (pos < end) {
                    if (s.charAt(pos) != ',') {
                        throw fail("expected ',' at position " + (pos + 1));
                    }
                    pos++;
                    skipSpace(end);
                }
            }
            return new PrometheusSelector(out);
        }

        private Matcher matcher(int end) {
            int start = pos;
            while (pos < end
                    && (Character.isLetterOrDigit(s.charAt(pos)) || s.charAt(pos) == '_')) {
                pos++;
            }
            String label = s.substring(start, pos);
            if (!LABEL_NAME.matcher(label).matches()) {
                throw fail(
                        "expected a label name (letters, digits, '_', not starting with a digit)"
                                + " at position "
                                + (start + 1));
            }
            if (label.equals("__name__")) {
                throw fail("__name__ is not allowed: the metric names come from the catalog");
            }
            skipSpace(end);
            Op op = null;
            for (Op candidate : List.of(Op.RE, Op.NRE, Op.NEQ, Op.EQ)) {
                if (s.startsWith(candidate.text(), pos)) {
                    op = candidate;
                    break;
                }
            }
            if (op == null) {
                throw fail("expected =, !=, =~ or !~ after '" + label + "'");
            }
            pos += op.text().length();
            skipSpace(end);
            String value = string(end, label);
            if (op == Op.RE || op == Op.NRE) {
                try {
                    Pattern.compile(value);
                } catch (java.util.regex.PatternSyntaxException e) {
                    throw fail(
                            "invalid regular expression for '"
                                    + label
                                    + "': "
                                    + e.getDescription());
                }
            }
            return new Matcher(label, op, value);
        }

        private String string(int end, String label) {
            if (pos >= end) {
                throw fail("missing value for '" + label + "'");
            }
            char q = s.charAt(pos);
            if (q != '"' && q != '\'' && q != '`') {
                throw fail("the value of '" + label + "' must be quoted, for example \"value\"");
            }
            pos++;
            StringBuilder b = new StringBuilder();
            while (pos < end) {
                char c = s.charAt(pos++);
                if (c == q) {
                    return b.toString();
                }
                if (c == '\\' && q != '`') {
                    if (pos >= end) {
                        break;
                    }
                    char e = s.charAt(pos++);
                    switch (e) {
                        case 'n' -> b.append('\n');
                        case 't' -> b.append('\t');
                        case 'r' -> b.append('\r');
                        case '\\', '"', '\'' -> b.append(e);
                        default -> b.append('\\').append(e);
                    }
                } else {
                    b.append(c);
                }
            }
            throw fail("unterminated value for '" + label + "'");
        }

        private void skipSpace(int end) {
            while (pos < end && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }

        private IllegalArgumentException fail(String message) {
            return new IllegalArgumentException(message);
        }
    }
}
