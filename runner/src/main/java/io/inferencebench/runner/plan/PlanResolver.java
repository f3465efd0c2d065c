package io.inferencebench.runner.plan;

import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.ConversationSpec;
import io.inferencebench.crds.v1alpha1.DatasetSpec;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.DistributionType;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.HeaderValidation;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.PrefixRepetitionSpec;
import io.inferencebench.crds.v1alpha1.RampUpSpec;
import io.inferencebench.crds.v1alpha1.SamplingSpec;
import io.inferencebench.crds.v1alpha1.SloSpec;
import io.inferencebench.crds.v1alpha1.SpecValidation;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.crds.v1alpha1.ThinkTimeDistribution;
import io.inferencebench.crds.v1alpha1.TokenDistribution;
import io.inferencebench.crds.v1alpha1.TraceSpec;
import io.inferencebench.crds.v1alpha1.WeightedModel;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.runner.backend.RequestFields;
import io.inferencebench.runner.dataset.FileDatasets;
import io.inferencebench.runner.dataset.LengthDistribution;
import io.inferencebench.runner.dataset.PrefixRepetitionDataset;
import io.inferencebench.runner.engine.ArrivalKind;
import io.inferencebench.runner.engine.Conversations;
import io.inferencebench.runner.engine.ModelMix;
import io.inferencebench.runner.engine.RampUp;
import io.inferencebench.runner.engine.Slo;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.http.TlsOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The one road from a BenchmarkRun-shaped spec to the {@link RunPlan}: the command line calls it on
 * its {@code --config} sections with the flags laid over them, a runner pod on its work order. The
 * sections are checked with {@link SpecValidation} first, so both roads accept and refuse the same
 * specs with the same messages.
 */
public final class PlanResolver {

    /** Default SLO attainment a stage must reach, as {@code slo.minAttainment}. */
    public static final double DEFAULT_MIN_ATTAINMENT = 0.95;

    /**
     * How a road names the fields in its messages.
     *
     * @param prefix put before the section names, e.g. {@code ""} or {@code "work order: "}
     * @param wire names of the backend, API and path inputs
     * @param unboundedRates whether a request rate may be {@code +Inf}, every request at once (the
     *     command line's {@code --request-rate inf} and {@code inf} in its {@code --config}; a
     *     BenchmarkRun's numbers cannot carry it)
     */
    public record Road(String prefix, WireProtocol.Fields wire, boolean unboundedRates) {

        /** A runner pod reading its work order. */
        public static Road pod() {
            return new Road(
                    "work order: ",
                    new WireProtocol.Fields(
                            "work order: backend", "work order: api", "work order: path"),
                    false);
        }
    }

    /** The sections break a rule; the problems name their fields. */
    public static final class InvalidSpec extends IllegalArgumentException {
        private final List<String> problems;

        InvalidSpec(List<String> problems) {
            super(String.join("; ", problems));
            this.problems = List.copyOf(problems);
        }

        /** Each problem, naming its field. */
        public List<String> problems() {
            return problems;
        }
    }

    private PlanResolver() {}

    /**
     * The plan of a whole BenchmarkRun spec as a single runner would run it (for a spec read from
     * YAML: no CA file, since references are resolved by the operator).
     */
    public static RunPlan resolve(BenchmarkRunSpec spec, Road road) {
        TargetSpec target = spec.getTarget() == null ? new TargetSpec() : spec.getTarget();
        boolean insecure =
                target.getTls() != null
                        && Boolean.TRUE.equals(target.getTls().getInsecureSkipVerify());
        String serverName = target.getTls() == null ? null : target.getTls().getServerName();
        return resolve(
                new PlanTarget(
                        target.getBackend() == null ? null : target.getBackend().wireName(),
                        target.getApi() == null ? null : target.getApi().wireName(),
                        target.getPath(),
                        target.getModel(),
                        target.getHeaders(),
                        new TlsOptions(null, insecure, serverName)),
                spec.getWorkload(),
                spec.getLoad(),
                spec.getSlo(),
                road);
    }

