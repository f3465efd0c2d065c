package io.inferencebench.e2e.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.Phase;
import java.time.Duration;
import java.util.List;

/** A BenchmarkRun as the cluster tests follow it: read, its phase, waiting for a phase. */
final class Runs {

    private Runs() {}

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
        await().atMost(atMost)
                .pollInterval(Duration.ofMillis(250))
                .ignoreExceptions()
                .until(
                        () -> {
                            Phase phase = phase(client, ns, name);
                            return phase != null && (phases.contains(phase) || ended(phase));
                        });
        BenchmarkRun run = get(client, ns, name);
        assertThat(run.getStatus().getPhase())
                .as("phase of %s (message: %s)", name, run.getStatus().getMessage())
                .isIn(phases);
        return run;
    }
}
