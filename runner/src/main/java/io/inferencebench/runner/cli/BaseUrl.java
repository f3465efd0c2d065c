package io.inferencebench.runner.cli;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/** Checks {@code --base-url} before anything is opened, so a typo never reaches the network. */
final class BaseUrl {

    private BaseUrl() {}

    /**
     * Parses and checks a base URL: http or https, a host, a port in 1-65535, no query or fragment.
     *
     * @throws Main.UsageError naming {@code flag} and what is allowed
     */
    static URI check(String flag, String text) {
        String example = " (e.g. http://127.0.0.1:8000 or https://llm.example.com/v1-prefix)";
        if (text == null || text.isBlank()) {
            throw new Main.UsageError(flag + ": must not be empty" + example);
        }
        if (!text.contains("://")) {
            throw new Main.UsageError(
                    flag + ": '" + text + "' has no http:// or https:// scheme" + example);
        }
        URI uri;
        try {
            uri = new URI(text.strip());
        } catch (URISyntaxException e) {
            throw new Main.UsageError(
                    flag + ": '" + text + "' is not a URL: " + e.getReason() + example);
        }
        String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
        if (scheme == null || uri.isOpaque()) {
            throw new Main.UsageError(
                    flag + ": '" + text + "' has no http:// or https:// scheme" + example);
        }
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new Main.UsageError(
                    flag
                            + ": scheme '"
                            + uri.getScheme()
                            + "' is not supported; use http or https"
                            + example);
        }
        if (uri.getHost() == null) {
            // URI leaves host null (and puts everything into the authority) when the port is not
            // a number or out of int range; say which part is wrong.
            String authority = uri.getRawAuthority();
            if (authority != null && authority.matches(".*:[^\\]]*")) {
                String port = authority.substring(authority.lastIndexOf(':') + 1);
                throw new Main.UsageError(
                        flag + ": port '" + port + "' is not a number within 1-65535" + example);
            }
            throw new Main.UsageError(flag + ": '" + text + "' has no host" + example);
        }
        if (uri.getPort() == 0 || uri.getPort() > 65535 || uri.getPort() < -1) {
            throw new Main.UsageError(
                    flag + ": port " + uri.getPort() + " is outside 1-65535" + example);
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new Main.UsageError(
                    flag + ": must not have a query or fragment; set the path with --endpoint");
        }
        if (uri.getRawUserInfo() != null) {
            throw new Main.UsageError(
                    flag
                            + ": credentials in the URL are not sent; use --api-key-file or"
                            + " --header");
        }
        return uri;
    }
}
