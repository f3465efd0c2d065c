package io.inferencebench.runner.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.crds.v1alpha1.ArrivalProcess;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.SpecValidation;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.profile.lpg.RequestRate;
import io.inferencebench.runner.engine.ArrivalKind;
import io.inferencebench.runner.engine.RampUp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The load flags (stages, arrival, concurrency cap, warm-up, pauses and timeouts, the failure
 * gate), a picocli mixin ({@code @Mixin LoadOptions load}), laid over the {@code load} section of a
 * {@code --config} file.
 */
public final class LoadOptions {

    private static final ObjectMapper COPY = new ObjectMapper();

    /** Requests per stage when neither {@code --num-prompts} nor a duration bounds it. */
    public static final int DEFAULT_NUM_PROMPTS = 1000;

    @Option(
            names = "--request-rate",
            split = ",",
            description = "Requests/s; a comma list is a sweep, 'inf' sends all at once.")
    List<String> requestRates;

    @Option(
            names = "--concurrency",
            split = ",",
            description = "Closed-loop stages: requests kept in flight (comma list = sweep).")
    List<Integer> concurrencies;

    @Option(
            names = "--sessions",
            split = ",",
            description =
                    "multi-turn: sessions in progress at once (users), one stage each (comma"
                            + " list = sweep).")
    List<Integer> sessions;

    @Option(
            names = "--session-rate",
            split = ",",
            description =
                    "multi-turn: sessions started per second (as --arrival draws them), one stage"
                            + " each (comma list = sweep).")
    List<String> sessionRates;

    @Option(names = "--num-sessions", description = "multi-turn: sessions per stage (default 100).")
    Integer numSessions;

    /** Sessions per stage of a conversation workload when {@code --num-sessions} is not given. */
    public static final int DEFAULT_NUM_SESSIONS = 100;

    @Option(
            names = "--ramp-up-strategy",
            description =
                    "linear or exponential: one stage whose rate ramps from --ramp-up-start-rate"
                            + " to --ramp-up-end-rate over its --duration (else over its"
                            + " --num-prompts requests, as vLLM does); in place of --request-rate.")
    String rampUpStrategy;

    @Option(
            names = {"--ramp-up-start-rate", "--ramp-up-start-rps"},
            description =
                    "Requests/s at the ramp's start (> 0 for exponential; 0 only with"
                            + " --duration).")
    Double rampUpStartRate;

    @Option(
            names = {"--ramp-up-end-rate", "--ramp-up-end-rps"},
            description = "Requests/s at the ramp's end (at least the start rate).")
    Double rampUpEndRate;

    @Option(
            names = "--num-prompts",
            description = "Requests per stage (default 1000 unless --duration).")
    Integer numPrompts;

    @Option(
            names = "--duration",
            description = "Stage length, e.g. 30s, 2m (with --num-prompts: whichever ends first).")
    String duration;

    @Option(
            names = "--arrival",
            description =
                    "poisson, gamma or constant (default poisson; gamma when --burstiness != 1).")
    String arrival;

    @Option(
            names = "--burstiness",
            description = "Gamma shape: < 1 burstier, 1 = Poisson (default 1).")
    Double burstiness;

    @Option(
            names = "--max-concurrency",
            description = "Cap on requests in flight; waiting shows as slot wait and schedule lag.")
    Integer maxConcurrency;

    @Option(
            names = "--num-warmups",
            description =
                    "Warm-up requests before the first stage, excluded from results (default 0).")
    Integer numWarmups;

    @Option(
            names = "--cooldown",
            description = "Pause between stages (default 5s, as load.cooldown in a BenchmarkRun).")
    String cooldown;

    @Option(
            names = "--request-timeout",
            description = "Per-request timeout, send to last byte (default 5m).")
    String requestTimeout;

    @Option(
            names = "--max-failure-ratio",
            description =
                    "Exit 1 when more than this share of a stage's finished requests failed"
                            + " (0-1, default 0.1; load.maxFailureRatio in --config).")
    Double maxFailureRatio;

