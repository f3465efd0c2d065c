package io.inferencebench.operator.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.operator.EventRecorder;
import org.junit.jupiter.api.Test;

/** One Event per new phase: Warning for Failed, Normal otherwise, none without a change. */
class PhaseEventsTest {

    private final FakeCluster cluster = new FakeCluster();
    private final PhaseEvents events = new PhaseEvents(cluster);

    private static BenchmarkRunStatus status(Phase phase, String message) {
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(phase);
        status.setMessage(message);
        return status;
    }

    @Test
    void eachNewPhaseIsAnEventNamedAfterIt() {
        var run = Turns.sweep().theRun();
        events.announce(run, null, status(Phase.PENDING, null));
        events.announce(run, Phase.PENDING, status(Phase.INITIALIZING, "starting runner pods"));
        events.announce(run, Phase.RUNNING, status(Phase.FAILED, "runner pod 0 failed: x"));

        assertThat(cluster.events)
                .containsExactly(
                        new FakeCluster.Event(EventRecorder.NORMAL, "Pending", "Pending"),
                        new FakeCluster.Event(
                                EventRecorder.NORMAL, "Initializing", "starting runner pods"),
                        new FakeCluster.Event(
                                EventRecorder.WARNING, "Failed", "runner pod 0 failed: x"));
    }

    @Test
    void anUnchangedPhaseIsNoEvent() {
        events.announce(
                Turns.sweep().theRun(), Phase.RUNNING, status(Phase.RUNNING, "stage 2 starts"));
        assertThat(cluster.events).isEmpty();
    }
}
