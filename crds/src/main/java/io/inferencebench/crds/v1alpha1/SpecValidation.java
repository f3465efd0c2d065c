package io.inferencebench.crds.v1alpha1;

import static io.inferencebench.crds.v1alpha1.FieldChecks.bounded;
import static io.inferencebench.crds.v1alpha1.FieldChecks.duration;
import static io.inferencebench.crds.v1alpha1.FieldChecks.optionalDuration;
import static io.inferencebench.crds.v1alpha1.FieldChecks.optionalPositiveDuration;
import static io.inferencebench.crds.v1alpha1.FieldChecks.positiveCount;

import java.util.ArrayList;
import java.util.List;

/**
 * Checks of a spec that need no cluster: the CEL rules of the CRD repeated for callers without an
 * API server (the runner's {@code --config}), plus checks that depend on several fields together
 * (shares per runner pod). Every message names the field and says what is allowed.
 */
public final class SpecValidation {

    private SpecValidation() {}

    /**
     * Validates a workload ({@link WorkloadValidation}).
     *
     * @param workload the workload
     * @param prefix field path prefix, e.g. {@code spec.workload} or {@code workload}
     * @return problems, empty when valid
     */
    public static List<String> validateWorkload(WorkloadSpec workload, String prefix) {
        return WorkloadValidation.validate(workload, prefix);
    }