    @Option(
            names = "--repeats",
            paramLabel = "N",
            description =
                    "Run the whole list of stages N times, interleaved (1, 2, 3, then 1, 2, 3"
                            + " again), each repeat a profile of its own; compare then judges every"
                            + " figure against the noise between repeats (load.repeats in"
                            + " --config; default 1).")
    Integer repeats;

    /**
     * These flags as one probe of a capacity search: a single stage at {@code rate}, {@code size}
     * times the probe's requests ({@code --num-prompts}, else {@value #DEFAULT_NUM_PROMPTS}) or
     * length ({@code --duration}), so a probe too short to judge runs again larger; arrivals are
     * Poisson unless {@code --arrival} says otherwise.
     */
    LoadOptions probe(double rate, int size) {
        LoadOptions probe = new LoadOptions();
        probe.requestRates = List.of(Double.toString(rate));
        if (numPrompts != null) {
            probe.numPrompts = (int) Math.min((long) numPrompts * size, Integer.MAX_VALUE);
        } else if (duration == null && size > 1) {
            probe.numPrompts = DEFAULT_NUM_PROMPTS * size;
        }
        probe.duration =
                duration == null || size == 1
                        ? duration
                        : Durations.format(flagDuration("--duration", duration).multipliedBy(size));
        probe.arrival = arrival != null ? arrival : "poisson";
        probe.burstiness = burstiness;
        probe.maxConcurrency = maxConcurrency;
        probe.numWarmups = numWarmups;
        probe.cooldown = cooldown;
        probe.requestTimeout = requestTimeout;
        probe.maxFailureRatio = maxFailureRatio;
        return probe;
    }

    /** The stage flags a capacity search refuses (it chooses the rates), or {@code null}. */
    String stageFlag() {
        return requestRates != null
                ? "--request-rate"
                : concurrencies != null ? "--concurrency" : rampFlag();
    }

    /** The first ramp-up flag given, or {@code null}. */
    private String rampFlag() {
        return rampUpStrategy != null
                ? "--ramp-up-strategy"
                : rampUpStartRate != null
                        ? "--ramp-up-start-rate"
                        : rampUpEndRate != null ? "--ramp-up-end-rate" : null;
    }

    /**
     * The ramp of the {@code --ramp-up-*} flags, or {@code null} without them; {@link #layOver}
     * then makes the run one stage at the ramp's end rate, which the plan ramps.
     *
     * @throws Main.UsageError naming the flag when they are incomplete, invalid or given with
     *     another stage flag
     */
    public RampUp rampUp() {
        if (rampFlag() == null) {
            return null;
        }
        if (rampUpStrategy == null) {
            throw new Main.UsageError(
                    rampFlag() + ": needs --ramp-up-strategy linear or exponential");
        }
        RampUp.Strategy strategy;
        try {
            strategy = RampUp.Strategy.parse(rampUpStrategy);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError("--ramp-up-strategy: " + e.getMessage());
        }
        if (rampUpStartRate == null || rampUpEndRate == null) {
            throw new Main.UsageError(
                    "--ramp-up-strategy: needs both --ramp-up-start-rate and --ramp-up-end-rate");
        }
        if (requestRates != null || concurrencies != null) {
            throw new Main.UsageError(
                    (requestRates != null ? "--request-rate" : "--concurrency")
                            + ": a ramp-up sets the stage's rate; leave it out with"
                            + " --ramp-up-strategy");
        }
        if (!Double.isFinite(rampUpEndRate)
                || !(rampUpEndRate > 0)
                || rampUpEndRate > StageSpec.MAX_REQUEST_RATE) {
            throw new Main.UsageError(
                    "--ramp-up-end-rate: must be > 0 and at most "
                            + (long) StageSpec.MAX_REQUEST_RATE
                            + " requests/s, got "
                            + rampUpEndRate);
        }
        if (strategy == RampUp.Strategy.EXPONENTIAL && !(rampUpStartRate > 0)) {
            throw new Main.UsageError(
                    "--ramp-up-start-rate: an exponential ramp needs a start rate > 0, got "
                            + rampUpStartRate);
        }
        if (!(rampUpStartRate >= 0)) {
            throw new Main.UsageError("--ramp-up-start-rate: must be >= 0, got " + rampUpStartRate);
        }
        if (rampUpStartRate > rampUpEndRate) {
            throw new Main.UsageError(
                    "--ramp-up-start-rate: "
                            + rampUpStartRate
                            + " is above --ramp-up-end-rate "
                            + rampUpEndRate
                            + "; a ramp rises");
        }
        return new RampUp(strategy, rampUpStartRate, rampUpEndRate);
    }

