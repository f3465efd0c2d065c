package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.inferencebench.crds.v1alpha1.Phase;
import io.inferencebench.operator.RunAdmission.Admitted;
import io.inferencebench.operator.RunAdmission.Candidate;
import io.inferencebench.operator.RunAdmission.Decision;
import io.inferencebench.operator.RunAdmission.Queued;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

class RunAdmissionTest {

    private static final Instant T0 = Instant.parse("2026-12-02T12:00:00Z");

    /** Long after every run's creation: the grace for unchecked targets is over. */
    private static final Instant LATER = T0.plusSeconds(3600);

    /** A run whose target was looked at (TargetReady is there, True when {@code ready}). */
    private static Candidate run(String name, int secondsAfterT0, Phase phase, boolean ready) {
        return new Candidate(
                "uid-" + name,
                "bench",
                name,
                T0.plusSeconds(secondsAfterT0),
                phase,
                true,
                ready,
                false);
    }

    /** A run as created: no status yet. */
    private static Candidate fresh(String name, int secondsAfterT0) {
        return new Candidate(
                "uid-" + name,
                "bench",
                name,
                T0.plusSeconds(secondsAfterT0),
                Phase.PENDING,
                false,
                false,
                false);
    }

    /** The run as its own reconcile sees it: Pending, its target just found ready. */
    private static Candidate reconciling(Candidate cached) {
        return new Candidate(
                cached.uid(),
                cached.namespace(),
                cached.name(),
                cached.created(),
                Phase.PENDING,
                true,
                true,
                false);
    }

