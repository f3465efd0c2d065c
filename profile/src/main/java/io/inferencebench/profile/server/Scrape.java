package io.inferencebench.profile.server;

import io.inferencebench.profile.prom.ParsedPage;

/**
 * One scrape of one replica: a parsed page, or the error that prevented it.
 *
 * @param replica replica id (pod name or endpoint address)
 * @param timestampMillis when the scrape was taken (epoch ms, wall clock)
 * @param page the parsed page, {@code null} when the scrape failed
 * @param error why the scrape failed, {@code null} on success
 */
public record Scrape(String replica, long timestampMillis, ParsedPage page, String error) {

    /** Validates that exactly one of page and error is present. */
    public Scrape {
        if (replica == null) {
            throw new IllegalArgumentException("replica must not be null");
        }
        if ((page == null) == (error == null)) {
            throw new IllegalArgumentException("a scrape has either a page or an error");
        }
    }

    /**
     * A successful scrape.
     *
     * @param replica replica id
     * @param timestampMillis epoch ms
     * @param page the parsed page
     * @return the scrape
     */
    public static Scrape success(String replica, long timestampMillis, ParsedPage page) {
        return new Scrape(replica, timestampMillis, page, null);
    }

    /**
     * A failed scrape.
     *
     * @param replica replica id
     * @param timestampMillis epoch ms
     * @param error what went wrong
     * @return the scrape
     */
    public static Scrape failure(String replica, long timestampMillis, String error) {
        return new Scrape(replica, timestampMillis, null, error);
    }

    /**
     * Whether the scrape returned a page.
     *
     * @return {@code true} on success
     */
    public boolean succeeded() {
        return page != null;
    }
}
