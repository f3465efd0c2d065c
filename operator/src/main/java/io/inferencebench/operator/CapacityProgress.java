package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.CapacityStatus;
import io.inferencebench.crds.v1alpha1.SearchSpec;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.v1alpha1.StageSummary;
import io.inferencebench.profile.lpg.LoadVerdict;
import io.inferencebench.profile.search.CapacitySearch;
import io.inferencebench.profile.search.ProbeResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code spec.search} as stages decided at run time: the probes so far are the assembled stage
 * results, the next rate is what {@link CapacitySearch#next} makes of them, and {@code
 * status.capacity} is built from the same step. Pure functions of the run, so a restarted operator
 * decides the same.
 */
public final class CapacityProgress {

    private CapacityProgress() {}

    /**
     * Whether the run is a capacity search.
     *
     * @param run the run
     * @return {@code true} when {@code spec.search} is set
     */
    public static boolean searching(BenchmarkRun run) {
        return run.getSpec().getSearch() != null;
    }

    /**
     * The run's stages: the spec's, or for a search one probe stage per rate decided so far.
     *
     * @param run the run
     * @param status the status the decisions are read from (may be {@code null})
     * @return the stages in order
     */
    public static List<StageSpec> stages(
            BenchmarkRun run, io.inferencebench.crds.v1alpha1.BenchmarkRunStatus status) {
        if (run.getSpec().replaysTrace()) {
            return run.getSpec().getLoad().replayStages();
        }
        if (!searching(run)) {
            return run.getSpec().getLoad().resolvedStages();
        }
        return run.getSpec().getLoad().probeStages(rates(status), sizes(status));
    }

    /**
     * The probe sizes decided so far, probe n at index n - 1 (1 unless a smaller probe at the same
     * rate was too short to judge).
     *
     * @param status the run's status, may be {@code null}
     * @return the sizes
     */
    public static List<Integer> sizes(io.inferencebench.crds.v1alpha1.BenchmarkRunStatus status) {
        List<Integer> sizes = new ArrayList<>();
        if (status != null && status.getCapacity() != null) {
            for (CapacityStatus.Probe p : status.getCapacity().getProbes()) {
                sizes.add(p.getSize() == null ? 1 : p.getSize());
            }
        }
        return sizes;
    }

    /**
     * The rates decided so far, probe n at index n - 1.
     *
     * @param status the run's status, may be {@code null}
     * @return the rates
     */
    public static List<Double> rates(io.inferencebench.crds.v1alpha1.BenchmarkRunStatus status) {
        List<Double> rates = new ArrayList<>();
        if (status != null && status.getCapacity() != null) {
            for (CapacityStatus.Probe p : status.getCapacity().getProbes()) {
                rates.add(p.getRequestRate());
            }
        }
        return rates;
    }

    /**
     * The search settings of a run.
     *
     * @param run a run with {@code spec.search} and {@code spec.slo}
     * @return the settings
     */
    public static CapacitySearch.Settings settings(BenchmarkRun run) {
        SearchSpec s = run.getSpec().getSearch();
        return new CapacitySearch.Settings(
                s.getMinRate(),
                s.getMaxRate(),
                s.getPrecision() == null ? SearchSpec.DEFAULT_PRECISION : s.getPrecision(),
                run.getSpec().getSlo().getMinAttainment(),
                CapacitySearch.Settings.DEFAULT_GROWTH,
                s.getConfirmations() == null
                        ? SearchSpec.DEFAULT_CONFIRMATIONS
                        : s.getConfirmations(),
                s.getMaxProbes() == null ? SearchSpec.DEFAULT_MAX_PROBES : s.getMaxProbes());
    }

    /**
     * A finished stage as a probe, judged as {@code runner search} judges its probes ({@link
     * ProbeResult#judgement}): failed requests count as attempted and not good (a server that fails
     * under load misses the SLO); only runners that could not keep their schedule make a probe
     * count as neither pass nor fail.
     *
     * @param result the stage's assembled result
     * @param size the probe's size (times the configured probe size)
     * @return the probe
     */
    public static ProbeResult probe(StageSummary result, int size) {
        long sent = result.getSent() == null ? 0 : result.getSent();
        long failed = result.getFailed() == null ? 0 : result.getFailed();
        double attainment = result.getSloAttainment() == null ? 0 : result.getSloAttainment();
        List<String> reasons;
        if (result.getLoadDeliveredReasons() != null) {
            reasons = result.getLoadDeliveredReasons();
        } else if (!Boolean.TRUE.equals(result.getLoadDelivered())
                && result.getLoadDeliveredReason() != null
                && !LoadVerdict.DELIVERED.equals(result.getLoadDeliveredReason())) {
            reasons = List.of(result.getLoadDeliveredReason());
        } else {
            reasons = List.of();
        }
        LoadVerdict.Delivery delivery =
                result.getLoadDelivered() == null
                        ? LoadVerdict.Delivery.INDETERMINATE
                        : result.getLoadDelivered()
                                ? LoadVerdict.Delivery.DELIVERED
                                : LoadVerdict.Delivery.NOT_DELIVERED;
        String reason =
                result.getLoadDeliveredReason() == null
                        ? (reasons.isEmpty() ? LoadVerdict.DELIVERED : reasons.get(0))
                        : result.getLoadDeliveredReason();
        LoadVerdict load =
                new LoadVerdict(
                        delivery,
                        reason,
                        result.getLoadDeliveredMessage() == null
                                ? "delivered the requested load"
                                : result.getLoadDeliveredMessage(),
                        reasons);
        return new ProbeResult(
                result.getRequestRate(),
                size,
                result.getAchievedRate(),
                Math.round(attainment * sent),
                sent,
                failed,
                failureClasses(result),
                load,
                result.getProfileKey());
    }