    /**
     * Validates a whole spec.
     *
     * @param spec the spec
     * @return problems, empty when valid
     */
    public static List<String> validate(BenchmarkRunSpec spec) {
        List<String> problems = new ArrayList<>();
        if (spec.getTarget() == null) {
            problems.add("spec.target is required");
        } else {
            TargetSpec target = spec.getTarget();
            if ((target.getService() == null) == (target.getUrl() == null)) {
                problems.add("spec.target: exactly one of service or url must be set");
            }
            if (target.getBalance() == Balance.ENDPOINTS && target.getService() == null) {
                problems.add(
                        "spec.target.balance: endpoints needs spec.target.service (a url has no"
                                + " endpoints to list)");
            }
            duration("spec.target.readinessTimeout", target.getReadinessTimeout(), problems);
            problems.addAll(
                    HeaderValidation.validate(target.getHeaders(), "spec.target.headers", "."));
            TlsSpec tls = target.getTls();
            if (tls != null) {
                if (tls.getCaConfigMapRef() != null && tls.getCaSecretRef() != null) {
                    problems.add(
                            "spec.target.tls: at most one of caConfigMapRef or caSecretRef may be"
                                    + " set");
                }
                if (Boolean.TRUE.equals(tls.getInsecureSkipVerify())
                        && (tls.getCaConfigMapRef() != null || tls.getCaSecretRef() != null)) {
                    problems.add(
                            "spec.target.tls.insecureSkipVerify: cannot be combined with a CA"
                                    + " (which checks the certificate)");
                }
                boolean https =
                        target.getUrl() != null
                                ? target.getUrl().startsWith("https://")
                                : target.getService() != null
                                        && "https".equals(target.getService().getScheme());
                if (!https) {
                    problems.add(
                            "spec.target.tls: applies only to an https target (url https://... or"
                                    + " service.scheme https)");
                }
            }
        }
        if (spec.getWorkload() != null) {
            problems.addAll(validateWorkload(spec.getWorkload(), "spec.workload"));
        }
        if (spec.getWorkload() != null
                && spec.getWorkload().getModels() != null
                && spec.getTarget() != null
                && spec.getTarget().getModel() != null) {
            problems.add(
                    "spec.workload.models: set target.model or workload.models, not both: with"
                            + " models each request asks for one of them");
        }
        int parallelism =
                spec.getRunner() == null || spec.getRunner().getParallelism() == null
                        ? 1
                        : spec.getRunner().getParallelism();
        if (spec.getLoad() == null) {
            problems.add("spec.load is required");
        } else if (spec.replaysTrace()) {
            if (spec.getSearch() != null) {
                problems.add(
                        "spec.search: a trace sets its own arrival times; a capacity search"
                                + " chooses rates (scale the trace with"
                                + " workload.dataset.trace.timeScale)");
            }
            problems.addAll(validateReplay(spec.getLoad(), "spec.load"));
            for (StageSpec stage : spec.getLoad().replayStages()) {
                if (stage.getNumPrompts() != null && stage.getNumPrompts() < parallelism) {
                    problems.add(
                            "spec.load: "
                                    + stage.getNumPrompts()
                                    + " prompts for "
                                    + parallelism
                                    + " runner pods; every runner pod needs at least one prompt");
                    break;
                }
            }
        } else if (spec.runsConversations()) {
            if (spec.getTarget() != null && spec.getTarget().getApi() != ApiKind.CHAT) {
                problems.add(
                        "spec.target.api: a conversation workload needs chat, whose messages carry"
                                + " a session's history");
            }
            if (spec.getSearch() != null) {
                problems.add(
                        "spec.search: a conversation workload runs a number of sessions at once,"
                                + " and search chooses request rates");
            }
            problems.addAll(validateConversationLoad(spec.getLoad(), "spec.load"));
            if (spec.getLoad().getStages() != null) {
                problems.addAll(validateShares(spec.getLoad(), parallelism));
            }
        } else {
            problems.addAll(validateLoad(spec.getLoad(), "spec.load", spec.getSearch() != null));
            problems.addAll(validateShares(spec.getLoad(), parallelism));
        }
        if (spec.getSearch() != null) {
            problems.addAll(validateSearch(spec));
        }
        if (spec.getSlo() != null) {
            SloSpec slo = spec.getSlo();
            if (slo.getTtft() == null && slo.getTpot() == null && slo.getE2eLatency() == null) {
                problems.add("spec.slo: at least one of ttft, tpot or e2eLatency must be set");
            }
            optionalDuration("spec.slo.ttft", slo.getTtft(), problems);
            optionalDuration("spec.slo.tpot", slo.getTpot(), problems);
            optionalDuration("spec.slo.e2eLatency", slo.getE2eLatency(), problems);
        }
        if (spec.getRunner() != null) {
            Integer pods = spec.getRunner().getParallelism();
            if (pods != null && (pods < 1 || pods > RunnerSpec.MAX_PARALLELISM)) {
                problems.add(
                        "spec.runner.parallelism: must be between 1 and "
                                + RunnerSpec.MAX_PARALLELISM
                                + ", got "
                                + pods);
            }
        }
        optionalPositiveDuration("spec.timeout", spec.getTimeout(), problems);
        if (spec.getMetrics() != null && spec.getMetrics().getPrometheus() != null) {
            if (Boolean.FALSE.equals(spec.getMetrics().getEnabled())) {
                problems.add(
                        "spec.metrics.prometheus: needs spec.metrics.enabled true (false turns"
                                + " server metrics off)");
            }
            problems.addAll(
                    validatePrometheus(
                            spec.getMetrics().getPrometheus(), "spec.metrics.prometheus"));
        }
        return problems;
    }

