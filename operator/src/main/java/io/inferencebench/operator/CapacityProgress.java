package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.CapacityStatus;
import io.inferencebench.crds.v1alpha1.SearchSpec;
import io.inferencebench.crds.v1alpha1.StageResult;
import io.inferencebench.crds.v1alpha1.StageSpec;
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
        if (!searching(run)) {
            return run.getSpec().getLoad().resolvedStages();
        }
        return run.getSpec().getLoad().probeStages(rates(status));
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
     * A finished stage as a probe. Failed requests count as attempted and not good: a server that
     * fails under load misses the SLO (TooManyFailures is the server's verdict, not an undelivered
     * load); only a client that could not keep its schedule makes a probe count as neither pass nor
     * fail.
     *
     * @param result the stage's assembled result
     * @return the probe
     */
    public static ProbeResult probe(StageResult result) {
        long sent = result.getSent() == null ? 0 : result.getSent();
        double attainment = result.getSloAttainment() == null ? 0 : result.getSloAttainment();
        boolean delivered =
                Boolean.TRUE.equals(result.getLoadDelivered())
                        || LoadVerdict.TOO_MANY_FAILURES.equals(result.getLoadDeliveredReason());
        return new ProbeResult(
                result.getRequestRate(),
                result.getAchievedRate(),
                Math.round(attainment * sent),
                sent,
                delivered,
                result.getProfileKey());
    }

    /**
     * The next step given the stages assembled so far.
     *
     * @param run the run
     * @param results assembled stage results, in stage order
     * @return the next rate or the result
     */
    public static CapacitySearch.Step next(BenchmarkRun run, List<StageResult> results) {
        List<ProbeResult> done = new ArrayList<>();
        for (StageResult r : results) {
            done.add(probe(r));
        }
        return CapacitySearch.next(settings(run), done);
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
            BenchmarkRun run, List<StageResult> results, CapacitySearch.Step step) {
        CapacitySearch.Settings settings = settings(run);
        CapacityStatus status = new CapacityStatus();
        status.setSlo(run.getSpec().getSlo());
        status.setPrecision(settings.precision());
        List<CapacityStatus.Probe> probes = new ArrayList<>();
        for (StageResult r : results) {
            ProbeResult p = probe(r);
            CapacityStatus.Probe probe = new CapacityStatus.Probe();
            probe.setRequestRate(p.requestRate());
            probe.setAchievedRate(p.achievedRate());
            probe.setGoodRequests(p.goodRequests());
            probe.setAttemptedRequests(p.attemptedRequests());
            probe.setSloAttainment(p.attemptedRequests() == 0 ? null : p.sloAttainment());
            probe.setLoadDelivered(p.loadDelivered());
            probe.setPassed(
                    p.loadDelivered() ? p.sloAttainment() >= settings.minAttainment() : null);
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
            status.setDisplay(
                    result.maxRequestRate() == null
                            ? "< " + CapacitySearch.fmt(settings.minRate()) + " req/s"
                            : (result.failingRate() == null ? ">= " : "")
                                    + CapacitySearch.fmt(result.maxRequestRate())
                                    + " req/s");
        } else {
            CapacityStatus.Probe next = new CapacityStatus.Probe();
            next.setRequestRate(step.nextRate());
            probes.add(next);
            status.setMessage(
                    "probe "
                            + probes.size()
                            + " at "
                            + CapacitySearch.fmt(step.nextRate())
                            + " req/s");
        }
        status.setProbes(probes);
        return status;
    }

    private static String outcome(CapacitySearch.Outcome outcome) {
        StringBuilder name = new StringBuilder();
        for (String word : outcome.name().toLowerCase(Locale.ROOT).split("_")) {
            name.append(Character.toUpperCase(word.charAt(0))).append(word.substring(1));
        }
        return name.toString();
    }
}
