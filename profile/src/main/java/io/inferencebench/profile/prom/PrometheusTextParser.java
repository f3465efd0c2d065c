package io.inferencebench.profile.prom;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

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
                PageParser p = new PageParser(Format.TEXT_0_0_4);
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
        PageParser p = new PageParser(f);
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
}
