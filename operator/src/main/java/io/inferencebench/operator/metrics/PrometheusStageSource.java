package io.inferencebench.operator.metrics;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.PrometheusSpec;
import io.inferencebench.crds.v1alpha1.SecretKeyRef;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricCatalog;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.profile.server.prometheus.PrometheusApiSource;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * A stage's server metrics read from the Prometheus server of {@code spec.metrics.prometheus} for
 * the stage window. The bearer token is read from its Secret on every report (so a rotated token is
 * picked up and nothing is cached), used only in the request header, and never put in a message.
 * Never throws: whatever goes wrong becomes a report without statistics whose coverage error says
 * what, for the ServerMetricsCollected condition. Prometheus' answers are bounded like scraped
 * pages: at most the scrape body bound each, and {@code timeout} from each request to its body's
 * end, so a Prometheus whose answer never ends costs one timeout, not a reconciler thread.
 */
public class PrometheusStageSource {

    /** Prefix of coverage errors caused by the token Secret rather than by Prometheus. */
    static final String TOKEN_FIELD = PrometheusSourceConfigs.FIELD + ".bearerTokenSecretRef";

    private final KubernetesClient client;
    private final long maxBodyBytes;

    public PrometheusStageSource(KubernetesClient client) {
        this(client, io.inferencebench.profile.prom.ScrapeBodyReader.DEFAULT_MAX_BYTES);
    }

    /**
     * @param maxBodyBytes most bytes accepted in one Prometheus answer (the scrape body bound)
     */
    public PrometheusStageSource(KubernetesClient client, long maxBodyBytes) {
        this.client = client;
        this.maxBodyBytes = maxBodyBytes;
    }

    /**
     * The statistics of one stage window.
     *
     * @param run the run (its spec has {@code metrics.prometheus})
     * @param catalog which metrics to summarise
     * @param startMillis window start (the stage's start barrier), epoch ms
     * @param endMillis window end, epoch ms
     * @return the report; on failure empty with one failed scrape and the reason in its coverage
     */
    public ServerMetricsReport report(
            BenchmarkRun run, ServerMetricCatalog catalog, long startMillis, long endMillis) {
        PrometheusSpec spec = run.getSpec().getMetrics().getPrometheus();
        TokenLookup lookup = token(run);
        if (lookup.problem() != null) {
            return failed(lookup.problem());
        }
        try (PrometheusApiSource source =
                new PrometheusApiSource(
                        PrometheusSourceConfigs.from(spec, lookup.token()), maxBodyBytes)) {
            return source.report(catalog, startMillis, Math.max(startMillis, endMillis));
        } catch (IllegalArgumentException e) {
            // Validation messages name fields, never the token's value.
            return failed(PrometheusSourceConfigs.FIELD + ": " + e.getMessage());
        }
    }

    /**
     * The step the window query of a run uses at most ({@link PrometheusApiSource#step}): how old
     * Prometheus' newest sample may be. Zero when the query cannot be made anyway (token Secret or
     * configuration problem), so nobody waits for a report that will say so.
     *
     * @param run the run (its spec has {@code metrics.prometheus})
     * @return milliseconds
     */
    public long stepMillis(BenchmarkRun run) {
        PrometheusSpec spec = run.getSpec().getMetrics().getPrometheus();
        TokenLookup lookup = token(run);
        if (lookup.problem() != null) {
            return 0;
        }
        try (PrometheusApiSource source =
                new PrometheusApiSource(
                        PrometheusSourceConfigs.from(spec, lookup.token()), maxBodyBytes)) {
            return source.step().toMillis();
        } catch (IllegalArgumentException e) {
            return 0;
        }
    }

    private record TokenLookup(String token, String problem) {}

    /**
     * The token {@code bearerTokenSecretRef} names: none without one, else its value or why not.
     */
    private TokenLookup token(BenchmarkRun run) {
        SecretKeyRef ref = run.getSpec().getMetrics().getPrometheus().getBearerTokenSecretRef();
        return ref == null
                ? new TokenLookup(null, null)
                : token(run.getMetadata().getNamespace(), ref);
    }

    private TokenLookup token(String namespace, SecretKeyRef ref) {
        Secret secret;
        try {
            secret = client.secrets().inNamespace(namespace).withName(ref.getName()).get();
        } catch (KubernetesClientException e) {
            return new TokenLookup(
                    null,
                    TOKEN_FIELD
                            + ": cannot read Secret "
                            + ref.getName()
                            + " (HTTP "
                            + e.getCode()
                            + ")");
        }
        if (secret == null) {
            return new TokenLookup(null, TOKEN_FIELD + ": Secret " + ref.getName() + " not found");
        }
        String value = decoded(secret.getData(), ref.getKey());
        if (value == null && secret.getStringData() != null) {
            value = secret.getStringData().get(ref.getKey());
        }
        if (value == null) {
            return new TokenLookup(
                    null,
                    TOKEN_FIELD + ": Secret " + ref.getName() + " has no key " + ref.getKey());
        }
        // Token files usually end in a newline; Prometheus trims its own credentials files too.
        value = value.strip();
        if (value.isEmpty() || value.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            return new TokenLookup(
                    null,
                    TOKEN_FIELD
                            + ": key "
                            + ref.getKey()
                            + " of Secret "
                            + ref.getName()
                            + " is empty or holds control characters");
        }
        return new TokenLookup(value, null);
    }

    private static String decoded(Map<String, String> data, String key) {
        if (data == null || data.get(key) == null) {
            return null;
        }
        try {
            return new String(Base64.getDecoder().decode(data.get(key)), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static ServerMetricsReport failed(String message) {
        return new ServerMetricsReport(
                List.of(), Map.of(), new ScrapeCoverage(0, 0, 1, 0, List.of(message), Map.of()));
    }
}
