package io.inferencebench.profile.prom;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * One GET of a model server's metrics endpoint, the same for the runner's scraper and the
 * operator's: the exposition formats {@link PrometheusTextParser} reads, gzip allowed, the body
 * bounded in size and time by a {@link ScrapeBodyReader}, then parsed. Only a 200 answer is a page.
 *
 * <p>The caller owns the HTTP client (its TLS, redirects, connect timeout and threads differ
 * between a runner pod and the operator), says how a failure reads in its coverage errors, and
 * chooses the instant that stamps the page.
 */
public final class MetricsPageFetch {

    /**
     * A page answered in full.
     *
     * @param page the parsed page, not yet trimmed to a catalog
     * @param bodyReadMillis when its body's last byte was read, epoch ms
     */
    public record Page(ParsedPage page, long bodyReadMillis) {}

    /** An answer other than 200: no page. Its message is {@code HTTP <status>}. */
    public static final class StatusRefused extends IOException {

        private final int statusCode;

        /**
         * @param statusCode the HTTP status answered
         */
        public StatusRefused(int statusCode) {
            super("HTTP " + statusCode);
            this.statusCode = statusCode;
        }

        /**
         * @return the HTTP status answered
         */
        public int statusCode() {
            return statusCode;
        }
    }

    private MetricsPageFetch() {}

    /**
     * Fetches and parses one page; the body reader's timeout bounds the request and the body
     * together.
     *
     * @param http the client to send with
     * @param uri the metrics URL
     * @param bodyReader the bound on the body's size and the time from the request to its end
     * @return the page and when it was read
     * @throws StatusRefused when the answer is not 200
     * @throws ScrapeBodyReader.BodyRefused when the body is over the bound or too slow
     * @throws java.net.http.HttpTimeoutException when no answer came within the timeout
     * @throws IOException when the exchange fails otherwise
     * @throws InterruptedException when interrupted while waiting
     */
    public static Page fetch(HttpClient http, URI uri, ScrapeBodyReader bodyReader)
            throws IOException, InterruptedException {
        long startNanos = System.nanoTime();
        HttpResponse<InputStream> response =
                http.send(
                        HttpRequest.newBuilder(uri)
                                .timeout(bodyReader.timeout())
                                .header("Accept", PrometheusTextParser.ACCEPT_HEADER)
                                .header("Accept-Encoding", "gzip")
                                .GET()
                                .build(),
                        HttpResponse.BodyHandlers.ofInputStream());
        if (response.statusCode() != 200) {
            response.body().close();
            throw new StatusRefused(response.statusCode());
        }
        byte[] body =
                bodyReader.read(
                        response.body(),
                        response.headers().firstValue("Content-Encoding").orElse(null),
                        startNanos);
        long bodyReadMillis = System.currentTimeMillis();
        ParsedPage page =
                PrometheusTextParser.parse(
                        body, response.headers().firstValue("Content-Type").orElse(null));
        return new Page(page, bodyReadMillis);
    }
}