    /**
     * Resolves the sections.
     *
     * @throws InvalidSpec when a section breaks a rule of {@link SpecValidation}
     * @throws IllegalArgumentException naming the field for other problems
     */
    public static RunPlan resolve(
            PlanTarget target, WorkloadSpec workload, LoadSpec load, SloSpec slo, Road road) {
        return resolve(target, workload, load, slo, road, false, null);
    }

    /**
     * Resolves the sections of a run that may be a capacity search, or whose rate stages ramp.
     *
     * @param searched whether the stages are decided at run time (a capacity search: the load has
     *     neither stages nor requestRates but a probe size, and the plan no stages)
     * @param rampUp the ramp of every rate stage (the command line's {@code --ramp-up-*} flags), or
     *     {@code null}; a ramped stage's {@code requestRate} is its end rate, checked by the rules
     *     of a rate, and becomes the ramp's mean rate in the plan
     * @throws InvalidSpec when a section breaks a rule of {@link SpecValidation}
     * @throws IllegalArgumentException naming the field for other problems
     */
    public static RunPlan resolve(
            PlanTarget target,
            WorkloadSpec workload,
            LoadSpec load,
            SloSpec slo,
            Road road,
            boolean searched,
            RampUp rampUp) {
        WorkloadSpec w = workload == null ? new WorkloadSpec() : workload;
        LoadSpec l = load == null ? new LoadSpec() : load;
        String at = road.prefix();
        List<String> problems = new ArrayList<>();
        // Flags were checked with their names before; what is left here came from the spec.
        for (String p : HeaderValidation.validate(target.headers(), "target.headers", ".")) {
            problems.add(at + p);
        }
        for (String p : SpecValidation.validateWorkload(w, "workload")) {
            problems.add(at + p);
        }
        boolean replayed = w.getDataset() != null && w.getDataset().getType() == DatasetType.TRACE;
        if (replayed && (searched || rampUp != null)) {
            problems.add(
                    at
                            + (searched ? "search" : "load.rampUp")
                            + ": a trace sets its own arrival times; scale them with"
                            + " workload.dataset.trace.timeScale");
        }
        boolean conversations = w.getDataset() != null && w.getDataset().getConversation() != null;
        if (conversations && (searched || rampUp != null)) {
            problems.add(
                    at
                            + (searched ? "search" : "load.rampUp")
                            + ": a conversation workload runs a number of sessions at once, not"
                            + " a rate");
        }
        for (String p :
                replayed
                        ? SpecValidation.validateReplay(l, "load")
                        : conversations
                                ? SpecValidation.validateConversationLoad(l, "load")
                                : SpecValidation.validateLoad(
                                        road.unboundedRates() ? boundedForValidation(l) : l,
                                        "load",
                                        searched)) {
            problems.add(at + p);
        }
        if (l.getMaxFailureRatio() != null
                && !(l.getMaxFailureRatio() >= 0 && l.getMaxFailureRatio() <= 1)) {
            problems.add(
                    at
                            + "load.maxFailureRatio: must be within [0, 1], got "
                            + l.getMaxFailureRatio());
        }
        if (slo != null
                && slo.getMinAttainment() != null
                && !(slo.getMinAttainment() >= 0 && slo.getMinAttainment() <= 1)) {
            problems.add(
                    at + "slo.minAttainment: must be within [0, 1], got " + slo.getMinAttainment());
        }
        if (conversations && problems.isEmpty()) {
            sessionsFit(l, w.getDataset().getConversation().resolvedTurns(), at, problems);
        }
        if (!problems.isEmpty()) {
            throw new InvalidSpec(problems);
        }
        boolean stream = !Boolean.FALSE.equals(w.getStreaming());
        WireProtocol wire =
                WireProtocol.resolve(
                        target.backend(), target.api(), target.path(), stream, road.wire());
        if (conversations && !"chat".equals(wire.api())) {
            throw new InvalidSpec(
                    List.of(
                            at
                                    + "workload.dataset.conversation: needs the chat API"
                                    + " (target.api: chat), whose messages carry a session's"
                                    + " history; the target's API is "
                                    + wire.api()));
        }
        SamplingSpec sampling = w.getSampling();
        ModelMix models = models(w.getModels(), at);
        if (models != null && target.model() != null && !target.model().isBlank()) {
            throw new InvalidSpec(
                    List.of(
                            at
                                    + "workload.models: set target.model or workload.models, not"
                                    + " both: with models each request asks for one of them"));
        }
        return new RunPlan(
                wire,
                models != null
                        ? models.names().get(0)
                        : target.model() == null || target.model().isBlank()
                                ? null
                                : target.model(),
                target.headers(),
                target.tls(),
                dataset(w.getDataset(), at),
                w.getIgnoreEos() != null
                        ? w.getIgnoreEos()
                        : RequestFields.ignoreEosByDefault(wire.backend()),
                sampling != null && sampling.getTemperature() != null
                        ? sampling.getTemperature()
                        : Double.valueOf(0.0),
                sampling != null ? sampling.getTopP() : null,
                sampling != null ? sampling.getTopK() : null,
                replayed
                        ? replayStages(l, w.getDataset().resolvedTrace(), at)
                        : stages(l, at, rampUp),
                l.getMaxConcurrency(),
                l.getWarmupRequests() == null ? 0 : l.getWarmupRequests(),
                duration(at + "load.requestTimeout", l.getRequestTimeout(), "5m"),
                duration(at + "load.cooldown", l.getCooldown(), "0s"),
                l.getMaxFailureRatio() == null
                        ? LoadSpec.DEFAULT_MAX_FAILURE_RATIO
                        : l.getMaxFailureRatio(),
                slo(slo, at),
                models,
                l.repeatCount());
    }

