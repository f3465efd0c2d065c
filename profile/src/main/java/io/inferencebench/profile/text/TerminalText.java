package io.inferencebench.profile.text;

/**
 * Makes text that came from a server or a file safe to print on a terminal. A model server's error
 * body, a model id, a metric label or a line of a dataset can carry escape sequences that would
 * recolour, retitle, rewrite or hide what the user reads (or, on some terminals, write to the
 * clipboard or answer back); none of them reaches the terminal through these functions.
 *
 * <p>Escape sequences (CSI {@code ESC [ ... final}, OSC {@code ESC ] ... BEL} or {@code ESC \},
 * DCS/SOS/PM/APC strings and two-character {@code ESC x}) are removed; every other control
 * character — C0, DEL, C1 and the bidirectional overrides that reorder what is shown — is written
 * as a visible escape ({@code \x1b}, {@code \u009b}, {@code \u202e}), so nothing is hidden and
 * nothing acts.
 */
public final class TerminalText {

    private TerminalText() {}

    /** {@code text} for one line of output: line breaks and tabs are escaped too. */
    public static String oneLine(String text) {
        return clean(text, false);
    }

    /**
     * {@code text} for a message meant to span lines: newlines and tabs are kept (a carriage
     * return, which would overwrite the line, is escaped).
     */
    public static String multiLine(String text) {
        return clean(text, true);
    }

    /**
     * {@code text} without its escape sequences, every other character as it was (file names use
     * this before they replace what is left of the control characters: a model id that would
     * retitle the terminal becomes its visible text, not {@code _]0;title_}).
     */
    public static String withoutSequences(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder out = new StringBuilder(text.length());
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (c == 0x1b || c == 0x9b || c == 0x9d || c == 0x90 || c == 0x9f || c == 0x9e
                    || c == 0x98) {
                i = skipSequence(text, i);
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** {@code value} as a one-line string ({@code String.valueOf}), for format arguments. */
    public static Object argument(Object value) {
        return value instanceof CharSequence s ? oneLine(s.toString()) : value;
    }

    private static String clean(String text, boolean keepLines) {
        if (text == null) {
            return null;
        }
        int n = text.length();
        int i = 0;
        while (i < n && !special(text.charAt(i))) {
            i++;
        }
        if (i == n) {
            return text;
        }
        StringBuilder out = new StringBuilder(n + 16);
        out.append(text, 0, i);
        while (i < n) {
            char c = text.charAt(i);
            if (!special(c)) {
                out.append(c);
                i++;
            } else if (c == 0x1b || c == 0x9b || c == 0x9d || c == 0x90 || c == 0x9f || c == 0x9e
                    || c == 0x98) {
                i = skipSequence(text, i);
            } else if (keepLines && (c == '\n' || c == '\t')) {
                out.append(c);
                i++;
            } else {
                escape(out, c);
                i++;
            }
        }
        return out.toString();
    }

    /** Control characters, DEL, C1, the bidi controls and the Unicode line separators. */
    private static boolean special(char c) {
        return c < 0x20
                || (c >= 0x7f && c <= 0x9f)
                || (c >= 0x202a && c <= 0x202e)
                || (c >= 0x2066 && c <= 0x2069)
                || c == 0x2028
                || c == 0x2029
                || c == 0x200e
                || c == 0x200f
                || c == 0x061c;
    }

    private static void escape(StringBuilder out, char c) {
        if (c < 0x100) {
            out.append("\\x")
                    .append(Character.forDigit(c >> 4, 16))
                    .append(Character.forDigit(c & 0xf, 16));
        } else {
            out.append(String.format("\\u%04x", (int) c));
        }
    }

    /**
     * The index after the escape sequence starting at {@code start} (an ESC, or a C1 introducer:
     * CSI 0x9b, OSC 0x9d, DCS 0x90, SOS 0x98, PM 0x9e, APC 0x9f). An unterminated string sequence
     * runs to the end of the text.
     */
    private static int skipSequence(String s, int start) {
        int n = s.length();
        char c = s.charAt(start);
        int i = start + 1;
        char kind;
        if (c == 0x1b) {
            if (i >= n) {
                return n;
            }
            kind = s.charAt(i);
            i++;
        } else {
            kind =
                    switch (c) {
                        case 0x9b -> '[';
                        case 0x9d -> ']';
                        case 0x90 -> 'P';
                        case 0x98 -> 'X';
                        case 0x9e -> '^';
                        default -> '_';
                    };
        }
        switch (kind) {
            case '[' -> {
                // CSI: parameter and intermediate bytes, then one final byte in 0x40-0x7e
                while (i < n) {
                    char b = s.charAt(i);
                    if (b >= 0x40 && b <= 0x7e) {
                        return i + 1;
                    }
                    if (b < 0x20 || b > 0x7e) {
                        // not part of a CSI: the sequence was cut short; go on from here
                        return i;
                    }
                    i++;
                }
                return n;
            }
            case ']', 'P', 'X', '^', '_' -> {
                // string sequences end at BEL, ST (ESC \) or the C1 ST 0x9c
                while (i < n) {
                    char b = s.charAt(i);
                    if (b == 0x07 || b == 0x9c) {
                        return i + 1;
                    }
                    if (b == 0x1b && i + 1 < n && s.charAt(i + 1) == '\\') {
                        return i + 2;
                    }
                    i++;
                }
                return n;
            }
            default -> {
                // ESC followed by intermediates (0x20-0x2f) and one final byte: e.g. ESC c, ESC ( B
                while (i <= n - 1 && s.charAt(i - 1) >= 0x20 && s.charAt(i - 1) <= 0x2f) {
                    i++;
                }
                return i;
            }
        }
    }
}