    /** Whether the failure gate was given as a flag (messages name the flag, else the field). */
    public boolean failureRatioFromFlag() {
        return maxFailureRatio != null;
    }

    /**
     * The stages of a conversation workload: one per {@code --sessions} value, each running {@code
     * --num-sessions} sessions (within {@code --duration}); without the flags the config's stages,
     * bounded by them when given.
     */
    private LoadSpec conversationStages(LoadSpec l) {
        if (numSessions != null && numSessions < 1) {
            throw new Main.UsageError("--num-sessions: must be >= 1, got " + numSessions);
        }
        List<Integer> users = sessions != null ? sessions : concurrencies;
        String usersFlag = sessions != null ? "--sessions" : "--concurrency";
        if (users == null && sessionRates == null && l.getStages() == null) {
            throw new Main.UsageError(
                    "--sessions: required with conversations: the sessions in progress at once"
                            + " (e.g. --sessions 8, or a comma list for a sweep), or"
                            + " --session-rate: sessions started per second");
        }
        if (users == null && sessionRates == null) {
            for (StageSpec s : l.getStages()) {
                if (numSessions != null) {
                    s.setNumPrompts(numSessions);
                }
                if (duration != null) {
                    s.setDuration(duration);
                }
            }
            return l;
        }
        int n =
                numSessions != null
                        ? numSessions
                        : l.getNumPrompts() != null ? l.getNumPrompts() : DEFAULT_NUM_SESSIONS;
        String d = duration != null ? duration : l.getDuration();
        List<StageSpec> stages = new ArrayList<>();
        for (int c : users == null ? List.<Integer>of() : users) {
            if (c < 1 || c > StageSpec.MAX_CONCURRENCY) {
                throw new Main.UsageError(
                        usersFlag
                                + ": must be within [1, "
                                + StageSpec.MAX_CONCURRENCY
                                + "], got "
                                + c);
            }
            stages.add(stage(null, c, n, d));
        }
        for (String text : sessionRates == null ? List.<String>of() : sessionRates) {
            stages.add(stage(rate(text, "--session-rate", "sessions"), null, n, d));
        }
        l.setStages(stages);
        l.setRequestRates(null);
        l.setNumPrompts(null);
        l.setDuration(null);
        return l;
    }

    private static void refuse(String flag, Object value, String why) {
        if (value != null) {
            throw new Main.UsageError(flag + why);
        }
    }

    /**
     * A copy of the config's load with the flags laid over it. Stage flags replace the config's
     * stages; {@code --num-prompts} and {@code --duration} apply to every stage. Without stages
     * anywhere the run is one stage sending {@value #DEFAULT_NUM_PROMPTS} requests at once.
     */
    public LoadSpec layOver(LoadSpec config) {
        return layOver(config, false);
    }

    /**
     * A copy of the config's load with the flags laid over it ({@link #layOver(LoadSpec)}); when
     * {@code replaysTrace}, the trace sets the arrival times: rate and arrival flags are refused,
     * and without {@code --concurrency} the run is one replay of the trace, capped by {@code
     * --num-prompts} and {@code --duration} when given.
     */
    public LoadSpec layOver(LoadSpec config, boolean replaysTrace) {
        return layOver(config, replaysTrace, false);
    }

