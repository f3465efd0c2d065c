package io.inferencebench.operator.run;

import static io.inferencebench.operator.run.SweepStages.firstStageFinished;
import static io.inferencebench.operator.run.SweepStages.running;
import static io.inferencebench.operator.run.SweepStages.stageDone;
import static io.inferencebench.operator.run.Turns.CLOCK;
import static io.inferencebench.operator.run.Turns.NOW;
import static io.inferencebench.operator.run.Turns.decided;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConditionTypes;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.operator.environment.EnvironmentFingerprint;
import io.inferencebench.operator.metrics.ServerMetricsCondition;
import io.inferencebench.profile.server.ScrapeCoverage;
import io.inferencebench.profile.server.ServerMetricsReport;
import io.inferencebench.testkit.BenchmarkReportSchema;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A finished stage into its profile, once. */
class StageAssemblyTest {

    private static final Instant STAGE_ONE = NOW.minusSeconds(30);

    private final FakeCluster cluster = new FakeCluster();
    private final RecordedWindows windows = new RecordedWindows();
    private final StageAssembly assembly = new StageAssembly(cluster, windows, CLOCK);

    @Test
    void aStageIsAssembledOnceWhateverHowOftenItIsAskedFor() {
        RunTurn turn = firstStageFinished(Turns.sweep(), running(STAGE_ONE));
        assembly.assemble(turn, 1);
        assembly.assemble(turn, 1);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getResults()).hasSize(1);
        assertThat(status.getProfiles()).hasSize(1);
        assertThat(cluster.stored).hasSize(1);
        assertThat(windows.reported).hasSize(1);
    }

    /**
     * spec.output.lpgDialect and formats reach status.profiles and the output ConfigMaps: the final
     * dialect's meanings, and a valid Benchmark Report beside the profile, named in the stage's
     * result.
     */
    @Test
    void theRunsDialectAndFormatsReachStatusAndTheOutputConfigMaps() {
        RunTurn turn =
                firstStageFinished(
                        Turns.run(
                                """
                                target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                                load: {requestRates: [5, 10], numPrompts: 100, cooldown: 0s}
                                runner: {parallelism: 2}
                                output: {lpgDialect: final, formats: [lpg, br0.2]}
                                """),
                        running(STAGE_ONE));
        assembly.assemble(turn, 1);

        BenchmarkRunStatus status = decided(turn);
        var profile = status.getProfiles().getFirst();
        var m = profile.get("metrics");
        assertThat(profile.at("/dimensions/lpg_dialect").asText()).isEqualTo("final");
        double seconds = m.get("benchmark_time").asDouble();
        assertThat(m.get("throughput").asDouble())
                .isEqualTo(m.get("total_output_token").asLong() / seconds)
                .isNotEqualTo(m.get("throughput_rps").asDouble());
        assertThat(m.get("throughput_rps").asDouble())
                .isEqualTo(m.get("num_prompts_succeeded").asLong() / seconds);
        assertThat(profile.at("/config/num_models").asInt()).isEqualTo(1);

        var result = status.getResults().getFirst();
        String reportKey = result.getBenchmarkReportKey();
        assertThat(reportKey)
                .isEqualTo(result.getProfileKey().replaceAll("\\.json$", ".br0.2.yaml"))
                .matches("[-._a-zA-Z0-9]{1,253}");
        assertThat(cluster.storedBeside).containsOnlyKeys(reportKey);
        String yaml = cluster.storedBeside.get(reportKey);
        JsonNode report;
        try {
            report = new YAMLMapper().readTree(yaml);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        assertThat(BenchmarkReportSchema.problems(report)).isEmpty();
        assertThat(report.at("/run/eid").asText()).isEqualTo("inferencebench-" + Turns.UID);
        assertThat(report.at("/run/uid").asText()).isEqualTo("inferencebench-uid-1-stage-1");
        assertThat(report.at("/results/request_performance/aggregate/requests/total").asLong())
                .isEqualTo(m.get("requests_sent").asLong());

        // the defaults: seed, no report
        FakeCluster plainCluster = new FakeCluster();
        RunTurn plain = firstStageFinished(Turns.sweep(), running(STAGE_ONE));
        new StageAssembly(plainCluster, new RecordedWindows(), CLOCK).assemble(plain, 1);
        BenchmarkRunStatus plainStatus = decided(plain);
        var seed = plainStatus.getProfiles().getFirst();
        assertThat(seed.at("/dimensions/lpg_dialect").asText()).isEqualTo("seed");
        assertThat(seed.at("/metrics/throughput").asDouble())
                .isEqualTo(seed.at("/metrics/throughput_rps").asDouble());
        assertThat(plainStatus.getResults().getFirst().getBenchmarkReportKey()).isNull();
        assertThat(plainCluster.storedBeside).isEmpty();
    }

    @Test
    void noPartWithTheStagesResultLeavesStatusAsItWas() {
        RunTurn turn =
                Turns.sweep()
                        .status(running(STAGE_ONE))
                        .part(0, Map.of(PartReport.STATE, PartReport.STATE_RUNNING))
                        .build();
        assembly.assemble(turn, 1);
        assertThat(decided(turn).getResults()).isNull();
        assertThat(windows.reported).isEmpty();
        assertThat(cluster.stored).isEmpty();
    }

    @Test
    void theProfileCarriesTheStatusModelAndTheReadyReplicasOfItsWindow() {
        BenchmarkRunStatus before = running(STAGE_ONE);
        before.setModel("acme/found-7b");
        EnvironmentStatus environment = new EnvironmentStatus();
        environment.setReadyReplicas(EnvironmentFingerprint.sample(null, 2, NOW.minusSeconds(600)));
        before.setEnvironment(environment);
        RunTurn turn = firstStageFinished(Turns.sweep(), before);

        assembly.assemble(turn, 1);

        var profile = decided(turn).getProfiles().getFirst();
        assertThat(profile.at("/dimensions/model_id").asText()).isEqualTo("acme/found-7b");
        assertThat(profile.at("/config/ready_replicas/min").asInt()).isEqualTo(2);
        assertThat(profile.at("/config/ready_replicas/series/0/ready").asInt()).isEqualTo(2);
    }

    @Test
    void profilesTooLargeForStatusAreNamedByTheirConfigMapsAndTheConditionSaysSo() {
        cluster.profilesFitStatus = false;
        RunTurn turn = firstStageFinished(Turns.sweep(), running(STAGE_ONE));

        assembly.assemble(turn, 1);

        BenchmarkRunStatus status = decided(turn);
        assertThat(status.getProfiles()).isNull();
        assertThat(status.getResults()).hasSize(1);
        assertThat(status.getProfileConfigMap()).isEqualTo("sweep-profile");
        assertThat(status.getProfileConfigMaps())
                .containsExactly("sweep-profile", "sweep-profile-1");
        var stored = Turns.condition(status, ConditionTypes.RESULTS_STORED);
        assertThat(stored.getStatus()).isEqualTo("True");
        assertThat(stored.getReason()).isEqualTo("ConfigMapsOnly");
    }

    @Test
    void aPrometheusSourceThatAnsweredNothingWarnsNamingPrometheus() {
        windows.report =
                new ServerMetricsReport(
                        List.of(),
                        Map.of(),
                        new ScrapeCoverage(1, 0, 1, 0, List.of("HTTP 401 unauthorized"), Map.of()));
        RunTurn turn =
                Turns.run(
                                """
                                target: {url: "http://127.0.0.1:1", model: m}
                                load: {requestRates: [5], numPrompts: 10}
                                metrics: {prometheus: {url: "http://prom:9090"}}
                                """)
                        .status(running(STAGE_ONE))
                        .part(0, stageDone(1, 0, 5))
                        .build();

        assembly.assemble(turn, 1);

        assertThat(cluster.events(ServerMetricsCondition.PROMETHEUS_QUERY_FAILED))
                .singleElement()
                .satisfies(
                        e ->
                                assertThat(e.message())
                                        .isEqualTo(
                                                "no server metrics for stage 1 from Prometheus:"
                                                        + " HTTP 401 unauthorized; the run"
                                                        + " continues without them"));
        assertThat(decided(turn).getResults()).hasSize(1);
    }
}