    /**
     * Validates a Prometheus source as the CRD schema does (the selector's full grammar is checked
     * where it is parsed, by the server-metrics library).
     *
     * @param prometheus the section
     * @param prefix field path prefix, e.g. {@code spec.metrics.prometheus}
     * @return problems, empty when valid
     */
    public static List<String> validatePrometheus(PrometheusSpec prometheus, String prefix) {
        List<String> problems = new ArrayList<>();
        String url = prometheus.getUrl();
        if (url == null || url.isEmpty()) {
            problems.add(prefix + ".url: is required, e.g. http://prometheus.monitoring:9090");
        } else if (url.length() > 2048
                || !java.util.regex.Pattern.matches(PrometheusSpec.URL_PATTERN, url)) {
            problems.add(
                    prefix
                            + ".url: must be an http:// or https:// URL with a host and an optional"
                            + " path, without user info, query or fragment");
        }
        if (prometheus.getSelector() != null
                && !java.util.regex.Pattern.matches(
                        PrometheusSpec.SELECTOR_PATTERN, prometheus.getSelector())) {
            problems.add(
                    prefix
                            + ".selector: must be PromQL label matchers such as"
                            + " {namespace=\"llm\",job=~\"vllm-.*\"}");
        }
        if (prometheus.getLabels() != null) {
            for (String key : prometheus.getLabels().keySet()) {
                if (key == null
                        || !java.util.regex.Pattern.matches(PrometheusSpec.LABEL_NAME_PATTERN, key)
                        || key.equals("__name__")) {
                    problems.add(
                            prefix
                                    + ".labels: '"
                                    + key
                                    + "' is not a label name (letters, digits and _, not"
                                    + " starting with a digit; __name__ not allowed)");
                }
            }
        }
        if (prometheus.getJob() != null && prometheus.getJob().isBlank()) {
            problems.add(prefix + ".job: must not be blank");
        }
        if (prometheus.getReplicaLabel() != null
                && !java.util.regex.Pattern.matches(
                        PrometheusSpec.LABEL_NAME_PATTERN, prometheus.getReplicaLabel())) {
            problems.add(prefix + ".replicaLabel: must be a label name such as pod or instance");
        }
        optionalPositiveDuration(prefix + ".step", prometheus.getStep(), problems);
        optionalPositiveDuration(prefix + ".timeout", prometheus.getTimeout(), problems);
        return problems;
    }

    /**
     * Validates the load of a conversation workload: every stage runs a number of sessions ({@code
     * numPrompts}), either a number in progress at once ({@code concurrency}, users) or starting at
     * a rate ({@code requestRate}, sessions/s); no ramp and no cap on requests in flight.
     *
     * @param load the load
     * @param prefix where the load is, e.g. {@code spec.load}
     * @return problems, empty when valid
     */
    public static List<String> validateConversationLoad(LoadSpec load, String prefix) {
        List<String> problems = new ArrayList<>();
        if (load.getRequestRates() != null) {
            problems.add(
                    prefix
                            + ".requestRates: a conversation workload runs sessions: give"
                            + " load.stages, each with numPrompts (sessions to run) and"
                            + " concurrency (sessions in progress at once) or requestRate"
                            + " (sessions started per second)");
        }
        if (load.getMaxConcurrency() != null) {
            problems.add(
                    prefix
                            + ".maxConcurrency: does not apply to a conversation workload (its"
                            + " sessions set how many requests are in flight)");
        }
        if (load.getStages() == null) {
            problems.add(
                    prefix
                            + ".stages: is required: each stage of a conversation workload sets"
                            + " numPrompts (sessions to run) and concurrency (sessions in progress"
                            + " at once) or requestRate (sessions started per second)");
            return problems;
        }
        if (load.getNumPrompts() != null || load.getDuration() != null) {
            problems.add(
                    prefix
                            + (load.getNumPrompts() != null ? ".numPrompts" : ".duration")
                            + ": set it on each of load.stages");
        }
        List<StageSpec> stages = load.getStages();
        for (int i = 0; i < stages.size(); i++) {
            StageSpec s = stages.get(i);
            String field = prefix + ".stages[" + i + "]";
            if (s.getRampUp() != null) {
                problems.add(
                        field + ".rampUp: a conversation workload's sessions start at one rate");
            }
            if ((s.getConcurrency() == null) == (s.getRequestRate() == null)) {
                problems.add(
                        field
                                + ": exactly one of concurrency (sessions in progress at once) or"
                                + " requestRate (sessions started per second) must be set");
            } else if (s.getConcurrency() != null) {
                positiveCount(field + ".concurrency", s.getConcurrency(), problems);
            } else if (!(s.getRequestRate() > 0)) {
                problems.add(
                        field + ".requestRate: must be > 0 sessions/s, got " + s.getRequestRate());
            }
            if (s.getNumPrompts() == null) {
                problems.add(field + ".numPrompts: is required (sessions to run in the stage)");
            } else {
                positiveCount(field + ".numPrompts", s.getNumPrompts(), problems);
                if (s.getRequestRate() != null
                        && s.getRequestRate() > 0
                        && Double.isFinite(s.getRequestRate())) {
                    scheduleFits(
                            field + ".requestRate",
                            s.getRequestRate(),
                            s.getNumPrompts(),
                            s.getDuration(),
                            "session",
                            problems);
                }
            }
            optionalPositiveDuration(field + ".duration", s.getDuration(), problems);
        }
        inFlightAndPauses(load, prefix, problems);
        return problems;
    }

