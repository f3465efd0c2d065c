package io.inferencebench.operator.metrics;

import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.profile.prom.MetricsPageFetch;
import io.inferencebench.profile.prom.ScrapeBodyReader;
import io.inferencebench.profile.server.Scrape;
import io.inferencebench.profile.server.ServerMetricCatalog;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The operator's fetch of one replica's metrics page: the page bounded in size and time (the
 * operator serves every run from one process, so one hostile endpoint must cost a failed scrape,
 * not the heap), trimmed to the run's catalog right away so memory stays small. Never throws: what
 * goes wrong is a failed scrape whose error says what, for the coverage errors.
 */
class ScrapeClient {

    /** Configuration property: most decompressed bytes accepted from one metrics page. */
    static final String MAX_BODY_BYTES_PROPERTY = "inferencebench.metrics.max-body-bytes";

    /** Configuration property: time allowed for one scrape, request start to the body's end. */
    static final String SCRAPE_TIMEOUT_PROPERTY = "inferencebench.metrics.scrape-timeout";

    static final Duration DEFAULT_SCRAPE_TIMEOUT = Duration.ofSeconds(3);

    private final ScrapeBodyReader bodyReader;
    // HTTP/1.1: metrics endpoints speak it, and the default HTTP/2 client first tries an h2c
    // upgrade on every plain-http request.
    private final HttpClient http =
            HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();

    /**
     * @param bodyReader bounds every scraped page's size and time
     */
    ScrapeClient(ScrapeBodyReader bodyReader) {
        this.bodyReader = bodyReader;
    }

    /** The bounds the operator's configuration sets, else the defaults. */
    static ScrapeBodyReader bodyReaderFromConfig() {
        var config = ConfigProvider.getConfig();
        return new ScrapeBodyReader(
                config.getOptionalValue(MAX_BODY_BYTES_PROPERTY, Long.class)
                        .orElse(ScrapeBodyReader.DEFAULT_MAX_BYTES),
                config.getOptionalValue(SCRAPE_TIMEOUT_PROPERTY, String.class)
                        .map(Durations::parse)
                        .orElse(DEFAULT_SCRAPE_TIMEOUT));
    }

    /**
     * Scrapes one replica once.
     *
     * @param replica the replica's name in the report
     * @param uri its metrics URL
     * @param catalog the families to keep
     * @return the scrape, stamped when it was sent
     */
    Scrape scrape(String replica, URI uri, ServerMetricCatalog catalog) {
        long now = System.currentTimeMillis();
        try {
            MetricsPageFetch.Page page = MetricsPageFetch.fetch(http, uri, bodyReader);
            return Scrape.success(replica, now, catalog.trim(page.page()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Scrape.failure(replica, now, "interrupted");
        } catch (ScrapeBodyReader.BodyRefused | MetricsPageFetch.StatusRefused e) {
            return Scrape.failure(replica, now, e.getMessage());
        } catch (HttpTimeoutException e) {
            return Scrape.failure(replica, now, bodyReader.timedOutReason());
        } catch (Exception e) {
            return Scrape.failure(replica, now, e.getClass().getSimpleName());
        }
    }
}