    @Test
    void noCapAdmitsEverything() {
        RunAdmission admission = new RunAdmission(0);
        List<Candidate> cache = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            cache.add(run("active-" + i, i, Phase.RUNNING, true));
        }
        Candidate late = run("late", 100, Phase.PENDING, false);
        cache.add(late);
        assertThat(admission.limited()).isFalse();
        assertThat(admission.admit(reconciling(late), cache, LATER)).isInstanceOf(Admitted.class);
    }

    @Test
    void theCapCountsInitializingRunningAndAggregatingRunsOnly() {
        RunAdmission admission = new RunAdmission(3);
        List<Candidate> cache =
                List.of(
                        run("initializing", 0, Phase.INITIALIZING, true),
                        run("running", 1, Phase.RUNNING, true),
                        run("succeeded", 2, Phase.SUCCEEDED, true),
                        run("failed", 3, Phase.FAILED, true),
                        run("cancelled", 4, Phase.CANCELLED, true),
                        run("waiting-for-target", 5, Phase.PENDING, false),
                        fresh("new", 10));
        Decision decision = admission.admit(reconciling(cache.getLast()), cache, LATER);
        assertThat(decision).isEqualTo(new Admitted(2, 3));
        assertThat(((Admitted) decision).message())
                .isEqualTo(
                        "admitted as active run 3 of at most 3 (INFERENCEBENCH_MAX_ACTIVE_RUNS=3)");

        RunAdmission full = new RunAdmission(3);
        List<Candidate> busy = new ArrayList<>(cache);
        busy.add(run("aggregating", 6, Phase.AGGREGATING, true));
        Decision queued = full.admit(reconciling(busy.get(6)), busy, LATER);
        assertThat(queued).isEqualTo(new Queued(3, 3, 1, 1));
        assertThat(((Queued) queued).message())
                .isEqualTo(
                        "queued: 3 of 3 active runs (INFERENCEBENCH_MAX_ACTIVE_RUNS=3); position 1"
                                + " of 1");
    }

    @Test
    void olderReadyRunsGoFirstAndPositionsFollowCreationOrder() {
        RunAdmission admission = new RunAdmission(1);
        Candidate active = run("active", 0, Phase.RUNNING, true);
        Candidate a = run("a", 10, Phase.PENDING, true);
        Candidate b = run("b", 20, Phase.PENDING, true);
        Candidate c = run("c", 30, Phase.PENDING, true);
        List<Candidate> cache = List.of(active, c, a, b);
        // Reconciled youngest first: each sees the older ones ahead of it.
        assertThat(admission.admit(reconciling(c), cache, LATER)).isEqualTo(new Queued(1, 1, 3, 3));
        assertThat(admission.admit(reconciling(b), cache, LATER)).isEqualTo(new Queued(1, 1, 2, 3));
        assertThat(admission.admit(reconciling(a), cache, LATER)).isEqualTo(new Queued(1, 1, 1, 3));

        // The active run finished: the oldest waiting run, and only it, gets the slot.
        List<Candidate> freed = List.of(run("active", 0, Phase.SUCCEEDED, true), c, a, b);
        assertThat(admission.admit(reconciling(c), freed, LATER)).isInstanceOf(Queued.class);
        assertThat(admission.admit(reconciling(b), freed, LATER)).isInstanceOf(Queued.class);
        assertThat(admission.admit(reconciling(a), freed, LATER)).isEqualTo(new Admitted(0, 1));
    }

    @Test
    void equalCreationTimesAreOrderedByNamespaceThenName() {
        RunAdmission admission = new RunAdmission(1);
        Candidate otherNamespace =
                new Candidate("uid-x", "alpha", "zz", T0, Phase.PENDING, true, true, false);
        Candidate first =
                new Candidate("uid-1", "bench", "run-1", T0, Phase.PENDING, true, true, false);
        Candidate second =
                new Candidate("uid-2", "bench", "run-2", T0, Phase.PENDING, true, true, false);
        List<Candidate> cache = List.of(second, first, otherNamespace);
        assertThat(admission.admit(second, cache, LATER)).isEqualTo(new Queued(0, 1, 3, 3));
        assertThat(admission.admit(first, cache, LATER)).isEqualTo(new Queued(0, 1, 2, 3));
        assertThat(admission.admit(otherNamespace, cache, LATER)).isInstanceOf(Admitted.class);
    }

    @Test
    void aJustCreatedOlderRunWhoseTargetWasNotCheckedYetIsNotOvertaken() {
        RunAdmission admission = new RunAdmission(1);
        Candidate a = fresh("a", 0);
        Candidate b = fresh("b", 1);
        Instant soon = T0.plusSeconds(2);
        // b's probe answered before a's reconcile got that far
        assertThat(admission.admit(reconciling(b), List.of(a, b), soon))
                .isEqualTo(new Queued(0, 1, 2, 2));
        assertThat(admission.admit(reconciling(a), List.of(a, b), soon))
                .isEqualTo(new Admitted(0, 1));
        // a target found not ready is not waited for
        RunAdmission other = new RunAdmission(1);
        Candidate notReady = run("not-ready", 0, Phase.PENDING, false);
        assertThat(other.admit(reconciling(b), List.of(notReady, b), soon))
                .isInstanceOf(Admitted.class);
        // nor, after the grace, one whose reconciles never got to its target
        RunAdmission third = new RunAdmission(1);
        Instant afterGrace = T0.plus(RunAdmission.UNCHECKED_GRACE).plusSeconds(1);
        assertThat(third.admit(reconciling(b), List.of(a, b), afterGrace))
                .isInstanceOf(Admitted.class);
    }

    @Test
    void anAdmittedRunCountsUntilTheCacheShowsItPastPending() {
        RunAdmission admission = new RunAdmission(1);
        Candidate a = fresh("a", 10);
        Candidate b = fresh("b", 20);
        // The cache still has both as they were created: no status yet.
        List<Candidate> stale = List.of(a, b);
        assertThat(admission.admit(reconciling(a), stale, LATER)).isEqualTo(new Admitted(0, 1));
        assertThat(admission.admit(reconciling(b), stale, LATER)).isEqualTo(new Queued(1, 1, 1, 1));
        // Reconciled again before its patch was seen (or after the patch failed): still admitted.
        assertThat(admission.admit(reconciling(a), stale, LATER)).isEqualTo(new Admitted(0, 1));

        // The cache shows a Running: counted from the cache, once.
        List<Candidate> seen = List.of(run("a", 10, Phase.RUNNING, true), b);
        assertThat(admission.admit(reconciling(b), seen, LATER)).isEqualTo(new Queued(1, 1, 1, 1));
        // a finished: b goes.
        List<Candidate> done = List.of(run("a", 10, Phase.SUCCEEDED, true), b);
        assertThat(admission.admit(reconciling(b), done, LATER)).isEqualTo(new Admitted(0, 1));
    }

    @Test
    void anAdmittedRunThatWasDeletedBeforeTheCacheShowedItGivesItsSlotBack() {
        RunAdmission admission = new RunAdmission(1);
        Candidate a = run("a", 10, Phase.PENDING, false);
        Candidate b = run("b", 20, Phase.PENDING, false);
        assertThat(admission.admit(reconciling(a), List.of(a, b), LATER))
                .isInstanceOf(Admitted.class);
        assertThat(admission.admit(reconciling(b), List.of(a, b), LATER))
                .isInstanceOf(Queued.class);
        assertThat(admission.admit(reconciling(b), List.of(b), LATER)).isInstanceOf(Admitted.class);
    }

    @Test
    void aReleasedAdmissionFreesTheSlot() {
        RunAdmission admission = new RunAdmission(1);
        Candidate a = run("a", 10, Phase.PENDING, false);
        Candidate b = run("b", 20, Phase.PENDING, false);
        assertThat(admission.admit(reconciling(a), List.of(a, b), LATER))
                .isInstanceOf(Admitted.class);
        admission.release(a.uid());
        // a is Pending, not ready in the cache, and not queued here: b is first now
        assertThat(admission.admit(reconciling(b), List.of(a, b), LATER))
                .isInstanceOf(Admitted.class);
    }

    @Test
    void aQueuedRunKeepsItsPlaceBeforeTheCacheShowsItsTargetReady() {
        RunAdmission admission = new RunAdmission(1);
        Candidate active = run("active", 0, Phase.RUNNING, true);
        Candidate a = run("a", 10, Phase.PENDING, false);
        Candidate b = run("b", 20, Phase.PENDING, false);
        assertThat(admission.admit(reconciling(a), List.of(active, a, b), LATER))
                .isEqualTo(new Queued(1, 1, 1, 1));
        // The slot frees before a's Queued status reached the cache: b must not overtake a.
        List<Candidate> freed = List.of(run("active", 0, Phase.SUCCEEDED, true), a, b);
        assertThat(admission.admit(reconciling(b), freed, LATER)).isEqualTo(new Queued(0, 1, 2, 2));
        assertThat(admission.admit(reconciling(a), freed, LATER)).isEqualTo(new Admitted(0, 1));
    }

    @Test
    void aRunThatLeftTheQueueIsNoLongerAhead() {
        RunAdmission admission = new RunAdmission(1);
        Candidate active = run("active", 0, Phase.RUNNING, true);
        Candidate a = run("a", 10, Phase.PENDING, false);
        Candidate b = run("b", 20, Phase.PENDING, false);
        admission.admit(reconciling(a), List.of(active, a, b), LATER);
        admission.leave(a.uid());
        List<Candidate> freed = List.of(run("active", 0, Phase.SUCCEEDED, true), a, b);
        assertThat(admission.admit(reconciling(b), freed, LATER)).isInstanceOf(Admitted.class);
    }

    @Test
    void runsBeingDeletedNeitherCountNorWait() {
        RunAdmission admission = new RunAdmission(1);
        Candidate going =
                new Candidate("uid-g", "bench", "going", T0, Phase.RUNNING, true, true, true);
        Candidate goingQueued =
                new Candidate("uid-q", "bench", "queued", T0, Phase.PENDING, true, true, true);
        Candidate next = run("next", 10, Phase.PENDING, false);
        assertThat(admission.admit(reconciling(next), List.of(going, goingQueued, next), LATER))
                .isEqualTo(new Admitted(0, 1));
    }

    @Test
    void concurrentReconcilesNeverAdmitMoreThanTheCap() throws Exception {
        int cap = 3;
        RunAdmission admission = new RunAdmission(cap);
        List<Candidate> cache = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            cache.add(fresh("r" + i, i));
        }
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Decision>> decisions = new ArrayList<>();
            for (Candidate c : cache) {
                decisions.add(
                        pool.submit(
                                () -> {
                                    start.await();
                                    // the cache lags: every run still shows no status
                                    return admission.admit(reconciling(c), cache, LATER);
                                }));
            }
            start.countDown();
            long admitted = 0;
            for (Future<Decision> d : decisions) {
                if (d.get() instanceof Admitted) {
                    admitted++;
                }
            }
            assertThat(admitted).isEqualTo(cap);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void badValuesAreRefusedNamingTheVariableAndWhatItAccepts() {
        assertThat(RunAdmission.problem("0")).isNull();
        assertThat(RunAdmission.problem("12")).isNull();
        assertThat(RunAdmission.problem(" 4 ")).isNull();
        for (String bad : List.of("-1", "two", "1.5", "", "99999999999")) {
            assertThat(RunAdmission.problem(bad))
                    .as(bad)
                    .startsWith("INFERENCEBENCH_MAX_ACTIVE_RUNS (inferencebench.max-active-runs)")
                    .contains("must be 0 (no limit) or a positive whole number")
                    .endsWith("got '" + bad + "'");
        }
        assertThatThrownBy(() -> new RunAdmission(-2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("INFERENCEBENCH_MAX_ACTIVE_RUNS");
    }

    @Test
    void unsetMeansNoLimit() {
        System.clearProperty(RunAdmission.PROPERTY);
        assertThat(RunAdmission.fromConfig().limited()).isFalse();
    }

    @Test
    void aCandidateIsReadFromTheRunsMetadataAndStatus() {
        var run = TestRuns.sweep();
        Candidate fresh = Candidate.of(run);
        assertThat(fresh)
                .isEqualTo(
                        new Candidate(
                                "uid-1",
                                "bench",
                                "sweep",
                                Instant.parse("2026-11-29T12:00:00Z"),
                                Phase.PENDING,
                                false,
                                false,
                                false));
        StatusAggregator status = new StatusAggregator(null, 1, T0);
        status.condition(
                io.inferencebench.crds.v1alpha1.ConditionTypes.TARGET_READY, true, "Ready", "ok");
        status.phase(Phase.PENDING, "queued");
        run.setStatus(status.build());
        assertThat(Candidate.of(run).targetReady()).isTrue();
    }
}