    /**
     * Validates a load whose arrivals a trace sets: no rate stages, no ramp, no arrival process;
     * without stages the run is one replay, capped by {@code numPrompts} and {@code duration} when
     * set; concurrency stages send the trace's requests in order as a closed loop.
     *
     * @param load the load
     * @param prefix field path prefix
     * @return problems, empty when valid
     */
    public static List<String> validateReplay(LoadSpec load, String prefix) {
        List<String> problems = new ArrayList<>();
        String why = ": a trace sets its own arrival times; scale them with trace.timeScale";
        if (load.getRequestRates() != null) {
            problems.add(prefix + ".requestRates" + why);
        }
        // The defaults (poisson, 1) are what every load has; another value asks for a process.
        if (load.getArrival() != null && load.getArrival() != ArrivalProcess.POISSON) {
            problems.add(prefix + ".arrival" + why);
        }
        if (load.getBurstiness() != null && load.getBurstiness() != 1.0) {
            problems.add(prefix + ".burstiness" + why);
        }
        if (load.getStages() == null) {
            positiveCount(prefix + ".numPrompts", load.getNumPrompts(), problems);
            optionalPositiveDuration(prefix + ".duration", load.getDuration(), problems);
        } else {
            if (load.getNumPrompts() != null || load.getDuration() != null) {
                problems.add(
                        prefix
                                + ".stages: numPrompts and duration at load level apply only"
                                + " without stages; with stages set them on each stage");
            }
            if (load.getStages().isEmpty() || load.getStages().size() > LoadSpec.MAX_STAGES) {
                problems.add(
                        prefix + ".stages: must have 1 to " + LoadSpec.MAX_STAGES + " entries");
            }
            for (int i = 0; i < load.getStages().size(); i++) {
                StageSpec stage = load.getStages().get(i);
                String at = prefix + ".stages[" + i + "]";
                if (stage.getRequestRate() != null || stage.getRampUp() != null) {
                    problems.add(
                            at
                                    + why
                                    + " (a concurrency stage sends its requests in order as a"
                                    + " closed loop)");
                } else if (stage.getConcurrency() == null) {
                    problems.add(
                            at
                                    + ".concurrency: is required (a stage of a trace without"
                                    + " stages replays it; with stages each is a closed loop)");
                }
                bounded(
                        at + ".concurrency",
                        stage.getConcurrency(),
                        StageSpec.MAX_CONCURRENCY,
                        problems);
                positiveCount(at + ".numPrompts", stage.getNumPrompts(), problems);
                optionalPositiveDuration(at + ".duration", stage.getDuration(), problems);
            }
        }
        inFlightAndPauses(load, prefix, problems);
        return problems;
    }

