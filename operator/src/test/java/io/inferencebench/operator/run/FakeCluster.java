package io.inferencebench.operator.run;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.OutputConfigMaps;
import io.inferencebench.operator.TargetProbe;
import io.inferencebench.operator.baseline.BaselineProfiles;
import io.inferencebench.profile.cache.PrefixCacheReset;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The cluster of a step test: answers what the test sets (references, target, environment,
 * baseline), keeps the profiles the steps store in memory, records Events and deletes.
 */
final class FakeCluster implements RunCluster {

    /** One Event the steps recorded. */
    record Event(String type, String reason, String message) {}

    List<String> missing = List.of();
    TargetProbe.Result probe = new TargetProbe.Result(true, "EndpointsReady", "1 ready endpoint");
    EnvironmentStatus environment = new EnvironmentStatus();
    BaselineProfiles.Result baseline;
    final List<Event> events = new ArrayList<>();
    final Map<String, JsonNode> stored = new LinkedHashMap<>();

    /** What was stored beside the profiles (Benchmark Reports), key to text. */
    final Map<String, String> storedBeside = new LinkedHashMap<>();

    final List<Instant> readySamples = new ArrayList<>();

    /** When false, storeProfile answers as for profiles over the status budget. */
    boolean profilesFitStatus = true;

    int deletes;

    /** How every endpoint's prefix-cache reset goes; each call is counted. */
    PrefixCacheReset.Round cacheResets =
            new PrefixCacheReset.Round(
                    List.of(
                            new PrefixCacheReset.Outcome(
                                    "http://10.0.0.1:8000", "/reset_prefix_cache", null)));

    int cacheResetCalls;
    int baselineReads;

    @Override
    public List<String> missingReferences(BenchmarkRun run) {
        return missing;
    }

    @Override
    public TargetProbe.Result probeTarget(BenchmarkRun run) {
        return probe;
    }

    @Override
    public EnvironmentStatus observeEnvironment(BenchmarkRun run, Instant now) {
        return environment;
    }

    @Override
    public EnvironmentStatus sampleReadyReplicas(
            BenchmarkRun run, EnvironmentStatus current, Instant now) {
        readySamples.add(now);
        return current;
    }

    @Override
    public OutputConfigMaps.Stored storeProfile(
            BenchmarkRun run,
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            List<StageSummary> resultsBefore,
            String key,
            JsonNode profile,
            Map<String, String> besides) {
        stored.put(key, profile);
        storedBeside.putAll(besides);
        String name = ResourceNames.profile(run);
        if (!profilesFitStatus) {
            return new OutputConfigMaps.Stored(
                    null, List.of(name, name + "-1"), "ConfigMapsOnly", "too large for status");
        }
        return new OutputConfigMaps.Stored(
                List.copyOf(stored.values()),
                List.of(name),
                "InStatus",
                stored.size() + " stage profile(s) in status.profiles and ConfigMap(s) " + name);
    }

    @Override
    public List<JsonNode> profiles(
            BenchmarkRun run,
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            List<StageSummary> results) {
        if (statusProfiles != null && statusProfiles.size() == results.size()) {
            return statusProfiles;
        }
        return List.copyOf(stored.values());
    }

    @Override
    public BaselineProfiles.Result baseline(BenchmarkRun run) {
        baselineReads++;
        return baseline;
    }

    @Override
    public void event(BenchmarkRun run, String type, String reason, String message) {
        events.add(new Event(type, reason, message));
    }

    @Override
    public void delete(BenchmarkRun run) {
        deletes++;
    }

    /** The Events with {@code reason}. */
    List<Event> events(String reason) {
        return events.stream().filter(e -> e.reason().equals(reason)).toList();
    }

    @Override
    public PrefixCacheReset.Round resetPrefixCache(BenchmarkRun run) {
        cacheResetCalls++;
        return cacheResets;
    }

    int cacheEndpointCalls;

    @Override
    public PrefixCacheReset.Round prefixCacheEndpoints(BenchmarkRun run) {
        cacheEndpointCalls++;
        return new PrefixCacheReset.Round(
                cacheResets.outcomes().stream()
                        .map(o -> new PrefixCacheReset.Outcome(o.target(), null, null))
                        .toList());
    }
}
