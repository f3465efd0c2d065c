package io.inferencebench.operator.environment;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.ReadyReplicas;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EnvironmentFingerprintTest {

    private static final Instant T0 = Instant.parse("2026-12-02T03:00:00Z");

    @Test
    void theSeriesKeepsTheFirstCountAndEveryChangeWithMinAndMax() {
        ReadyReplicas r = EnvironmentFingerprint.sample(null, 2, T0);
        r = EnvironmentFingerprint.sample(r, 2, T0.plusSeconds(5));
        r = EnvironmentFingerprint.sample(r, 1, T0.plusSeconds(10));
        r = EnvironmentFingerprint.sample(r, 3, T0.plusSeconds(15));
        r = EnvironmentFingerprint.sample(r, 3, T0.plusSeconds(20));
        assertThat(r.getChanges())
                .containsExactly(
                        "2026-12-02T03:00:00Z=2",
                        "2026-12-02T03:00:10Z=1",
                        "2026-12-02T03:00:15Z=3");
        assertThat(r.getMin()).isEqualTo(1);
        assertThat(r.getMax()).isEqualTo(3);
    }

    @Test
    void aStageProfileGetsTheCountInForceAtItsStartAndTheChangesWithinIt() {
        ReadyReplicas r = EnvironmentFingerprint.sample(null, 4, T0);
        r = EnvironmentFingerprint.sample(r, 3, T0.plusSeconds(30));
        r = EnvironmentFingerprint.sample(r, 2, T0.plusSeconds(70));
        r = EnvironmentFingerprint.sample(r, 4, T0.plusSeconds(200));
        EnvironmentStatus environment = new EnvironmentStatus();
        environment.setReadyReplicas(r);
        environment.setServerVersion("0.9.1");
        ObjectNode profile = new ObjectMapper().createObjectNode();
        profile.putObject("dimensions").put("backend", "vllm");
        EnvironmentFingerprint.annotate(
                profile, environment, T0.plusSeconds(60), T0.plusSeconds(120));
        List<String> series = new ArrayList<>();
        profile.at("/config/ready_replicas/series")
                .forEach(p -> series.add(p.path("time").asText() + "=" + p.path("ready").asInt()));
        assertThat(series).containsExactly("2026-12-02T03:00:30Z=3", "2026-12-02T03:01:10Z=2");
        assertThat(profile.at("/config/ready_replicas/min").asInt()).isEqualTo(2);
        assertThat(profile.at("/config/ready_replicas/max").asInt()).isEqualTo(3);
        assertThat(profile.at("/dimensions/server_version").asText()).isEqualTo("0.9.1");
        assertThat(profile.at("/dimensions/backend").asText())
                .as("existing keys stay")
                .isEqualTo("vllm");
        assertThat(profile.at("/dimensions").has("gpu_product")).as("unknown: absent").isFalse();
    }
}
