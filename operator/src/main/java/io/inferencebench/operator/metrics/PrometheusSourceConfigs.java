package io.inferencebench.operator.metrics;

import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.PrometheusSpec;
import io.inferencebench.profile.server.prometheus.PrometheusSourceConfig;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.List;

/**
 * The one mapping from {@code spec.metrics.prometheus} to the server-metrics library's {@link
 * PrometheusSourceConfig}. The bearer token is never part of the spec: the caller reads it from the
 * referenced Secret and passes it in.
 */
public final class PrometheusSourceConfigs {

    /** Field path used in every message. */
    public static final String FIELD = "spec.metrics.prometheus";

    private PrometheusSourceConfigs() {}

    /**
     * Builds the library configuration.
     *
     * @param spec the section (schema-valid)
     * @param bearerToken the token read from {@code bearerTokenSecretRef}, {@code null} for none
     * @return the configuration
     * @throws IllegalArgumentException when the URL or a duration does not parse (the message names
     *     the field)
     */
    public static PrometheusSourceConfig from(PrometheusSpec spec, String bearerToken) {
        URI url;
        try {
            url = new URI(spec.getUrl());
        } catch (URISyntaxException | NullPointerException e) {
            throw new IllegalArgumentException(
                    FIELD + ".url: not a valid URL, e.g. http://prometheus.monitoring:9090");
        }
        return new PrometheusSourceConfig(
                url,
                bearerToken,
                spec.getSelector(),
                spec.getLabels(),
                spec.getJob(),
                spec.getReplicaLabel(),
                duration(FIELD + ".step", spec.getStep()),
                duration(FIELD + ".timeout", spec.getTimeout()));
    }

    /**
     * Checks what the CRD schema cannot: the selector's full grammar and regular expressions, and
     * the library's own limits.
     *
     * @param spec the section
     * @return messages naming the field, empty when valid
     */
    public static List<String> validate(PrometheusSpec spec) {
        try {
            return from(spec, null).validate(FIELD);
        } catch (IllegalArgumentException e) {
            return List.of(e.getMessage());
        }
    }

    private static Duration duration(String field, String text) {
        if (text == null) {
            return null;
        }
        var problem = Durations.validate(field, text);
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get());
        }
        return Durations.parse(text);
    }
}
