package io.inferencebench.operator.run;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.EventRecorder;
import io.inferencebench.operator.OutputConfigMaps;
import io.inferencebench.operator.ReferenceCheck;
import io.inferencebench.operator.TargetProbe;
import io.inferencebench.operator.baseline.BaselineProfiles;
import io.inferencebench.operator.environment.EnvironmentFingerprint;
import io.inferencebench.operator.environment.PrefixCacheResets;
import io.inferencebench.profile.cache.PrefixCacheReset;
import java.time.Instant;
import java.util.List;

/** The steps' cluster through the API server: each call goes to the class that owns it. */
public final class KubernetesRunCluster implements RunCluster {

    private final KubernetesClient client;
    private final EventRecorder events;
    private final ReferenceCheck references;
    private final TargetProbe targetProbe;
    private final EnvironmentFingerprint environment;
    private final OutputConfigMaps outputs;
    private final BaselineProfiles baselines;
    private final PrefixCacheResets prefixCaches;

    public KubernetesRunCluster(KubernetesClient client, EventRecorder events) {
        this.client = client;
        this.events = events;
        this.references = new ReferenceCheck(client);
        this.targetProbe = new TargetProbe(client);
        this.environment = new EnvironmentFingerprint(client);
        this.outputs = new OutputConfigMaps(client);
        this.baselines = new BaselineProfiles(client);
        this.prefixCaches = new PrefixCacheResets(client);
    }

    @Override
    public List<String> missingReferences(BenchmarkRun run) {
        return references.check(run);
    }

    @Override
    public TargetProbe.Result probeTarget(BenchmarkRun run) {
        return targetProbe.probe(run);
    }

    @Override
    public EnvironmentStatus observeEnvironment(BenchmarkRun run, Instant now) {
        return environment.observe(run, now);
    }

    @Override
    public EnvironmentStatus sampleReadyReplicas(
            BenchmarkRun run, EnvironmentStatus current, Instant now) {
        return environment.sampleReady(run, current, now);
    }

    @Override
    public OutputConfigMaps.Stored storeProfile(
            BenchmarkRun run,
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            List<StageSummary> resultsBefore,
            String key,
            JsonNode profile,
            java.util.Map<String, String> besides) {
        return outputs.add(run, statusProfiles, configMaps, resultsBefore, key, profile, besides);
    }

    @Override
    public List<JsonNode> profiles(
            BenchmarkRun run,
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            List<StageSummary> results) {
        return outputs.profiles(run, statusProfiles, configMaps, results);
    }

    @Override
    public BaselineProfiles.Result baseline(BenchmarkRun run) {
        return baselines.read(run);
    }

    @Override
    public void event(BenchmarkRun run, String type, String reason, String message) {
        events.record(run, type, reason, message);
    }

    @Override
    public void delete(BenchmarkRun run) {
        client.resource(run).delete();
    }

    @Override
    public PrefixCacheReset.Round resetPrefixCache(BenchmarkRun run) throws InterruptedException {
        return prefixCaches.reset(run);
    }

    @Override
    public PrefixCacheReset.Round prefixCacheEndpoints(BenchmarkRun run) {
        return prefixCaches.endpoints(run);
    }
}