    /**
     * Validates {@code spec.search} and what it needs.
     *
     * @param spec a spec with {@code search} set
     * @return problems, empty when valid
     */
    public static List<String> validateSearch(BenchmarkRunSpec spec) {
        List<String> problems = new ArrayList<>();
        SearchSpec search = spec.getSearch();
        Double min = search.getMinRate();
        Double max = search.getMaxRate();
        if (min == null || !(min > 0) || min > StageSpec.MAX_REQUEST_RATE) {
            problems.add("spec.search.minRate: must be greater than 0, got " + min);
        } else if (spec.getLoad() != null) {
            scheduleFits(
                    "spec.search.minRate",
                    min,
                    spec.getLoad().getNumPrompts(),
                    spec.getLoad().getDuration(),
                    problems);
        }
        if (max == null || max > StageSpec.MAX_REQUEST_RATE) {
            problems.add(
                    "spec.search.maxRate: must be at most "
                            + (long) StageSpec.MAX_REQUEST_RATE
                            + " requests/s, got "
                            + max);
        } else if (min != null && !(max > min)) {
            problems.add("spec.search.maxRate: must be greater than minRate " + min);
        }
        Double precision = search.getPrecision();
        if (precision != null && !(precision > 0 && precision < 1)) {
            problems.add("spec.search.precision: must be within (0, 1), got " + precision);
        }
        Integer confirmations = search.getConfirmations();
        if (confirmations != null && (confirmations < 0 || confirmations > 5)) {
            problems.add("spec.search.confirmations: must be 0 to 5, got " + confirmations);
        }
        Integer maxProbes = search.getMaxProbes();
        if (maxProbes != null && (maxProbes < 1 || maxProbes > LoadSpec.MAX_STAGES)) {
            problems.add(
                    "spec.search.maxProbes: must be 1 to "
                            + LoadSpec.MAX_STAGES
                            + ", got "
                            + maxProbes);
        }
        if (spec.getSlo() == null) {
            problems.add("spec.search: needs spec.slo (a probe passes when it meets it)");
        }
        return problems;
    }

    /**
     * Validates a load.
     *
     * @param load the load
     * @param prefix field path prefix, e.g. {@code spec.load} or {@code load}
     * @return problems, empty when valid
     */
    public static List<String> validateLoad(LoadSpec load, String prefix) {
        return validateLoad(load, prefix, false);
    }

    /**
     * Validates a load that may belong to a capacity search (whose stages are decided at run time:
     * neither stages nor requestRates, but a probe size).
     *
     * @param load the load
     * @param prefix field path prefix
     * @param searched whether {@code spec.search} is set
     * @return problems, empty when valid
     */
    public static List<String> validateLoad(LoadSpec load, String prefix, boolean searched) {
        List<String> problems = new ArrayList<>();
        boolean hasStages = load.getStages() != null;
        boolean hasRates = load.getRequestRates() != null;
        if (searched) {
            if (hasStages || hasRates) {
                problems.add(
                        "spec.search: decides every stage's rate at run time; leave"
                                + " load.stages and load.requestRates unset");
            }
            if (load.getNumPrompts() == null && load.getDuration() == null) {
                problems.add(
                        prefix
                                + ": spec.search needs numPrompts or duration (the size of every"
                                + " probe)");
            }
        } else if (hasStages == hasRates) {
            problems.add(prefix + ": exactly one of stages or requestRates must be set");
        }
        if (hasRates) {
            if (load.getRequestRates().isEmpty()
                    || load.getRequestRates().size() > LoadSpec.MAX_STAGES) {
                problems.add(
                        prefix
                                + ".requestRates: must have 1 to "
                                + LoadSpec.MAX_STAGES
                                + " entries");
            }
            for (int i = 0; i < load.getRequestRates().size(); i++) {
                Double rate = load.getRequestRates().get(i);
                if (rate == null || !(rate > 0) || rate > StageSpec.MAX_REQUEST_RATE) {
                    problems.add(
                            prefix
                                    + ".requestRates["
                                    + i
                                    + "]: must be greater than 0 and at most "
                                    + (long) StageSpec.MAX_REQUEST_RATE
                                    + " requests/s, got "
                                    + rate);
                } else {
                    scheduleFits(
                            prefix + ".requestRates[" + i + "]",
                            rate,
                            load.getNumPrompts(),
                            load.getDuration(),
                            problems);
                }
            }
            if (load.getNumPrompts() == null && load.getDuration() == null) {
                problems.add(prefix + ".requestRates: needs numPrompts or duration");
            }
        }
        if (hasStages) {
            if (load.getNumPrompts() != null || load.getDuration() != null) {
                problems.add(
                        prefix
                                + ".stages: numPrompts and duration at load level apply only to"
                                + " requestRates; with stages set them on each stage");
            }
            if (load.getStages().isEmpty() || load.getStages().size() > LoadSpec.MAX_STAGES) {
                problems.add(
                        prefix + ".stages: must have 1 to " + LoadSpec.MAX_STAGES + " entries");
            }
            for (int i = 0; i < load.getStages().size(); i++) {
                stage(prefix + ".stages[" + i + "]", load.getStages().get(i), problems);
            }
        }
        positiveCount(prefix + ".numPrompts", load.getNumPrompts(), problems);
        optionalPositiveDuration(prefix + ".duration", load.getDuration(), problems);
        if (load.getBurstiness() != null) {
            if (!(load.getBurstiness() > 0)) {
                problems.add(prefix + ".burstiness: must be greater than 0");
            } else if (load.getBurstiness() != 1.0 && load.getArrival() != ArrivalProcess.GAMMA) {
                problems.add(prefix + ".burstiness: burstiness other than 1 needs arrival gamma");
            }
        }
        if (searched && load.getRepeats() != null && load.getRepeats() != 1) {
            problems.add(
                    prefix
                            + ".repeats: spec.search decides its probes at run time and grows a"
                            + " probe that is too small to judge; load.repeats applies to stages"
                            + " given in advance");
        }
        inFlightAndPauses(load, prefix, problems);
        return problems;
    }

