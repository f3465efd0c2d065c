package io.inferencebench.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.PrometheusSpec;
import io.inferencebench.profile.server.prometheus.PrometheusSourceConfig;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PrometheusSourceConfigsTest {

    @Test
    void everyFieldIsMapped() {
        PrometheusSpec spec = new PrometheusSpec();
        spec.setUrl("https://thanos.example/prometheus");
        spec.setSelector("{namespace=\"llm\"}");
        spec.setLabels(Map.of("cluster", "east"));
        spec.setJob("vllm");
        spec.setReplicaLabel("pod");
        spec.setStep("1m30s");
        spec.setTimeout("500ms");
        PrometheusSourceConfig config = PrometheusSourceConfigs.from(spec, "s3cr3t-token");
        assertThat(config.url().toString()).isEqualTo("https://thanos.example/prometheus");
        assertThat(config.bearerToken()).isEqualTo("s3cr3t-token");
        assertThat(config.selector()).isEqualTo("{namespace=\"llm\"}");
        assertThat(config.labels()).containsExactly(Map.entry("cluster", "east"));
        assertThat(config.job()).isEqualTo("vllm");
        assertThat(config.replicaLabel()).isEqualTo("pod");
        assertThat(config.step()).isEqualTo(Duration.ofSeconds(90));
        assertThat(config.timeout()).isEqualTo(Duration.ofMillis(500));
        assertThat(config.effectiveSelector().render())
                .isEqualTo("namespace=\"llm\",cluster=\"east\",job=\"vllm\"");
        assertThat(config.toString()).doesNotContain("s3cr3t-token");
        assertThat(PrometheusSourceConfigs.validate(spec)).isEmpty();
    }

    @Test
    void defaultsStayUnsetAndProblemsNameTheField() {
        PrometheusSpec spec = new PrometheusSpec();
        spec.setUrl("http://prometheus:9090");
        spec.setTimeout(null);
        PrometheusSourceConfig config = PrometheusSourceConfigs.from(spec, null);
        assertThat(config.step()).isNull();
        assertThat(config.timeout()).isNull();
        assertThat(config.bearerToken()).isNull();

        // passes the schema's pattern, but Java's regex engine cannot compile it
        spec.setSelector("{job=~\"(unclosed\"}");
        assertThat(PrometheusSourceConfigs.validate(spec))
                .singleElement()
                .asString()
                .startsWith("spec.metrics.prometheus.selector: invalid regular expression");
        spec.setSelector(null);
        spec.setUrl("http://bad host:9090");
        assertThat(PrometheusSourceConfigs.validate(spec))
                .singleElement()
                .asString()
                .startsWith("spec.metrics.prometheus.url:");
    }
}