    /**
     * A copy of the config's load with the flags laid over it ({@link #layOver(LoadSpec,
     * boolean)}); when {@code conversations}, each stage runs {@code --sessions} sessions at once,
     * {@code --num-sessions} in all, and the rate flags are refused.
     */
    public LoadSpec layOver(LoadSpec config, boolean replaysTrace, boolean conversations) {
        if (conversations) {
            String why =
                    ": a conversation workload runs sessions: a number at once (--sessions) or"
                            + " started at a rate (--session-rate)";
            refuse("--request-rate", requestRates, why);
            refuse("--ramp-up-strategy", rampUpStrategy, why);
            refuse("--ramp-up-start-rate", rampUpStartRate, why);
            refuse("--ramp-up-end-rate", rampUpEndRate, why);
            if (sessionRates == null) {
                String starts = ": applies to sessions started at a rate (--session-rate)";
                refuse("--arrival", arrival, starts);
                refuse("--burstiness", burstiness, starts);
            }
            refuse(
                    "--max-concurrency",
                    maxConcurrency,
                    ": a conversation workload's concurrency is its sessions in progress"
                            + " (--sessions)");
            refuse(
                    "--num-prompts",
                    numPrompts,
                    ": a conversation workload counts sessions: give --num-sessions");
            if (sessions != null && concurrencies != null) {
                throw new Main.UsageError(
                        "--concurrency: a conversation workload's concurrency is its sessions in"
                                + " progress; give --sessions only");
            }
        } else {
            String why = ": applies only to --dataset-name multi-turn or sharegpt --multi-turn";
            refuse("--sessions", sessions, why);
            refuse("--session-rate", sessionRates, why);
            refuse("--num-sessions", numSessions, why);
        }
        if (replaysTrace) {
            String why = ": a trace sets its own arrival times; scale them with --trace-time-scale";
            if (requestRates != null) {
                throw new Main.UsageError("--request-rate" + why);
            }
            if (rampUpStrategy != null || rampUpStartRate != null || rampUpEndRate != null) {
                throw new Main.UsageError("--ramp-up-strategy" + why);
            }
            if (arrival != null) {
                throw new Main.UsageError("--arrival" + why);
            }
            if (burstiness != null) {
                throw new Main.UsageError("--burstiness" + why);
            }
        }
        LoadSpec l = config == null ? new LoadSpec() : COPY.convertValue(config, LoadSpec.class);
        if (numPrompts != null && numPrompts < 1) {
            throw new Main.UsageError("--num-prompts: must be >= 1, got " + numPrompts);
        }
        if (duration != null && flagDuration("--duration", duration).isZero()) {
            throw new Main.UsageError("--duration: must be greater than zero");
        }
        arrivalFlags(l);
        if (repeats != null) {
            if (repeats < 1 || repeats > LoadSpec.MAX_STAGES) {
                throw new Main.UsageError(
                        "--repeats: must be 1 to " + LoadSpec.MAX_STAGES + ", got " + repeats);
            }
            l.setRepeats(repeats);
        }
        if (maxConcurrency != null) {
            if (maxConcurrency < 1) {
                throw new Main.UsageError("--max-concurrency: must be >= 1, got " + maxConcurrency);
            }
            if (maxConcurrency > StageSpec.MAX_CONCURRENCY) {
                // An unbounded rate for a --duration would start that many requests at once.
                throw new Main.UsageError(
                        "--max-concurrency: at most "
                                + StageSpec.MAX_CONCURRENCY
                                + " requests in flight, got "
                                + maxConcurrency
                                + " (leave it out for no cap)");
            }
            l.setMaxConcurrency(maxConcurrency);
        }
        if (numWarmups != null) {
            if (numWarmups < 0) {
                throw new Main.UsageError("--num-warmups: must be >= 0, got " + numWarmups);
            }
            if (numWarmups > LoadSpec.MAX_WARMUP_REQUESTS) {
                // The warm-up sends all of them at once (up to --max-concurrency).
                throw new Main.UsageError(
                        "--num-warmups: at most "
                                + LoadSpec.MAX_WARMUP_REQUESTS
                                + ", got "
                                + numWarmups);
            }
            l.setWarmupRequests(numWarmups);
        }
        if (cooldown != null) {
            l.setCooldown(flagDuration("--cooldown", cooldown).isZero() ? "0s" : cooldown);
        }
        if (requestTimeout != null) {
            if (flagDuration("--request-timeout", requestTimeout).isZero()) {
                throw new Main.UsageError(
                        "--request-timeout: must be greater than zero, e.g. 30s or 5m");
            }
            l.setRequestTimeout(requestTimeout);
        }
        if (maxFailureRatio != null) {
            if (!(maxFailureRatio >= 0 && maxFailureRatio <= 1)) {
                throw new Main.UsageError(
                        "--max-failure-ratio: must be within [0, 1], got " + maxFailureRatio);
            }
            l.setMaxFailureRatio(maxFailureRatio);
        }
        if (conversations) {
            return conversationStages(l);
        }
        if (replaysTrace && concurrencies == null) {
            // One replay, unless the config has concurrency stages; its rules name the fields.
            if (numPrompts != null) {
                l.setNumPrompts(numPrompts);
            }
            if (duration != null) {
                l.setDuration(duration);
            }
            if (l.getStages() != null && (numPrompts != null || duration != null)) {
                for (StageSpec s : l.getStages()) {
                    s.setNumPrompts(numPrompts != null ? numPrompts : s.getNumPrompts());
                    s.setDuration(duration != null ? duration : s.getDuration());
                }
                l.setNumPrompts(null);
                l.setDuration(null);
            }
            return l;
        }
        if (replaysTrace) {
            // Concurrency stages over the trace's requests in order: all of them once, unless
            // --num-prompts or --duration bounds them.
            List<StageSpec> stages = new ArrayList<>();
            for (int c : concurrencies) {
                if (c < 1 || c > StageSpec.MAX_CONCURRENCY) {
                    throw new Main.UsageError(
                            "--concurrency: must be within [1, "
                                    + StageSpec.MAX_CONCURRENCY
                                    + "], got "
                                    + c);
                }
                stages.add(stage(null, c, numPrompts, duration));
            }
            l.setStages(stages);
            l.setRequestRates(null);
            l.setNumPrompts(null);
            l.setDuration(null);
            return l;
        }
        RampUp ramp = rampUp();
        boolean stageFlags = requestRates != null || concurrencies != null || ramp != null;
        if (stageFlags || (l.getStages() == null && l.getRequestRates() == null)) {
            Integer n = numPrompts != null ? numPrompts : l.getNumPrompts();
            String d = duration != null ? duration : l.getDuration();
            Integer prompts = n != null ? n : (d == null ? DEFAULT_NUM_PROMPTS : null);
            List<StageSpec> stages = new ArrayList<>();
            List<String> rates =
                    requestRates == null && concurrencies == null ? List.of("inf") : requestRates;
            if (ramp != null) {
                if (ramp.startRate() == 0 && d == null) {
                    throw new Main.UsageError(
                            "--ramp-up-start-rate: 0 needs --duration (over --num-prompts the"
                                    + " ramp spaces each request by its rate, and the first"
                                    + " would never be followed)");
                }
                // One stage at the ramp's end rate, its highest: the rate's rules apply to it.
                List<String> problems = new ArrayList<>();
                SpecValidation.scheduleFits(
                        "--ramp-up-end-rate " + ramp.endRate(),
                        ramp.endRate(),
                        prompts,
                        d,
                        problems);
                if (!problems.isEmpty()) {
                    throw new Main.UsageError(problems.get(0));
                }
                stages.add(stage(ramp.endRate(), null, prompts, d));
            } else if (rates != null) {
                for (String text : rates) {
                    Double rate = rate(text);
                    if (rate != null && Double.isFinite(rate)) {
                        List<String> problems = new ArrayList<>();
                        SpecValidation.scheduleFits(
                                "--request-rate " + text, rate, prompts, d, problems);
                        if (!problems.isEmpty()) {
                            throw new Main.UsageError(problems.get(0));
                        }
                    }
                    stages.add(stage(rate, null, prompts, d));
                }
            }
            if (concurrencies != null) {
                for (int c : concurrencies) {
                    if (c < 1) {
                        throw new Main.UsageError("--concurrency: must be >= 1, got " + c);
                    }
                    if (c > StageSpec.MAX_CONCURRENCY
                            && (prompts == null || prompts > StageSpec.MAX_CONCURRENCY)) {
                        // Below the prompts it is what the closed loop keeps in flight.
                        throw new Main.UsageError(
                                "--concurrency: at most "
                                        + StageSpec.MAX_CONCURRENCY
                                        + " requests in flight, got "
                                        + c
                                        + " (more only with --num-prompts at most "
                                        + StageSpec.MAX_CONCURRENCY
                                        + ": a stage never has more requests in flight than"
                                        + " it sends)");
                    }
                    stages.add(stage(null, c, prompts, d));
                }
            }
            l.setStages(stages);
            l.setRequestRates(null);
            l.setNumPrompts(null);
            l.setDuration(null);
        } else if (l.getRequestRates() != null) {
            if (numPrompts != null) {
                l.setNumPrompts(numPrompts);
            }
            if (duration != null) {
                l.setDuration(duration);
            }
        } else if (numPrompts != null || duration != null) {
            for (StageSpec s : l.getStages()) {
                if (numPrompts != null) {
                    s.setNumPrompts(numPrompts);
                }
                if (duration != null) {
                    s.setDuration(duration);
                }
            }
        }
        return l;
    }

