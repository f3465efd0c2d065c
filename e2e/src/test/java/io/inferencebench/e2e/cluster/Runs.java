package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.workorder.PartReport;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;

/**
 * A BenchmarkRun as the cluster tests follow it: created from YAML, read, its phase, waiting for a
 * phase, and what its runner pods wrote in their part ConfigMaps.
 */
final class Runs {

    private static final ObjectMapper JSON = new ObjectMapper();

    private Runs() {}

    /** Creates the run a BenchmarkRun YAML document describes in namespace {@code ns}. */
    static void create(KubernetesClient client, String ns, String yaml) {
        client.resources(BenchmarkRun.class)
                .inNamespace(ns)
                .load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)))
                .create();
    }

    /** The run as the API server has it now, or {@code null}. */
    static BenchmarkRun get(KubernetesClient client, String ns, String name) {
        return client.resources(BenchmarkRun.class).inNamespace(ns).withName(name).get();
    }

    /** The run's phase, or {@code null} while it is missing or has no status. */
    static Phase phase(KubernetesClient client, String ns, String name) {
        BenchmarkRun run = get(client, ns, name);
        return run == null || run.getStatus() == null ? null : run.getStatus().getPhase();
    }

    /** Whether a phase (maybe {@code null}: none yet) is one a run ends in. */
    static boolean ended(Phase phase) {
        return phase != null && phase.isTerminal();
    }

    /**
     * Waits until the run is in one of the {@code wanted} phases or has ended, polling every 250 ms
     * (a failed read is tried again: the control plane may be restarting under the test), and
     * asserts that it is in a wanted one, naming its message otherwise.
     *
     * @return the run as read then
     */
    static BenchmarkRun awaitPhase(
            KubernetesClient client, String ns, String name, Duration atMost, Phase... wanted) {
        List<Phase> phases = List.of(wanted);
        try {
            await().atMost(atMost)
                    .pollInterval(Duration.ofMillis(250))
                    .ignoreExceptions()
                    .until(
                            () -> {
                                Phase phase = phase(client, ns, name);
                                return phase != null && (phases.contains(phase) || ended(phase));
                            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError(
                    "run "
                            + name
                            + " is not "
                            + phases
                            + " after "
                            + atMost
                            + ": "
                            + describe(get(client, ns, name))
                            + "\noperator log (last lines):\n"
                            + operatorLog(client),
                    e);
        }
        BenchmarkRun run = get(client, ns, name);
        assertThat(run.getStatus().getPhase())
                .as("phase of %s (message: %s)", name, run.getStatus().getMessage())
                .isIn(phases);
        return run;
    }

    /** A run's phase, message and conditions, for a failure message. */
    static String describe(BenchmarkRun run) {
        if (run == null) {
            return "missing";
        }
        if (run.getStatus() == null) {
            return "no status";
        }
        StringBuilder b =
                new StringBuilder()
                        .append(run.getStatus().getPhase())
                        .append(" (")
                        .append(run.getStatus().getMessage())
                        .append(')');
        if (run.getStatus().getConditions() != null) {
            run.getStatus()
                    .getConditions()
                    .forEach(
                            c ->
                                    b.append("; ")
                                            .append(c.getType())
                                            .append('=')
                                            .append(c.getStatus())
                                            .append(' ')
                                            .append(c.getReason())
                                            .append(": ")
                                            .append(c.getMessage()));
        }
        return b.toString();
    }

    /** The last 60 lines the operator logged, or why they could not be read. */
    static String operatorLog(KubernetesClient client) {
        try {
            return client.pods().inNamespace(ChartCluster.SYSTEM).list().getItems().stream()
                    .map(
                            pod ->
                                    client.pods()
                                            .inNamespace(ChartCluster.SYSTEM)
                                            .withName(pod.getMetadata().getName())
                                            .tailingLines(60)
                                            .getLog())
                    .collect(java.util.stream.Collectors.joining("\n"));
        } catch (RuntimeException e) {
            return "(not read: " + e.getMessage() + ")";
        }
    }

    /**
     * Waits, polling every 200 ms, until the run (read as it is then) satisfies {@code reached} or
     * has ended; the caller asserts which.
     */
    static void awaitOrEnd(
            KubernetesClient client,
            String ns,
            String name,
            Duration atMost,
            Predicate<BenchmarkRun> reached) {
        await().atMost(atMost)
                .pollInterval(Duration.ofMillis(200))
                .until(
                        () -> {
                            BenchmarkRun run = get(client, ns, name);
                            return (run != null && reached.test(run))
                                    || ended(phase(client, ns, name));
                        });
    }

    /**
     * Waits, polling every second, until the run has ended, checking {@code serverAlive} at each
     * poll (an assertion it throws fails the wait at once: a server that died ends the test there,
     * not at the timeout), and asserts that the run succeeded, naming its message otherwise.
     *
     * @return the run as read then
     */
    static BenchmarkRun awaitSucceeded(
            KubernetesClient client,
            String ns,
            String name,
            Duration atMost,
            Runnable serverAlive) {
        await().atMost(atMost)
                .pollInterval(Duration.ofSeconds(1))
                .until(
                        () -> {
                            serverAlive.run();
                            return ended(phase(client, ns, name));
                        });
        BenchmarkRun done = get(client, ns, name);
        assertThat(done.getStatus().getPhase())
                .as("phase (message: %s)", done.getStatus().getMessage())
                .isEqualTo(Phase.SUCCEEDED);
        return done;
    }

    /**
     * The sum of a numeric {@code field} of stage {@code stage}'s result over the part ConfigMaps
     * of the run's {@code parallelism} runner pods, asserting that each pod wrote that result.
     */
    static long sumOfParts(
            KubernetesClient client,
            String ns,
            String run,
            int parallelism,
            int stage,
            String field)
            throws IOException {
        long sum = 0;
        for (int i = 0; i < parallelism; i++) {
            ConfigMap part =
                    client.configMaps().inNamespace(ns).withName(ResourceNames.part(run, i)).get();
            assertThat(part).as("part ConfigMap %d of %s", i, run).isNotNull();
            String json = part.getData().get(PartReport.stageResultKey(stage));
            assertThat(json).as("stage %d result in part %d", stage, i).isNotNull();
            sum += JSON.readTree(json).get(field).asLong();
        }
        return sum;
    }
}