    /**
     * A copy of the load whose {@code +Inf} rates read as the highest finite rate, so that an
     * unbounded rate passes every rule a rate passes, and nothing else changes.
     */
    private static LoadSpec boundedForValidation(LoadSpec load) {
        LoadSpec copy = COPY.convertValue(load, LoadSpec.class);
        if (copy.getRequestRates() != null) {
            List<Double> rates = new ArrayList<>();
            for (Double r : copy.getRequestRates()) {
                rates.add(unbounded(r) ? StageSpec.MAX_REQUEST_RATE : r);
            }
            copy.setRequestRates(rates);
        }
        if (copy.getStages() != null) {
            for (StageSpec s : copy.getStages()) {
                if (unbounded(s.getRequestRate())) {
                    s.setRequestRate(StageSpec.MAX_REQUEST_RATE);
                }
            }
        }
        return copy;
    }

    private static boolean unbounded(Double rate) {
        return rate != null && rate == Double.POSITIVE_INFINITY;
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper COPY =
            new com.fasterxml.jackson.databind.ObjectMapper();

    private static List<StagePlan> stages(LoadSpec load, String at, RampUp rampUp) {
        String field = load.getStages() != null ? "load.stages" : "load.requestRates";
        List<StagePlan> plans = new ArrayList<>();
        List<StageSpec> all = load.resolvedStages();
        int once = all.size() / load.repeatCount();
        for (StageSpec s : all) {
            int i = plans.size();
            // a repeat's stage is named by its entry in the spec
            String entry = at + field + "[" + (once == 0 ? i : i % once) + "]";
            Duration d =
                    s.getDuration() == null
                            ? null
                            : duration(entry + ".duration", s.getDuration(), null);
            long prompts = s.getNumPrompts() == null ? 0 : s.getNumPrompts();
            RampUp ramp = rampUp != null ? rampUp : rampOf(s, 1);
            if (ramp != null) {
                plans.add(rampedStage(load, i, ramp, s, prompts, d, entry));
                continue;
            }
            plans.add(
                    stage(
                            load,
                            i,
                            s.getRequestRate(),
                            s.getConcurrency(),
                            prompts,
                            d,
                            load.getMaxConcurrency(),
                            entry));
        }
        return plans;
    }

    /**
     * The stages of a load whose arrivals a trace sets: without stages one replay at the trace's
     * (scaled) offsets, capped by the load's numPrompts and duration; concurrency stages send the
     * trace's requests in order. Each is bound to the trace once it is read ({@link
     * RunPlan#replaying}).
     */
    private static List<StagePlan> replayStages(LoadSpec load, TraceSpec trace, String at) {
        List<StagePlan> plans = new ArrayList<>();
        List<StageSpec> stages = load.replayStages();
        for (int i = 0; i < stages.size(); i++) {
            StageSpec s = stages.get(i);
            int entry = i % Math.max(1, stages.size() / load.repeatCount());
            String field = at + (load.getStages() == null ? "load" : "load.stages[" + entry + "]");
            try {
                plans.add(
                        StagePlan.replay(
                                i,
                                s.getConcurrency(),
                                s.getNumPrompts() == null ? 0 : s.getNumPrompts(),
                                s.getDuration() == null
                                        ? null
                                        : duration(field + ".duration", s.getDuration(), null),
                                load.getMaxConcurrency(),
                                trace.resolvedTimeScale()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(field + ": " + e.getMessage(), e);
            }
        }
        return plans;
    }

    /**
     * One stage as the engine runs it, under the load's arrival process: the one rule for the whole
     * run's stages and a runner pod's share of one.
     *
     * @param index the stage's position in the run (0-based)
     * @param rate requests/s, or {@code null} (with {@code concurrency}: a closed loop; without:
     *     every request at once)
     * @param concurrency requests kept in flight of a closed-loop stage, or {@code null}
     * @param prompts requests to send, {@code 0} for a stage bounded by its duration only
     * @param duration the stage's length, or {@code null}
     * @param cap the cap on requests in flight of a rate stage, or {@code null}
     * @param field names the stage in the message of a problem
     * @throws IllegalArgumentException naming {@code field}
     */
    public static StagePlan stage(
            LoadSpec load,
            int index,
            Double rate,
            Integer concurrency,
            long prompts,
            Duration duration,
            Integer cap,
            String field) {
        ArrivalKind arrival = arrival(load);
        double burstiness = load.getBurstiness() == null ? 1.0 : load.getBurstiness();
        try {
            return new StagePlan(
                    index,
                    rate == null ? Double.POSITIVE_INFINITY : rate,
                    concurrency,
                    prompts,
                    duration,
                    concurrency == null ? cap : null,
                    arrival,
                    burstiness,
                    null);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(field + ": " + e.getMessage(), e);
        }
    }

    /**
     * The ramp a stage declares ({@code stages[].rampUp}, up to its {@code requestRate}), as one of
     * {@code pods} runner pods runs it: each ramps its share of both rates. {@code null} for a
     * stage without a ramp.
     */
    public static RampUp rampOf(StageSpec stage, int pods) {
        RampUpSpec spec = stage.getRampUp();
        if (spec == null || stage.getRequestRate() == null) {
            return null;
        }
        RampUp.Strategy strategy =
                spec.getStrategy() == null
                        ? RampUp.Strategy.LINEAR
                        : RampUp.Strategy.parse(spec.getStrategy().wireName());
        return new RampUp(strategy, spec.getStartRate() / pods, stage.getRequestRate() / pods);
    }

    /**
     * A rate stage ramped by {@code rampUp}, under the load's arrival process: the one rule for the
     * whole run's stages and a runner pod's share of one.
     *
     * @param cap the cap on requests in flight (the run's or this pod's share), or {@code null}
     * @throws IllegalArgumentException naming {@code field}
     */
    public static StagePlan ramped(
            LoadSpec load,
            int index,
            RampUp rampUp,
            long prompts,
            Duration duration,
            Integer cap,
            String field) {
        try {
            return StagePlan.ramped(
                    index,
                    rampUp,
                    prompts,
                    duration,
                    cap,
                    arrival(load),
                    load.getBurstiness() == null ? 1.0 : load.getBurstiness());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(field + ": " + e.getMessage(), e);
        }
    }

    /** A rate stage of the load ramped by {@code rampUp}, under the load's arrival process. */
    private static StagePlan rampedStage(
            LoadSpec load,
            int index,
            RampUp rampUp,
            StageSpec spec,
            long prompts,
            Duration duration,
            String field) {
        if (spec.getConcurrency() != null || spec.getRequestRate() == null) {
            throw new IllegalArgumentException(
                    field + ": a ramp-up ramps a request rate; this stage has none");
        }
        return ramped(load, index, rampUp, prompts, duration, load.getMaxConcurrency(), field);
    }

    private static ArrivalKind arrival(LoadSpec load) {
        return load.getArrival() == null
                ? ArrivalKind.POISSON
                : ArrivalKind.parse(load.getArrival().wireName());
    }

    /**
     * Each stage's sessions, every turn a prepared prompt, within the prompts a runner holds: more
     * would send some sessions twice.
     */
    private static void sessionsFit(LoadSpec load, int turns, String at, List<String> problems) {
        List<StageSpec> stages = load.getStages();
        for (int i = 0; i < stages.size(); i++) {
            long requests = (long) stages.get(i).getNumPrompts() * turns;
            if (requests > RunPlan.MAX_PROMPTS) {
                problems.add(
                        String.format(
                                java.util.Locale.ROOT,
                                "%sload.stages[%d].numPrompts: %d sessions of %d turns are %d"
                                        + " requests, more than the %d a runner prepares; run"
                                        + " fewer sessions per stage",
                                at,
                                i,
                                stages.get(i).getNumPrompts(),
                                turns,
                                requests,
                                RunPlan.MAX_PROMPTS));
            }
        }
    }

    /** The workload's model mix, or {@code null} when it names none. */
    private static ModelMix models(List<WeightedModel> models, String at) {
        if (models == null) {
            return null;
        }
        List<Slo> slos = new ArrayList<>();
        for (int i = 0; i < models.size(); i++) {
            SloSpec own = models.get(i).getSlo();
            slos.add(own == null ? null : slo(own, at + "workload.models[" + i + "]."));
        }
        return new ModelMix(
                models.stream().map(WeightedModel::getName).toList(),
                models.stream().map(WeightedModel::resolvedWeight).toList(),
                slos);
    }

    /** The sessions of a conversation workload, or {@code null} for independent prompts. */
    private static Conversations conversation(ConversationSpec spec, String at) {
        if (spec == null) {
            return null;
        }
        return new Conversations(
                spec.resolvedTurns(),
                duration(
                        at + "workload.dataset.conversation.thinkTime",
                        spec.resolvedThinkTime(),
                        "0s"),
                spec.resolvedThinkTimeDistribution() == ThinkTimeDistribution.EXPONENTIAL);
    }

    private static DatasetPlan dataset(DatasetSpec spec, String at) {
        DatasetSpec dataset = spec == null ? new DatasetSpec() : spec;
        DatasetType type = dataset.getType() == null ? DatasetType.RANDOM : dataset.getType();
        long seed = dataset.getSeed() == null ? 0L : dataset.getSeed();
        if (type.synthetic()) {
            LengthDistribution outputs =
                    lengths(
                            at + "workload.dataset.outputTokens",
                            dataset.resolvedOutputTokens(),
                            DatasetSpec.DEFAULT_OUTPUT_TOKENS);
            if (type == DatasetType.PREFIX_REPETITION) {
                PrefixRepetitionSpec shape = dataset.resolvedPrefixRepetition();
                return new DatasetPlan(
                        type,
                        null,
                        new PrefixRepetitionDataset.Shape(
                                shape.resolvedPrefixTokens(),
                                shape.resolvedSuffixTokens(),
                                shape.resolvedPrefixes(),
                                seed),
                        outputs,
                        null,
                        null,
                        null,
                        seed,
                        null);
            }
            return new DatasetPlan(
                    type,
                    lengths(
                            at + "workload.dataset.inputTokens",
                            dataset.resolvedInputTokens(),
                            DatasetSpec.DEFAULT_INPUT_TOKENS),
                    null,
                    outputs,
                    null,
                    null,
                    null,
                    seed,
                    conversation(dataset.getConversation(), at));
        }
        if (type == DatasetType.TRACE) {
            return new DatasetPlan(
                    type,
                    null,
                    null,
                    null,
                    null,
                    dataset.getSource(),
                    dataset.resolvedTrace(),
                    seed,
                    null);
        }
        Integer override =
                dataset.getOutputTokens() != null ? dataset.getOutputTokens().getMean() : null;
        Integer minIn = dataset.getMinInputTokens();
        Integer maxIn = dataset.getMaxInputTokens();
        Integer minOut = dataset.getMinOutputTokens();
        Integer maxOut = dataset.getMaxOutputTokens();
        FileDatasets.Filters filters;
        if (type == DatasetType.SHAREGPT) {
            FileDatasets.Filters defaults = FileDatasets.Filters.shareGptDefaults(override);
            filters =
                    new FileDatasets.Filters(
                            minIn != null ? minIn : defaults.minInputLen(),
                            maxIn != null ? maxIn : defaults.maxInputLen(),
                            minOut != null ? minOut : defaults.minOutputLen(),
                            maxOut,
                            maxIn != null || maxOut != null ? null : defaults.maxTotalLen(),
                            override);
        } else {
            filters = new FileDatasets.Filters(minIn, maxIn, minOut, maxOut, null, override);
        }
        return new DatasetPlan(
                type,
                null,
                null,
                null,
                filters,
                dataset.getSource(),
                null,
                seed,
                type == DatasetType.SHAREGPT ? conversation(dataset.getConversation(), at) : null);
    }

    /**
     * A spec's token distribution as the engine samples it; a fixed one without mean is the
     * default.
     */
    static LengthDistribution lengths(String where, TokenDistribution d, int fallback) {
        DistributionType type = d.getType() == null ? DistributionType.FIXED : d.getType();
        try {
            return switch (type) {
                case FIXED ->
                        LengthDistribution.fixed(d.getMean() != null ? d.getMean() : fallback);
                case UNIFORM -> {
                    int min = d.getMin();
                    int max = d.getMax();
                    // vLLM's --random-range-ratio keeps its length as the mean of the range.
                    int mean = d.getMean() != null ? d.getMean() : (min + max) / 2;
                    yield new LengthDistribution(
                            LengthDistribution.Kind.UNIFORM, mean, min, max, 0);
                }
                case NORMAL -> {
                    LengthDistribution n =
                            LengthDistribution.normal(
                                    d.getMean(), d.getStddev() == null ? 0 : d.getStddev());
                    yield new LengthDistribution(
                            LengthDistribution.Kind.NORMAL,
                            n.mean(),
                            d.getMin() != null ? d.getMin() : 1,
                            d.getMax() != null ? d.getMax() : n.max(),
                            n.stddev());
                }
            };
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException(
                    where + ": " + (e.getMessage() == null ? "incomplete" : e.getMessage()), e);
        }
    }

    private static Slo slo(SloSpec spec, String at) {
        if (spec == null) {
            return new Slo(null, null, null, DEFAULT_MIN_ATTAINMENT);
        }
        return new Slo(
                millis(at + "slo.ttft", spec.getTtft()),
                millis(at + "slo.tpot", spec.getTpot()),
                millis(at + "slo.e2eLatency", spec.getE2eLatency()),
                spec.getMinAttainment() == null ? DEFAULT_MIN_ATTAINMENT : spec.getMinAttainment());
    }

    private static Double millis(String field, String text) {
        if (text == null) {
            return null;
        }
        return duration(field, text, null).toNanos() / 1e6;
    }

    /** A duration of the spec; {@code 0} (what YAML makes of {@code cooldown: 0}) is zero. */
    static Duration duration(String field, String text, String fallback) {
        String value = text != null ? text : fallback;
        if (value.equals("0")) {
            return Duration.ZERO;
        }
        try {
            return Durations.parse(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    field + ": '" + value + "' is not a duration; use e.g. 500ms, 30s, 5m, 1h30m");
        }
    }
}