    private void arrivalFlags(LoadSpec l) {
        if (burstiness != null) {
            if (!(burstiness > 0) || Double.isInfinite(burstiness)) {
                throw new Main.UsageError(
                        "--burstiness: must be a positive number, got " + burstiness);
            }
            l.setBurstiness(burstiness);
        }
        ArrivalKind kind = null;
        if (arrival != null) {
            try {
                kind = ArrivalKind.parse(arrival);
            } catch (IllegalArgumentException e) {
                throw new Main.UsageError("--arrival: " + e.getMessage());
            }
        } else if (burstiness != null && burstiness != 1.0) {
            kind = ArrivalKind.GAMMA;
        }
        if (kind != null) {
            l.setArrival(ArrivalProcess.valueOf(kind.name()));
        }
        double burst = l.getBurstiness() == null ? 1.0 : l.getBurstiness();
        if ((arrival != null || burstiness != null)
                && burst != 1.0
                && l.getArrival() != ArrivalProcess.GAMMA) {
            throw new Main.UsageError("--burstiness: a value other than 1 needs --arrival gamma");
        }
    }

    /** A rate stage ({@code +Inf}: the command line's 'inf', every request at once). */
    private static StageSpec stage(Double rate, Integer concurrency, Integer prompts, String d) {
        StageSpec s = new StageSpec();
        s.setRequestRate(rate);
        s.setConcurrency(concurrency);
        s.setNumPrompts(prompts);
        s.setDuration(d);
        return s;
    }

    private static Double rate(String text) {
        return rate(text, "--request-rate", "requests");
    }

    /** The rate {@code text} of {@code flag}, in {@code what}/s. */
    private static Double rate(String text, String flag, String what) {
        double rate;
        try {
            rate = RequestRate.parse(text);
        } catch (NumberFormatException e) {
            throw new Main.UsageError(flag + ": '" + text + "' is not a number or 'inf'");
        }
        if (!(rate > 0)) {
            throw new Main.UsageError(flag + ": must be > 0 or 'inf', got " + text);
        }
        if (rate != Double.POSITIVE_INFINITY && rate > StageSpec.MAX_REQUEST_RATE) {
            throw new Main.UsageError(
                    flag
                            + ": must be at most "
                            + (long) StageSpec.MAX_REQUEST_RATE
                            + " "
                            + what
                            + "/s or 'inf', got "
                            + text);
        }
        return rate;
    }

    private static Duration flagDuration(String flag, String text) {
        try {
            if (text.equals("0")) {
                return Duration.ZERO;
            }
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(
                    flag + ": '" + text + "' is not a duration; use e.g. 500ms, 30s, 5m, 1h30m");
        }
    }
}