    /**
     * The rules every load has, whatever sets its arrivals: the cap on requests in flight, the
     * warm-up, the pause between stages, the request timeout and the repeats.
     */
    private static void inFlightAndPauses(LoadSpec load, String prefix, List<String> problems) {
        Integer repeats = load.getRepeats();
        if (repeats != null) {
            int once =
                    load.getStages() != null
                            ? load.getStages().size()
                            : load.getRequestRates() != null ? load.getRequestRates().size() : 1;
            if (repeats < 1 || repeats > LoadSpec.MAX_STAGES) {
                problems.add(
                        prefix
                                + ".repeats: must be 1 to "
                                + LoadSpec.MAX_STAGES
                                + ", got "
                                + repeats);
            } else if ((long) repeats * once > LoadSpec.MAX_STAGES) {
                problems.add(
                        prefix
                                + ".repeats: repeats times the stages (or requestRates) must be at"
                                + " most "
                                + LoadSpec.MAX_STAGES
                                + ": each repeat of a stage is a profile of its own ("
                                + repeats
                                + " x "
                                + once
                                + ")");
            }
        }
        positiveCount(prefix + ".maxConcurrency", load.getMaxConcurrency(), problems);
        // The schema's bounds, for the command line's --config too: above them an open loop at
        // an unbounded rate, or the warm-up (all at once), would start that many requests.
        if (load.getMaxConcurrency() != null
                && load.getMaxConcurrency() > StageSpec.MAX_CONCURRENCY) {
            problems.add(
                    prefix
                            + ".maxConcurrency: at most "
                            + StageSpec.MAX_CONCURRENCY
                            + " requests in flight, got "
                            + load.getMaxConcurrency()
                            + " (leave it unset for no cap)");
        }
        if (load.getWarmupRequests() != null && load.getWarmupRequests() < 0) {
            problems.add(prefix + ".warmupRequests: must not be negative");
        } else if (load.getWarmupRequests() != null
                && load.getWarmupRequests() > LoadSpec.MAX_WARMUP_REQUESTS) {
            problems.add(
                    prefix
                            + ".warmupRequests: at most "
                            + LoadSpec.MAX_WARMUP_REQUESTS
                            + ", got "
                            + load.getWarmupRequests());
        }
        optionalDuration(prefix + ".cooldown", load.getCooldown(), problems);
        optionalPositiveDuration(prefix + ".requestTimeout", load.getRequestTimeout(), problems);
    }

