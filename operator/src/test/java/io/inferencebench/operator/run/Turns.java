package io.inferencebench.operator.run;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.operator.Labels;
import io.inferencebench.operator.Parts;
import io.inferencebench.operator.StatusAggregator;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Builds one reconcile's inputs for a step test: a run from YAML, the status it starts from, the
 * runner parts and Job, the cached runs, all at a fixed instant.
 */
final class Turns {

    /** The instant every turn happens at unless told otherwise. */
    static final Instant NOW = Instant.parse("2026-12-04T10:00:00Z");

    /** A clock stopped at {@link #NOW}: the steps that read the clock again see the same. */
    static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

    /** The run's uid; part ConfigMaps carry it. */
    static final String UID = "uid-1";

    private final BenchmarkRun run;
    private BenchmarkRunStatus status;
    private Instant now = NOW;
    private final List<ConfigMap> parts = new ArrayList<>();
    private Job job;
    private final List<BenchmarkRun> cached = new ArrayList<>();

    private Turns(BenchmarkRun run) {
        this.run = run;
    }

    /**
     * A run named {@code sweep} in namespace {@code bench}, created a minute before {@link #NOW},
     * whose spec is {@code specBody}.
     */
    static Turns run(String specBody) {
        StringBuilder yaml =
                new StringBuilder(
                        "apiVersion: inferencebench.io/v1alpha1\n"
                                + "kind: BenchmarkRun\n"
                                + "metadata: {name: sweep, namespace: bench}\n"
                                + "spec:\n");
        specBody.lines().forEach(l -> yaml.append("  ").append(l).append('\n'));
        BenchmarkRun run = Serialization.unmarshal(yaml.toString(), BenchmarkRun.class);
        run.getMetadata().setUid(UID);
        run.getMetadata().setGeneration(1L);
        run.getMetadata().setCreationTimestamp(StatusAggregator.format(NOW.minusSeconds(60)));
        return new Turns(run);
    }

    /** A two-stage sweep (5 and 10 req/s, 100 prompts each) against Service vllm:8000. */
    static Turns sweep() {
        return run(
                """
                target: {service: {name: vllm, port: 8000}, model: google/gemma-7b}
                load: {requestRates: [5, 10], numPrompts: 100, cooldown: 0s}
                runner: {parallelism: 2}
                """);
    }

    BenchmarkRun theRun() {
        return run;
    }

    /** The status the turn starts from (as the previous reconcile wrote it). */
    Turns status(BenchmarkRunStatus status) {
        this.status = status;
        return this;
    }

    Turns createdAt(Instant created) {
        run.getMetadata().setCreationTimestamp(StatusAggregator.format(created));
        return this;
    }

    Turns at(Instant now) {
        this.now = now;
        return this;
    }

    /** Part {@code index} as a runner pod writes it. */
    Turns part(int index, Map<String, String> data) {
        parts.add(
                new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("sweep-part-" + index)
                        .withNamespace("bench")
                        .addToLabels(Labels.PART_INDEX, Integer.toString(index))
                        .endMetadata()
                        .withData(data)
                        .build());
        return this;
    }

    Turns job(Job job) {
        this.job = job;
        return this;
    }

    /** Other runs in the operator's cache (the queue counts them). */
    Turns cached(BenchmarkRun other) {
        cached.add(other);
        return this;
    }

    RunTurn build() {
        List<BenchmarkRun> all = new ArrayList<>(cached);
        all.add(run);
        run.setStatus(status);
        return new RunTurn(
                run,
                new StatusAggregator(status, run.getMetadata().getGeneration(), now),
                now,
                () -> Parts.from(parts, UID),
                () -> Optional.ofNullable(job),
                all::stream);
    }

    /** The status a turn decided, as the reconciler would patch it. */
    static BenchmarkRunStatus decided(RunTurn turn) {
        return turn.status().build();
    }

    /** A condition of a decided status. */
    static Condition condition(BenchmarkRunStatus status, String type) {
        return status.condition(type)
                .orElseThrow(() -> new AssertionError("no condition " + type + " in " + status));
    }

    /** A status as the previous reconcile wrote it: {@code turn} decided and built. */
    static BenchmarkRunStatus after(RunTurn turn) {
        BenchmarkRunStatus built = turn.status().build();
        return Serialization.unmarshal(Serialization.asJson(built), BenchmarkRunStatus.class);
    }
}