    private static String failureClasses(StageSummary result) {
        if (result.getErrorsByClass() == null || result.getErrorsByClass().isEmpty()) {
            return null;
        }
        StringBuilder text = new StringBuilder();
        result.getErrorsByClass().entrySet().stream()
                .sorted(
                        java.util.Map.Entry.<String, Long>comparingByValue()
                                .reversed()
                                .thenComparing(java.util.Map.Entry.comparingByKey()))
                .forEach(
                        e ->
                                text.append(text.length() == 0 ? "" : ", ")
                                        .append(e.getKey())
                                        .append(": ")
                                        .append(e.getValue()));
        return text.toString();
    }

    /**
     * The next step given the stages assembled so far.
     *
     * @param run the run
     * @param status the status holding the probes decided so far (their sizes)
     * @param results assembled stage results, in stage order
     * @return the next probe or the result
     */
    public static CapacitySearch.Step next(
            BenchmarkRun run,
            io.inferencebench.crds.v1alpha1.BenchmarkRunStatus status,
            List<StageSummary> results) {
        return CapacitySearch.next(settings(run), probes(status, results));
    }

    private static List<ProbeResult> probes(
            io.inferencebench.crds.v1alpha1.BenchmarkRunStatus status, List<StageSummary> results) {
        List<Integer> sizes = sizes(status);
        List<ProbeResult> done = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            done.add(probe(results.get(i), i < sizes.size() ? sizes.get(i) : 1));
        }
        return done;
    }

    /**
     * {@code status.capacity} after a step: the probes judged so far, the next probe's rate as an
     * unfinished probe, and the answer when the search is over.
     *
     * @param run the run
     * @param results assembled stage results, in stage order
     * @param step what the search does next
     * @return the status
     */
    public static CapacityStatus status(
            BenchmarkRun run,
            io.inferencebench.crds.v1alpha1.BenchmarkRunStatus previous,
            List<StageSummary> results,
            CapacitySearch.Step step) {
        CapacitySearch.Settings settings = settings(run);
        CapacityStatus status = new CapacityStatus();
        status.setSlo(run.getSpec().getSlo());
        status.setPrecision(settings.precision());
        List<CapacityStatus.Probe> probes = new ArrayList<>();
        for (ProbeResult p : probes(previous, results)) {
            CapacityStatus.Probe probe = new CapacityStatus.Probe();
            probe.setRequestRate(p.requestRate());
            probe.setSize(p.size() == 1 ? null : p.size());
            probe.setAchievedRate(p.achievedRate());
            probe.setGoodRequests(p.goodRequests());
            probe.setAttemptedRequests(p.attemptedRequests());
            probe.setFailedRequests(p.failedRequests() == 0 ? null : p.failedRequests());
            probe.setSloAttainment(p.attemptedRequests() == 0 ? null : p.sloAttainment());
            if (p.attemptedRequests() > 0) {
                probe.setSloAttainmentLow(p.attainmentInterval().low());
                probe.setSloAttainmentHigh(p.attainmentInterval().high());
            }
            probe.setLoadDelivered(p.loadDelivered());
            probe.setLoadDeliveredReason(p.load().reason());
            ProbeResult.Judgement judgement = p.judgement(settings.minAttainment());
            probe.setVerdict(verdict(judgement));
            probe.setPassed(new CapacitySearch.Probed(p, judgement).passed());
            probe.setProfile(p.profile());
            probes.add(probe);
        }
        if (step.done()) {
            CapacitySearch.Result result = step.result();
            status.setOutcome(outcome(result.outcome()));
            status.setPassingRate(result.passingRate());
            status.setFailingRate(result.failingRate());
            status.setMaxRequestRate(result.maxRequestRate());
            status.setMessage(result.message());
            status.setConfidence(result.confidence());
            status.setUndecided(result.undecided() ? Boolean.TRUE : null);
            status.setDisplay(
                    result.maxRequestRate() == null
                            ? "< " + CapacitySearch.fmt(settings.minRate()) + " req/s"
                            : (result.failingRate() == null ? ">= " : "")
                                    + CapacitySearch.fmt(result.maxRequestRate())
                                    + " req/s");
        } else {
            CapacityStatus.Probe next = new CapacityStatus.Probe();
            next.setRequestRate(step.nextRate());
            next.setSize(step.nextSize() > 1 ? step.nextSize() : null);
            probes.add(next);
            status.setMessage(
                    "probe "
                            + probes.size()
                            + " at "
                            + CapacitySearch.fmt(step.nextRate())
                            + " req/s"
                            + (step.nextSize() > 1
                                    ? " with "
                                            + step.nextSize()
                                            + " times the probe size (a smaller probe was too"
                                            + " short to judge)"
                                    : ""));
        }
        status.setProbes(probes);
        return status;
    }

    private static String verdict(ProbeResult.Judgement judgement) {
        return switch (judgement) {
            case PASS -> "Pass";
            case FAIL -> "Fail";
            case UNDELIVERED -> "LoadNotDelivered";
            case INDETERMINATE, UNDECIDED -> "Indeterminate";
        };
    }

    private static String outcome(CapacitySearch.Outcome outcome) {
        StringBuilder name = new StringBuilder();
        for (String word : outcome.name().toLowerCase(Locale.ROOT).split("_")) {
            name.append(Character.toUpperCase(word.charAt(0))).append(word.substring(1));
        }
        return name.toString();
    }
}