    /**
     * Checks that every runner pod gets a share of every stage.
     *
     * @param load the load
     * @param parallelism runner pods
     * @return problems, empty when every pod has work
     */
    public static List<String> validateShares(LoadSpec load, int parallelism) {
        List<String> problems = new ArrayList<>();
        if (parallelism <= 1) {
            return problems;
        }
        String stagesField =
                load.getStages() != null ? "spec.load.stages" : "spec.load.requestRates";
        List<StageSpec> stages = load.resolvedStages();
        for (int i = 0; i < stages.size(); i++) {
            StageSpec stage = stages.get(i);
            if (stage.getConcurrency() != null && stage.getConcurrency() < parallelism) {
                problems.add(
                        stagesField
                                + "["
                                + i
                                + "].concurrency: "
                                + stage.getConcurrency()
                                + " is lower than spec.runner.parallelism "
                                + parallelism
                                + "; every runner pod needs at least one request in flight");
            }
            if (stage.getNumPrompts() != null && stage.getNumPrompts() < parallelism) {
                String field =
                        load.getStages() != null
                                ? stagesField + "[" + i + "].numPrompts"
                                : "spec.load.numPrompts";
                problems.add(
                        field
                                + ": "
                                + stage.getNumPrompts()
                                + " is lower than spec.runner.parallelism "
                                + parallelism
                                + "; every runner pod needs at least one prompt");
                if (load.getStages() == null) {
                    break;
                }
            }
        }
        if (load.getMaxConcurrency() != null && load.getMaxConcurrency() < parallelism) {
            problems.add(
                    "spec.load.maxConcurrency: "
                            + load.getMaxConcurrency()
                            + " is lower than spec.runner.parallelism "
                            + parallelism
                            + "; every runner pod needs at least one slot");
        }
        return problems;
    }

    private static void stage(String at, StageSpec stage, List<String> problems) {
        if ((stage.getRequestRate() == null) == (stage.getConcurrency() == null)) {
            problems.add(at + ": exactly one of requestRate or concurrency must be set");
        }
        if (stage.getNumPrompts() == null && stage.getDuration() == null) {
            problems.add(at + ": at least one of numPrompts or duration must be set");
        }
        Double rate = stage.getRequestRate();
        if (rate != null && (!(rate > 0) || rate > StageSpec.MAX_REQUEST_RATE)) {
            problems.add(
                    at
                            + ".requestRate: must be greater than 0 and at most "
                            + (long) StageSpec.MAX_REQUEST_RATE
                            + " requests/s, got "
                            + rate);
        } else if (rate != null) {
            scheduleFits(
                    at + ".requestRate",
                    rate,
                    stage.getNumPrompts(),
                    stage.getDuration(),
                    problems);
        }
        positiveCount(at + ".concurrency", stage.getConcurrency(), problems);
        Integer concurrency = stage.getConcurrency();
        Integer prompts = stage.getNumPrompts();
        if (concurrency != null
                && concurrency > StageSpec.MAX_CONCURRENCY
                && (prompts == null || prompts > StageSpec.MAX_CONCURRENCY)) {
            // The schema's bound too; above it only when numPrompts keeps fewer in flight.
            problems.add(
                    at
                            + ".concurrency: at most "
                            + StageSpec.MAX_CONCURRENCY
                            + " requests in flight, got "
                            + concurrency
                            + " (more only with numPrompts at most "
                            + StageSpec.MAX_CONCURRENCY
                            + ")");
        }
        positiveCount(at + ".numPrompts", stage.getNumPrompts(), problems);
        optionalPositiveDuration(at + ".duration", stage.getDuration(), problems);
        if (stage.getRampUp() != null) {
            rampUp(at, stage, problems);
        }
    }

