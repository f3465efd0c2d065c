package io.inferencebench.operator.run;

import com.fasterxml.jackson.databind.JsonNode;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.EnvironmentStatus;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.operator.OutputConfigMaps;
import io.inferencebench.operator.TargetProbe;
import io.inferencebench.operator.baseline.BaselineProfiles;
import java.time.Instant;
import java.util.List;

/**
 * What the steps read from and write to the cluster besides the run's status: its references and
 * target, the profile ConfigMaps, the baseline, Events, the run itself when it expires. {@link
 * KubernetesRunCluster} is the real one; a unit test gives its own answers and records the writes.
 */
public interface RunCluster {

    /**
     * The run's references (Secrets, ConfigMaps, ServiceAccount) that are missing.
     *
     * @return one message per missing reference, naming its field; empty when all exist
     */
    List<String> missingReferences(BenchmarkRun run);

    /** Whether the target is ready for load (ready endpoints, or a URL that answers). */
    TargetProbe.Result probeTarget(BenchmarkRun run);

    /** The target's environment (images, server version, replicas) when runners launch. */
    EnvironmentStatus observeEnvironment(BenchmarkRun run, Instant now);

    /**
     * The environment with one more sample of the target's ready replicas.
     *
     * @param current the environment in status, may be {@code null}
     */
    EnvironmentStatus sampleReadyReplicas(BenchmarkRun run, EnvironmentStatus current, Instant now);

    /**
     * Adds one stage's profile, and what is stored beside it, to the output ConfigMaps.
     *
     * @see OutputConfigMaps#add
     */
    OutputConfigMaps.Stored storeProfile(
            BenchmarkRun run,
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            List<StageSummary> resultsBefore,
            String key,
            JsonNode profile,
            java.util.Map<String, String> besides);

    /**
     * Every stage's profile, from status when it holds them all, else from the ConfigMaps.
     *
     * @see OutputConfigMaps#profiles
     */
    List<JsonNode> profiles(
            BenchmarkRun run,
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            List<StageSummary> results);

    /** The profiles of {@code spec.baseline}'s run, or why there are none (yet). */
    BaselineProfiles.Result baseline(BenchmarkRun run);

    /** Records an Event about the run (never fails the reconcile). */
    void event(BenchmarkRun run, String type, String reason, String message);

    /**
     * Empties the prefix cache of every ready endpoint behind the run's target.
     *
     * @see io.inferencebench.operator.environment.PrefixCacheResets#reset
     */
    io.inferencebench.profile.cache.PrefixCacheReset.Round resetPrefixCache(BenchmarkRun run)
            throws InterruptedException;

    /**
     * The ready endpoints behind the run's target, none of them reset.
     *
     * @see io.inferencebench.operator.environment.PrefixCacheResets#endpoints
     */
    io.inferencebench.profile.cache.PrefixCacheReset.Round prefixCacheEndpoints(BenchmarkRun run);

    /** Deletes the run (its {@code ttlSecondsAfterFinished} passed). */
    void delete(BenchmarkRun run);
}
