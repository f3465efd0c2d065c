package io.inferencebench.runner.http;

/**
 * What to tell the user about a redirect. The runner never follows one: a load generator that
 * follows redirects measures another server (and sends the API key there), so the answer is a
 * failure that names where the server pointed.
 */
public final class Redirects {

    /** Longest part of a Location shown in a message. */
    static final int MAX_SHOWN = 200;

    private Redirects() {}

    /**
     * The advice for a redirect to {@code location} (the server's text, shown bounded; print it
     * cleaned).
     *
     * @param baseUrlField how the base URL is given, e.g. {@code --base-url}
     */
    public static String advice(String location, String baseUrlField) {
        if (location == null || location.isBlank()) {
            return "a redirect without a Location; check "
                    + baseUrlField
                    + " (the scheme, a path prefix)";
        }
        String shown =
                location.length() > MAX_SHOWN ? location.substring(0, MAX_SHOWN) + "…" : location;
        return "the server redirected to "
                + shown
                + "; use that URL as "
                + baseUrlField
                + " (redirects are not followed)";
    }
}