    /** A stage's ramp: from {@code rampUp.startRate} up to the stage's {@code requestRate}. */
    private static void rampUp(String at, StageSpec stage, List<String> problems) {
        RampUpSpec ramp = stage.getRampUp();
        if (stage.getRequestRate() == null) {
            problems.add(
                    at
                            + ".rampUp: ramps a requestRate (its end rate); a concurrency stage has none");
            return;
        }
        Double start = ramp.getStartRate();
        boolean exponential = ramp.getStrategy() == RampUpSpec.RampStrategy.EXPONENTIAL;
        if (start == null) {
            problems.add(at + ".rampUp.startRate: required (requests/s at the stage's start)");
        } else if (!Double.isFinite(start) || start < 0) {
            problems.add(at + ".rampUp.startRate: must be >= 0, got " + start);
        } else if (exponential && !(start > 0)) {
            problems.add(at + ".rampUp.startRate: an exponential ramp needs startRate > 0, got 0");
        } else if (start > stage.getRequestRate()) {
            problems.add(
                    at
                            + ".rampUp.startRate: "
                            + start
                            + " is above the stage's requestRate "
                            + stage.getRequestRate()
                            + " (the rate the ramp rises to)");
        } else if (start == 0 && stage.getDuration() == null) {
            problems.add(
                    at
                            + ".rampUp.startRate: a ramp from 0 needs the stage's duration (over"
                            + " its numPrompts alone the first request would never be followed)");
        }
    }

    /**
     * A rate stage's schedule must fit its bounds: with a duration, the mean gap between arrivals
     * (1 / rate) must not exceed it (the stage would send at most its first request); with a number
     * of prompts only, the schedule (numPrompts - 1 gaps) must span at most {@link
     * StageSpec#MAX_SCHEDULE_SECONDS}. A rate like 1e-11 would otherwise put the second request
     * thousands of years out.
     *
     * @param at the field (or flag) that set the rate
     * @param rate the rate, requests/s (&gt; 0)
     * @param numPrompts the stage's number of prompts, or {@code null}
     * @param duration the stage's duration, or {@code null}
     * @param problems where a problem is added
     */
    public static void scheduleFits(
            String at, double rate, Integer numPrompts, String duration, List<String> problems) {
        scheduleFits(at, rate, numPrompts, duration, "request", problems);
    }

    /**
     * {@link #scheduleFits(String, double, Integer, String, List)} of a schedule of {@code what}s
     * (requests, or sessions started at a rate).
     */
    static void scheduleFits(
            String at,
            double rate,
            Integer numPrompts,
            String duration,
            String what,
            List<String> problems) {
        double gap = 1 / rate;
        if (duration != null && Durations.validate(at, duration).isEmpty()) {
            double seconds = Durations.parse(duration).toNanos() / 1e9;
            if (gap > seconds) {
                problems.add(
                        String.format(
                                java.util.Locale.ROOT,
                                "%s: %s %ss/s puts %s s between %ss on average, longer"
                                        + " than the stage's duration %s: the stage would send at"
                                        + " most one %s; raise the rate or lengthen the stage",
                                at,
                                rate,
                                what,
                                shortNumber(gap),
                                what,
                                duration,
                                what));
            }
            return;
        }
        if (numPrompts != null && numPrompts > 1) {
            double span = (numPrompts - 1) * gap;
            if (span > StageSpec.MAX_SCHEDULE_SECONDS) {
                problems.add(
                        String.format(
                                java.util.Locale.ROOT,
                                "%s: %d %ss at %s %ss/s span %s s on average, longer"
                                        + " than the %d s (%d days) a stage may last; raise the"
                                        + " rate or send fewer %ss",
                                at,
                                numPrompts,
                                what,
                                rate,
                                what,
                                shortNumber(span),
                                (long) StageSpec.MAX_SCHEDULE_SECONDS,
                                (long) StageSpec.MAX_SCHEDULE_SECONDS / 86_400,
                                what));
            }
        }
    }

    private static String shortNumber(double value) {
        return value < 1e6
                ? String.format(java.util.Locale.ROOT, "%.3g", value)
                : String.format(java.util.Locale.ROOT, "%.3e", value);
    }
}
