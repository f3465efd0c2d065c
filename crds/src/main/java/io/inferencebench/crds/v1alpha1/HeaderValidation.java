package io.inferencebench.crds.v1alpha1;

import java.util.ArrayList;
import java.util.List;

/**
 * The rules for extra request headers ({@code spec.target.headers}, {@code --header}): both roads
 * check them here, and the messages name the header, never its value.
 */
public final class HeaderValidation {

    private HeaderValidation() {}

    /**
     * Headers the runner sets itself or that frame the message: hop-by-hop headers (RFC 9110
     * section 7.6.1), the framing of the body and the host. Given twice, they make a request the
     * server reads differently from what was measured (a body both chunked and of a fixed length, a
     * connection closed after every request).
     */
    public static final List<String> RESERVED =
            List.of(
                    "Host",
                    "Connection",
                    "Content-Length",
                    "Transfer-Encoding",
                    "Keep-Alive",
                    "Proxy-Connection",
                    "TE",
                    "Trailer",
                    "Upgrade",
                    "Expect");

    /**
     * Validates extra request headers: names must be HTTP tokens and not {@link #RESERVED}, values
     * must not hold control characters (a CR or LF would start a header of its own). Messages name
     * the header, never its value: values may be credentials.
     *
     * @param headers the headers, or {@code null}
     * @param field how the headers are given, e.g. {@code spec.target.headers} or {@code --header}
     * @param separator between {@code field} and a header name: {@code "."} for a field path,
     *     {@code " "} for a flag
     * @return problems, empty when valid
     */
    public static List<String> validate(
            java.util.Map<String, String> headers, String field, String separator) {
        List<String> problems = new ArrayList<>();
        if (headers == null) {
            return problems;
        }
        for (java.util.Map.Entry<String, String> e : headers.entrySet()) {
            String name = e.getKey() == null ? "" : e.getKey();
            String at = field + separator + visible(name);
            if (!isToken(name)) {
                problems.add(
                        at
                                + ": a header name must be an HTTP token (letters, digits and"
                                + " !#$%&*+.^_|~-)");
                continue;
            }
            String reserved = reserved(name);
            if (reserved != null) {
                problems.add(
                        at
                                + ": "
                                + reserved
                                + " is a hop-by-hop or framing header, which the runner sets itself"
                                + " ("
                                + String.join(", ", RESERVED)
                                + " cannot be given)"
                                + (reserved.equals("Host")
                                        ? "; put the host name in the URL (and the name its"
                                                + " certificate carries in tls.serverName /"
                                                + " --tls-server-name)"
                                        : ""));
                continue;
            }
            String value = e.getValue() == null ? "" : e.getValue();
            if (value.length() > TargetSpec.MAX_HEADER_VALUE_LENGTH) {
                problems.add(
                        at
                                + ": the value is longer than "
                                + TargetSpec.MAX_HEADER_VALUE_LENGTH
                                + " characters");
            } else if (hasControl(value)) {
                problems.add(
                        at
                                + ": the value contains a line break (CR or LF), NUL or another"
                                + " control character, which a header cannot carry (the value is"
                                + " not shown)");
            }
        }
        return problems;
    }

    /** The reserved header {@code name} stands for (case-insensitive), or {@code null}. */
    static String reserved(String name) {
        for (String r : RESERVED) {
            if (r.equalsIgnoreCase(name)) {
                return r;
            }
        }
        return null;
    }

    private static boolean isToken(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean ok =
                    (c >= 'a' && c <= 'z')
                            || (c >= 'A' && c <= 'Z')
                            || (c >= '0' && c <= '9')
                            || "!#$%&*+.^_|~-".indexOf(c) >= 0;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** Control characters a field value may not hold: C0 but horizontal tab, DEL. */
    private static boolean hasControl(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                return true;
            }
        }
        return false;
    }

    /** {@code text} with control characters written as escapes, for a message. */
    private static String visible(String text) {
        StringBuilder b = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
                b.append(String.format("\\x%02x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
