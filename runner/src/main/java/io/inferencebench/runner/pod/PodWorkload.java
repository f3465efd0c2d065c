package io.inferencebench.runner.pod;

import io.inferencebench.crds.v1alpha1.DatasetSource;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShare;
import io.inferencebench.crds.workorder.StageShares;
import io.inferencebench.crds.workorder.TlsOrder;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.http.TlsOptions;
import io.inferencebench.runner.plan.DatasetPlan;
import io.inferencebench.runner.plan.PlanResolver;
import io.inferencebench.runner.plan.PlanTarget;
import io.inferencebench.runner.plan.RunPlan;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a work order into what this pod executes ({@link #plan}): its share of every stage of the
 * plan both roads resolve, and the file of its dataset. Problems in the work order become a {@link
 * PodFailure} naming the field.
 */
final class PodWorkload {

    private PodWorkload() {}

    /**
     * This pod's stage plans, in order; an entry is {@code null} when the pod's share of that stage
     * is empty (fewer prompts or less concurrency than pods), and the pod then reports an empty
     * result for it. Empty for a capacity search, whose stages are decided at run time (an empty
     * {@code stages} list in the work order): the pod builds each one with {@link #probe} when the
     * operator publishes its rate.
     */
    static List<StagePlan> plans(RunnerWorkOrder order, int index) {
        LoadSpec load = order.load() == null ? new LoadSpec() : order.load();
        List<StageShare> shares = order.stages();
        if (searched(order)) {
            if (load.getNumPrompts() == null && load.getDuration() == null) {
                throw new PodFailure(
                        "work order: stages is empty (a capacity search) but load has neither"
                                + " numPrompts nor duration (the size of every probe)");
            }
            return List.of();
        }
        List<StagePlan> plans = new ArrayList<>();
        for (StageShare share : shares) {
            plans.add(
                    stagePlan(
                            order,
                            index,
                            share,
                            "work order: stages[" + (share.stage() - 1) + "]"));
        }
        return plans;
    }

    /** Whether the work order is a capacity search: no stages, each decided at run time. */
    static boolean searched(RunnerWorkOrder order) {
        return order.stages() == null || order.stages().isEmpty();
    }

    /**
     * Stage {@code stage} of a capacity search as the whole run sees it, with this pod's share: the
     * probe size of the work order's load and the rate the operator published.
     *
     * @param rate req/s of all runner pods together (control key {@code stage-<n>-rate})
     */
    static StageShare probeShare(RunnerWorkOrder order, int stage, double rate) {
        return probeShare(order, stage, rate, 1);
    }

    /**
     * {@link #probeShare(RunnerWorkOrder, int, double)} of a probe {@code size} times the work
     * order's probe size (control key {@code stage-<n>-size}): a probe too short to judge runs
     * again larger.
     */
    static StageShare probeShare(RunnerWorkOrder order, int stage, double rate, int size) {
        LoadSpec load = order.load() == null ? new LoadSpec() : order.load();
        if (size < 1) {
            throw new PodFailure(
                    "control "
                            + RunnerWorkOrder.stageSizeKey(stage)
                            + ": must be a whole number >= 1, got "
                            + size);
        }
        StageSpec sized = load.probeStages(List.of(rate), List.of(size)).get(0);
        if (!(rate >= 0) || Double.isInfinite(rate)) {
            throw new PodFailure(
                    "control "
                            + RunnerWorkOrder.stageRateKey(stage)
                            + ": must be a finite rate >= 0, got "
                            + rate);
        }
        int pods = order.parallelism();
        return new StageShare(
                stage,
                rate,
                null,
                sized.getNumPrompts(),
                sized.getDuration(),
                rate / pods,
                null,
                sized.getNumPrompts() == null
                        ? null
                        : StageShares.split(sized.getNumPrompts(), pods));
    }

    /**
     * This pod's plan of a capacity search's stage ({@code null} when its share is empty: no
     * prompts or no rate), like a fixed stage's.
     */
    static StagePlan probe(RunnerWorkOrder order, int index, StageShare share) {
        if (share.ratePerPod() != null && share.ratePerPod() == 0) {
            return null;
        }
        return stagePlan(
                order, index, share, "control " + RunnerWorkOrder.stageRateKey(share.stage()));
    }

    private static StagePlan stagePlan(
            RunnerWorkOrder order, int index, StageShare share, String field) {
        LoadSpec load = order.load() == null ? new LoadSpec() : order.load();
        int i = share.stage() - 1;
        Duration duration = null;
        if (share.duration() != null) {
            try {
                duration = Durations.parse(share.duration());
            } catch (IllegalArgumentException e) {
                throw new PodFailure(field + ".duration: " + e.getMessage());
            }
        }
        long prompts = 0;
        if (share.numPrompts() != null) {
            prompts = pick(share.promptsPerPod(), index, field + ".promptsPerPod");
            if (prompts == 0) {
                return null;
            }
        }
        Integer concurrency = null;
        if (share.concurrency() != null) {
            concurrency = pick(share.concurrencyPerPod(), index, field + ".concurrencyPerPod");
            if (concurrency == 0) {
                return null;
            }
        }
        if (replaysTrace(order)) {
            return replayStage(order, index, i, concurrency, prompts, duration, load);
        }
        StageSpec spec = i < load.resolvedStages().size() ? load.resolvedStages().get(i) : null;
        io.inferencebench.runner.engine.RampUp ramp =
                spec == null || share.concurrency() != null
                        ? null
                        : PlanResolver.rampOf(spec, order.parallelism());
        try {
            if (ramp != null) {
                return PlanResolver.ramped(
                        load,
                        i,
                        ramp,
                        prompts,
                        duration,
                        podCap(load.getMaxConcurrency(), order, index),
                        field);
            }
            return PlanResolver.stage(
                    load,
                    i,
                    concurrency == null ? share.ratePerPod() : null,
                    concurrency,
                    prompts,
                    duration,
                    podCap(load.getMaxConcurrency(), order, index),
                    field);
        } catch (IllegalArgumentException e) {
            throw new PodFailure(e.getMessage());
        }
    }

    /** Whether the work order's dataset is a trace, whose requests the stages send. */
    static boolean replaysTrace(RunnerWorkOrder order) {
        return order.workload() != null
                && order.workload().getDataset() != null
                && order.workload().getDataset().getType() == DatasetType.TRACE;
    }

    /**
     * The most of the trace's requests the whole run sends in a stage: the largest stage's
     * numPrompts, or {@code 0} when a stage has none (the whole trace).
     */
    static long traceCap(RunnerWorkOrder order) {
        long cap = 0;
        for (StageShare share : order.stages()) {
            if (share.numPrompts() == null) {
                return 0;
            }
            cap = Math.max(cap, share.numPrompts());
        }
        return cap;
    }

    /**
     * This pod's share of a stage of a trace (bound to its requests once the trace is read): a
     * replay at the trace's offsets, or a closed loop over its requests in order.
     */
    private static StagePlan replayStage(
            RunnerWorkOrder order,
            int index,
            int stage,
            Integer concurrency,
            long prompts,
            Duration duration,
            LoadSpec load) {
        double timeScale = order.workload().getDataset().resolvedTrace().resolvedTimeScale();
        try {
            return StagePlan.replay(
                    stage,
                    concurrency,
                    prompts,
                    duration,
                    podCap(load.getMaxConcurrency(), order, index),
                    timeScale);
        } catch (IllegalArgumentException e) {
            throw new PodFailure("work order: stages[" + stage + "]: " + e.getMessage());
        }
    }

    /** This pod's share of the run's cap on requests in flight (at least 1), or {@code null}. */
    private static Integer podCap(Integer cap, RunnerWorkOrder order, int index) {
        return cap == null
                ? null
                : Math.max(1, StageShares.split(cap, order.parallelism()).get(index));
    }

    /**
     * Prompts this pod prepares: {@link RunPlan#datasetSize()} for fixed stages; for a capacity
     * search its share of every probe's numPrompts (the same each probe), or what a duration stage
     * gets ({@link RunPlan#DURATION_STAGE_PROMPTS}, reused in turn as for any duration stage).
     */
    static int datasetSize(RunnerWorkOrder order, int index, RunPlan plan) {
        if (!searched(order)) {
            return plan.datasetSize();
        }
        LoadSpec load = order.load();
        long size =
                load.getNumPrompts() != null
                        ? StageShares.split(load.getNumPrompts(), order.parallelism()).get(index)
                        : RunPlan.DURATION_STAGE_PROMPTS;
        return (int) Math.max(1, Math.min(size, RunPlan.MAX_PROMPTS));
    }

    private static int pick(List<Integer> perPod, int index, String field) {
        if (perPod == null || perPod.size() <= index) {
            throw new PodFailure(field + ": no share for pod index " + index);
        }
        return perPod.get(index);
    }

    /**
     * What this pod runs: the work order's sections through {@link PlanResolver} (the command
     * line's road too), with this pod's share of the stages, the concurrency cap, the warm-up and
     * its own seed.
     */
    static RunPlan plan(RunnerWorkOrder order, int index) {
        RunPlan whole;
        try {
            whole =
                    PlanResolver.resolve(
                            target(order),
                            order.workload(),
                            order.load(),
                            order.slo(),
                            PlanResolver.Road.pod(),
                            searched(order),
                            // the command line's --ramp-up-* flags; a spec's ramps are its stages'
                            null);
        } catch (IllegalArgumentException e) {
            throw new PodFailure(e.getMessage());
        }
        Integer cap = podCap(whole.maxConcurrency(), order, index);
        int warmups = StageShares.split(whole.warmupRequests(), order.parallelism()).get(index);
        // Pod 0 keeps the run's seed, so one pod sends what the command line sends.
        long seed = whole.dataset().seed() + 1_000_003L * index;
        return whole.share(plans(order, index), cap, warmups, seed);
    }

    /** The target of the work order, the CA as the file the operator mounted. */
    static PlanTarget target(RunnerWorkOrder order) {
        TlsOrder tls = order.tls();
        return new PlanTarget(
                order.backend(),
                order.api(),
                order.path(),
                order.model(),
                order.headers(),
                tls == null
                        ? TlsOptions.VERIFY
                        : new TlsOptions(
                                tls.caFile() == null ? null : Path.of(tls.caFile()),
                                tls.insecureSkipVerify(),
                                tls.serverName()));
    }

    /**
     * The file of a sharegpt or jsonl dataset: the one the Job mounted, else the inline text or the
     * download of the source's URL.
     */
    static Path datasetFile(DatasetPlan dataset, Path mounted, Path scratch) throws IOException {
        Path file = mounted != null ? mounted : source(dataset.source(), dataset.type(), scratch);
        if (!Files.isRegularFile(file)) {
            throw new PodFailure("dataset file " + file + " does not exist");
        }
        return file;
    }

    private static Path source(DatasetSource source, DatasetType type, Path scratch)
            throws IOException {
        if (source == null) {
            throw new PodFailure(
                    "work order: workload.dataset.source is required for type " + type.wireName());
        }
        if (source.getInline() != null) {
            Path file = scratch.resolve("dataset-inline");
            Files.writeString(file, source.getInline(), StandardCharsets.UTF_8);
            return file;
        }
        if (source.getUrl() != null) {
            URI uri = URI.create(source.getUrl());
            if ("file".equals(uri.getScheme())) {
                return Path.of(uri);
            }
            return download(uri, scratch.resolve("dataset-download"));
        }
        throw new PodFailure(
                "workload.dataset.source: a ConfigMap or PVC dataset must be mounted by the Job"
                        + " (environment variable INFERENCEBENCH_DATASET_FILE is not set)");
    }

    private static Path download(URI uri, Path target) throws IOException {
        try (HttpClient http =
                HttpClient.newBuilder()
                        .followRedirects(HttpClient.Redirect.NORMAL)
                        .connectTimeout(Duration.ofSeconds(30))
                        .build()) {
            HttpResponse<InputStream> response =
                    http.send(
                            HttpRequest.newBuilder(uri).timeout(Duration.ofMinutes(10)).build(),
                            HttpResponse.BodyHandlers.ofInputStream());
            if (response.statusCode() != 200) {
                response.body().close();
                throw new PodFailure(
                        "workload.dataset.source.url: HTTP "
                                + response.statusCode()
                                + " for "
                                + uri);
            }
            try (InputStream body = response.body()) {
                Files.copy(body, target, StandardCopyOption.REPLACE_EXISTING);
            }
            return target;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("download of " + uri + " interrupted", e);
        }
    }
}
