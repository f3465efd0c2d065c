package io.inferencebench.runner.pod;

import io.inferencebench.crds.v1alpha1.DatasetSpec;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.DistributionType;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.SloSpec;
import io.inferencebench.crds.v1alpha1.TokenDistribution;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShare;
import io.inferencebench.crds.workorder.StageShares;
import io.inferencebench.runner.backend.Protocol;
import io.inferencebench.runner.dataset.FileDatasets;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.dataset.LengthDistribution;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.RandomDataset;
import io.inferencebench.runner.engine.ArrivalKind;
import io.inferencebench.runner.engine.Slo;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.plan.WireProtocol;
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
import java.util.Locale;

/**
 * Turns a work order into what this pod executes: its share of every stage, its prompts, the wire
 * protocol and the SLO. Problems in the work order become a {@link PodFailure} naming the field.
 */
final class PodWorkload {

    /** Prompts generated per pod when a stage is bounded by duration only. */
    static final int DURATION_STAGE_PROMPTS = 1000;

    /** Upper bound of prompts held in memory. */
    static final int MAX_PROMPTS = 200_000;

    private PodWorkload() {}

    /**
     * This pod's stage plans, in order; an entry is {@code null} when the pod's share of that stage
     * is empty (fewer prompts or less concurrency than pods), and the pod then reports an empty
     * result for it.
     */
    static List<StagePlan> plans(RunnerWorkOrder order, int index) {
        LoadSpec load = order.load() == null ? new LoadSpec() : order.load();
        List<StageShare> shares = order.stages();
        if (shares == null || shares.isEmpty()) {
            throw new PodFailure("work order: stages is empty");
        }
        ArrivalKind arrival =
                load.getArrival() == null
                        ? ArrivalKind.POISSON
                        : ArrivalKind.parse(load.getArrival().wireName());
        double burstiness = load.getBurstiness() == null ? 1.0 : load.getBurstiness();
        Integer cap =
                load.getMaxConcurrency() == null
                        ? null
                        : Math.max(
                                1,
                                StageShares.split(load.getMaxConcurrency(), order.parallelism())
                                        .get(index));
        List<StagePlan> plans = new ArrayList<>();
        for (StageShare share : shares) {
            int i = share.stage() - 1;
            String field = "work order: stages[" + i + "]";
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
                    plans.add(null);
                    continue;
                }
            }
            try {
                if (share.concurrency() != null) {
                    int c = pick(share.concurrencyPerPod(), index, field + ".concurrencyPerPod");
                    if (c == 0) {
                        plans.add(null);
                        continue;
                    }
                    plans.add(
                            new StagePlan(
                                    i,
                                    Double.POSITIVE_INFINITY,
                                    c,
                                    prompts,
                                    duration,
                                    null,
                                    arrival,
                                    burstiness));
                } else {
                    double rate =
                            share.ratePerPod() != null
                                    ? share.ratePerPod()
                                    : Double.POSITIVE_INFINITY;
                    plans.add(
                            new StagePlan(
                                    i, rate, null, prompts, duration, cap, arrival, burstiness));
                }
            } catch (IllegalArgumentException e) {
                throw new PodFailure(field + ": " + e.getMessage());
            }
        }
        return plans;
    }

    private static int pick(List<Integer> perPod, int index, String field) {
        if (perPod == null || perPod.size() <= index) {
            throw new PodFailure(field + ": no share for pod index " + index);
        }
        return perPod.get(index);
    }

    /** Seed of this pod: the run's seed for pod 0, distinct streams for the others. */
    static long seed(RunnerWorkOrder order, int index) {
        DatasetSpec dataset = dataset(order);
        long base = dataset.getSeed() == null ? 0L : dataset.getSeed();
        return base + 1_000_003L * index;
    }

    static DatasetSpec dataset(RunnerWorkOrder order) {
        WorkloadSpec workload = order.workload();
        return workload == null || workload.getDataset() == null
                ? new DatasetSpec()
                : workload.getDataset();
    }

    static int datasetSize(List<StagePlan> plans) {
        long max = 1;
        for (StagePlan p : plans) {
            if (p != null) {
                max = Math.max(max, p.numPrompts() > 0 ? p.numPrompts() : DURATION_STAGE_PROMPTS);
            }
        }
        return (int) Math.min(max, MAX_PROMPTS);
    }

    /** The same rules as the command line's --backend/--api/--endpoint ({@link WireProtocol}). */
    static WireProtocol protocol(RunnerWorkOrder order, boolean stream) {
        try {
            return WireProtocol.resolve(
                    order.backend(),
                    order.api(),
                    order.path(),
                    stream,
                    new WireProtocol.Fields(
                            "work order: backend", "work order: api", "work order: path"));
        } catch (IllegalArgumentException e) {
            throw new PodFailure(e.getMessage());
        }
    }

    static boolean tokenIdPrompts(
            RunnerWorkOrder order, Protocol protocol, boolean random, HfTokenizer tokenizer) {
        return random
                && tokenizer == null
                && protocol.acceptsTokenIds()
                && ("vllm".equals(order.backend()) || "sglang".equals(order.backend()));
    }

    static Slo slo(SloSpec spec) {
        if (spec == null) {
            return Slo.NONE;
        }
        return new Slo(
                millis("slo.ttft", spec.getTtft()),
                millis("slo.tpot", spec.getTpot()),
                millis("slo.e2eLatency", spec.getE2eLatency()),
                spec.getMinAttainment() == null ? 0.95 : spec.getMinAttainment());
    }

    private static Double millis(String field, String text) {
        if (text == null) {
            return null;
        }
        try {
            return Durations.parse(text).toNanos() / 1e6;
        } catch (IllegalArgumentException e) {
            throw new PodFailure("work order: " + field + ": '" + text + "' is not a duration");
        }
    }

    /**
     * Loads this pod's prompts.
     *
     * @param datasetFile the mounted dataset file, or {@code null}
     * @param scratch writable directory for inline or downloaded datasets
     */
    static List<Prompt> prompts(
            RunnerWorkOrder order,
            int count,
            boolean tokenIds,
            HfTokenizer tokenizer,
            long seed,
            Path datasetFile,
            Path scratch)
            throws IOException {
        DatasetSpec dataset = dataset(order);
        DatasetType type = dataset.getType() == null ? DatasetType.RANDOM : dataset.getType();
        if (type == DatasetType.RANDOM) {
            return RandomDataset.generate(
                    count,
                    lengths("inputTokens", dataset.resolvedInputTokens()),
                    lengths("outputTokens", dataset.resolvedOutputTokens()),
                    tokenIds,
                    tokenizer,
                    seed);
        }
        Path file = datasetFile != null ? datasetFile : source(dataset, scratch);
        if (!Files.isRegularFile(file)) {
            throw new PodFailure("dataset file " + file + " does not exist");
        }
        Integer override =
                dataset.getOutputTokens() != null ? dataset.getOutputTokens().getMean() : null;
        if (type == DatasetType.SHAREGPT) {
            FileDatasets.Filters defaults = FileDatasets.Filters.shareGptDefaults(override);
            Integer maxIn = dataset.getMaxInputTokens();
            Integer maxOut = dataset.getMaxOutputTokens();
            FileDatasets.Filters filters =
                    new FileDatasets.Filters(
                            dataset.getMinInputTokens() != null
                                    ? dataset.getMinInputTokens()
                                    : defaults.minInputLen(),
                            maxIn != null ? maxIn : defaults.maxInputLen(),
                            dataset.getMinOutputTokens() != null
                                    ? dataset.getMinOutputTokens()
                                    : defaults.minOutputLen(),
                            maxOut,
                            maxIn != null || maxOut != null ? null : defaults.maxTotalLen(),
                            override);
            return FileDatasets.shareGpt(file, count, filters, tokenizer, seed);
        }
        return FileDatasets.jsonl(
                file,
                count,
                new FileDatasets.Filters(
                        dataset.getMinInputTokens(),
                        dataset.getMaxInputTokens(),
                        dataset.getMinOutputTokens(),
                        dataset.getMaxOutputTokens(),
                        null,
                        override),
                null,
                tokenizer,
                seed);
    }

    private static Path source(DatasetSpec dataset, Path scratch) throws IOException {
        var source = dataset.getSource();
        if (source == null) {
            throw new PodFailure(
                    "work order: workload.dataset.source is required for type "
                            + dataset.getType().wireName());
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

    static LengthDistribution lengths(String field, TokenDistribution d) {
        DistributionType type = d.getType() == null ? DistributionType.FIXED : d.getType();
        String where = "work order: workload.dataset." + field;
        try {
            return switch (type) {
                case FIXED ->
                        LengthDistribution.fixed(required(where + ".mean", d.getMean()).intValue());
                case UNIFORM -> {
                    int min = required(where + ".min", d.getMin());
                    int max = required(where + ".max", d.getMax());
                    yield new LengthDistribution(
                            LengthDistribution.Kind.UNIFORM, (min + max) / 2, min, max, 0);
                }
                case NORMAL -> {
                    LengthDistribution n =
                            LengthDistribution.normal(
                                    required(where + ".mean", d.getMean()),
                                    d.getStddev() == null ? 0 : d.getStddev());
                    yield new LengthDistribution(
                            LengthDistribution.Kind.NORMAL,
                            n.mean(),
                            d.getMin() != null ? d.getMin() : 1,
                            d.getMax() != null ? d.getMax() : n.max(),
                            n.stddev());
                }
            };
        } catch (IllegalArgumentException e) {
            throw new PodFailure(where + ": " + e.getMessage());
        }
    }

    private static Integer required(String field, Integer value) {
        if (value == null) {
            throw new PodFailure(field + " is required for this distribution type");
        }
        return value;
    }

    static String lower(String text) {
        return text == null ? null : text.toLowerCase(Locale.ROOT);
    }
}
