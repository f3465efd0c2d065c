package io.inferencebench.profile.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.inferencebench.profile.lpg.LoadVerdict;
import io.inferencebench.profile.search.CapacitySearch.Outcome;
import io.inferencebench.profile.search.CapacitySearch.Result;
import io.inferencebench.profile.search.CapacitySearch.Settings;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CapacitySearchTest {

    /** A server that meets the SLO for every request up to {@code capacity} and none above. */
    private static CapacitySearch.Probe sharpKnee(double capacity, List<Double> probed) {
        return (rate, size) -> {
            probed.add(rate);
            long good = rate <= capacity ? 100 : 0;
            return ProbeResult.delivered(rate, rate, good, 100, "p" + probed.size() + ".json");
        };
    }

    @Test
    void findsASharpKneeWithinThePrecision() throws Exception {
        List<Double> probed = new ArrayList<>();
        List<CapacitySearch.Probed> told = new ArrayList<>();
        Result r =
                CapacitySearch.run(
                        Settings.of(1, 100, 0.05, 0.95), sharpKnee(10, probed), told::add);
        assertThat(r.outcome()).isEqualTo(Outcome.FOUND);
        assertThat(r.passingRate()).isLessThanOrEqualTo(10.0);
        assertThat(r.failingRate()).isGreaterThan(10.0);
        assertThat(r.failingRate() / r.passingRate() - 1).isLessThanOrEqualTo(0.05);
        assertThat(r.maxRequestRate()).isEqualTo(r.passingRate());
        // geometric growth first: 1, 2, 4, 8, 16
        assertThat(probed.subList(0, 5)).containsExactly(1.0, 2.0, 4.0, 8.0, 16.0);
        // both edges were probed again
        assertThat(probed.stream().filter(x -> x.equals(r.passingRate())).count()).isEqualTo(2);
        assertThat(probed.stream().filter(x -> x.equals(r.failingRate())).count()).isEqualTo(2);
        assertThat(told).hasSize(probed.size());
        assertThat(r.probes()).hasSize(probed.size());
        assertThat(r.probes().get(0).result().profile()).isEqualTo("p1.json");
        assertThat(r.probes().get(4).passed()).isFalse();
    }

    @Test
    void aServerFasterThanTheMaxRateHasNoFailingRate() throws Exception {
        Result r =
                CapacitySearch.run(
                        Settings.of(5, 50, 0.05, 0.95), sharpKnee(1000, new ArrayList<>()), null);
        assertThat(r.outcome()).isEqualTo(Outcome.MAX_RATE_PASSED);
        assertThat(r.passingRate()).isEqualTo(50.0);
        assertThat(r.failingRate()).isNull();
    }

    @Test
    void aServerSlowerThanTheMinRateHasNoPassingRate() throws Exception {
        List<Double> probed = new ArrayList<>();
        Result r = CapacitySearch.run(Settings.of(5, 50, 0.05, 0.95), sharpKnee(1, probed), null);
        assertThat(r.outcome()).isEqualTo(Outcome.MIN_RATE_FAILED);
        assertThat(r.passingRate()).isNull();
        assertThat(r.failingRate()).isEqualTo(5.0);
        assertThat(probed).containsExactly(5.0);
    }

    @Test
    void undeliveredLoadIsNeitherPassNorFail() throws Exception {
        // the client tops out at 20 req/s; the server would take 100
        CapacitySearch.Probe probe =
                (rate, size) ->
                        rate <= 20
                                ? ProbeResult.delivered(rate, rate, 100, 100, null)
                                : withLoad(
                                        ProbeResult.delivered(rate, 20.0, 100, 100, null),
                                        LoadVerdict.Delivery.NOT_DELIVERED,
                                        LoadVerdict.RATE_NOT_ACHIEVED);
        Result r = CapacitySearch.run(Settings.of(1, 500, 0.05, 0.95), probe, null);
        assertThat(r.outcome()).isEqualTo(Outcome.LOAD_NOT_DELIVERED);
        assertThat(r.failingRate()).isNull();
        assertThat(r.passingRate()).isLessThanOrEqualTo(20.0).isGreaterThan(20 / 1.05);
        assertThat(r.undeliveredRate()).isGreaterThan(20.0);
        assertThat(r.message()).contains("could not deliver").contains("at least");
        assertThat(r.probes())
                .filteredOn(p -> !p.result().loadDelivered())
                .allSatisfy(p -> assertThat(p.passed()).isNull());
    }

    @Test
    void searchesOfANoisyKneeAgreeWithinThePrecision() throws Exception {
        // Each probe sends 200 requests; a request meets the SLO with a probability falling
        // steeply around 10 req/s (logistic, 1 % wide): the rate where attainment is 0.95 is
        // 10 * (1 - 0.01 ln 19) = 9.706. Single probes near it pass or fail by chance.
        double capacity = 10 * (1 - 0.01 * Math.log(19));
        List<Double> found = new ArrayList<>();
        for (long seed = 1; seed <= 20; seed++) {
            Random random = new Random(seed);
            CapacitySearch.Probe probe =
                    (rate, size) -> {
                        double p = 1 / (1 + Math.exp((rate - 10) / 0.1));
                        long good = 0;
                        for (int i = 0; i < 200; i++) {
                            if (random.nextDouble() < p) {
                                good++;
                            }
                        }
                        return ProbeResult.delivered(rate, rate, good, 200, null);
                    };
            Result r = CapacitySearch.run(Settings.of(1, 64, 0.05, 0.95), probe, null);
            assertThat(r.outcome()).as("seed " + seed).isEqualTo(Outcome.FOUND);
            assertThat(r.passingRate()).as("seed " + seed).isGreaterThan(capacity / 1.05);
            assertThat(r.failingRate()).as("seed " + seed).isLessThan(capacity * 1.05);
            found.add(r.maxRequestRate());
        }
        double lowest = found.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        double highest = found.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
        assertThat(highest / lowest - 1).isLessThanOrEqualTo(0.05);
    }

    /**
     * Drives a search one step at a time, as the operator does: each probe the step asks for is run
     * and added to {@code done}.
     *
     * @return the last step, the search's result
     */
    private static CapacitySearch.Step stepByStep(
            Settings settings, CapacitySearch.Probe probe, List<ProbeResult> done)
            throws Exception {
        CapacitySearch.Step step = CapacitySearch.next(settings, done);
        while (!step.done()) {
            done.add(
                    probe.run(step.nextRate(), step.nextSize())
                            .at(step.nextRate(), step.nextSize()));
            step = CapacitySearch.next(settings, done);
        }
        return step;
    }

    /**
     * A server of known capacity 10 req/s under an SLO of 90 % attainment: a request meets the SLO
     * with probability 0.9 at 10 req/s, falling through a soft knee (logistic, 3 % wide), drawn per
     * request. Probes of {@code requests} requests.
     */
    private static CapacitySearch.Probe softKnee(Random random, int requests, List<String> log) {
        return (rate, size) -> {
            double p = 1 / (1 + Math.exp((rate - 10) / 0.3) / 9);
            long good = 0;
            int n = requests * size;
            for (int i = 0; i < n; i++) {
                if (random.nextDouble() < p) {
                    good++;
                }
            }
            log.add(rate + ":" + good + "/" + n);
            return ProbeResult.delivered(rate, rate, good, n, null);
        };
    }

    /**
     * With probes of 100 requests, one probe at a rate 1 % from the knee is a coin toss; pooling up
     * to four probes while the interval straddles the minimum holds the capacity in 20 of these 20
     * searches (without the re-probes: 17, measured when this was written).
     */
    @Test
    void theBracketHoldsTheKnownCapacityIn19Of20SeededSearches() throws Exception {
        int held = 0;
        List<String> misses = new ArrayList<>();
        for (long seed = 1; seed <= 20; seed++) {
            List<String> log = new ArrayList<>();
            Result r =
                    CapacitySearch.run(
                            Settings.of(1, 64, 0.05, 0.9),
                            softKnee(new Random(seed), 100, log),
                            null);
            boolean holds =
                    r.passingRate() != null
                            && r.failingRate() != null
                            && r.passingRate() <= 10.0
                            && r.failingRate() >= 10.0;
            if (holds) {
                held++;
            } else {
                misses.add("seed " + seed + ": " + r.message() + " " + log);
            }
            // the answer states how sure its edges are
            assertThat(r.confidence()).as("seed " + seed).contains("at 95 % confidence");
            assertThat(r.undecided()).isEqualTo(r.confidence().startsWith("undecided"));
        }
        assertThat(held).as(String.join("\n", misses)).isGreaterThanOrEqualTo(19);
    }

    @Test
    void anUndersizedProbeIsIndeterminateAndItsRateIsProbedAgainThenTheAnswerSaysUndecided()
            throws Exception {
        // 10 requests a probe; at 9 req/s and above exactly 8 of 10 meet the SLO, which a
        // minimum of 80 % can neither pass nor fail with confidence (95 % interval 49-94 %)
        CapacitySearch.Probe probe =
                (rate, size) -> ProbeResult.delivered(rate, rate, rate < 9 ? 10 : 8, 10, null);
        Result r = CapacitySearch.run(Settings.of(2, 32, 0.05, 0.8), probe, null);
        List<CapacitySearch.Probed> at16 =
                r.probes().stream().filter(p -> p.result().requestRate() == 16.0).toList();
        // probed again while more probes could decide it: after 16 of 20 good, even 20 more good
        // (36 of 40: 77-97 %) could not show 80 %, so the rate is left there
        assertThat(at16).hasSize(2);
        assertThat(at16)
                .allSatisfy(
                        p -> {
                            assertThat(p.verdict()).isEqualTo("indeterminate");
                            assertThat(p.passed()).isNull();
                        });
        assertThat(r.undecided()).isTrue();
        assertThat(r.message()).contains("undecided at 95 % confidence");
        assertThat(r.confidence())
                .contains("attains 80.0 %")
                .contains("20 requests in 2 probes")
                .contains("the minimum 80.0 %")
                .contains("larger probes");
        // probes of 1000 requests at 70 % and 100 % decide both edges at once
        CapacitySearch.Probe large =
                (rate, size) ->
                        ProbeResult.delivered(rate, rate, rate < 9 ? 1000 : 700, 1000, null);
        Result decided = CapacitySearch.run(Settings.of(2, 32, 0.05, 0.8), large, null);
        assertThat(decided.undecided()).isFalse();
        assertThat(decided.confidence()).startsWith("decided at 95 % confidence");
        assertThat(decided.probes()).noneMatch(p -> p.verdict().equals("indeterminate"));
    }

    @Test
    void aRateThatMoreProbesCouldNotDecideIsNotProbedAgain() throws Exception {
        // 10 of 10 good against 95 %: even 40 of 40 (91.2-100 %) would not show it
        List<Double> probed = new ArrayList<>();
        Result r =
                CapacitySearch.run(
                        Settings.of(2, 8, 0.05, 0.95), sharpKneeOf(10, 100, probed), null);
        assertThat(probed).containsExactly(2.0, 4.0, 8.0);
        assertThat(r.outcome()).isEqualTo(Outcome.MAX_RATE_PASSED);
        assertThat(r.undecided()).isTrue();
        assertThat(r.confidence()).contains("8.00 req/s attains 100.0 % (72.2–100.0 %");
    }

    /** {@link #sharpKnee} with probes of {@code requests} requests. */
    private static CapacitySearch.Probe sharpKneeOf(
            int requests, double capacity, List<Double> probed) {
        return (rate, size) -> {
            probed.add(rate);
            return ProbeResult.delivered(
                    rate, rate, rate <= capacity ? requests : 0, requests, null);
        };
    }

    @Test
    void anUndecidedSearchReplayedOneStepAtATimeAsksForTheSameProbes() throws Exception {
        CapacitySearch.Probe probe =
                (rate, size) -> ProbeResult.delivered(rate, rate, rate < 9 ? 10 : 8, 10, null);
        Settings s = Settings.of(2, 32, 0.05, 0.8);
        Result byRun = CapacitySearch.run(s, probe, null);
        List<ProbeResult> done = new ArrayList<>();
        CapacitySearch.Step step = stepByStep(s, probe, done);
        assertThat(done)
                .extracting(ProbeResult::requestRate)
                .containsExactlyElementsOf(
                        byRun.probes().stream().map(p -> p.result().requestRate()).toList());
        assertThat(step.result().confidence()).isEqualTo(byRun.confidence());
    }

    @Test
    void theProbeBudgetEndsASearch() throws Exception {
        Settings s = new Settings(1, 1000, 0.001, 0.95, 2, 1, 6);
        Result r = CapacitySearch.run(s, sharpKnee(10, new ArrayList<>()), null);
        assertThat(r.outcome()).isEqualTo(Outcome.PROBE_LIMIT);
        assertThat(r.probes()).hasSize(6);
        assertThat(r.passingRate()).isLessThanOrEqualTo(10.0);
    }

    @Test
    void aSearchDrivenOneStepAtATimeMakesTheSameDecisionsAsARun() throws Exception {
        // a noisy knee near 23 req/s: the attainment falls with the rate, drawn per probe
        for (long seed = 1; seed <= 5; seed++) {
            Random forRun = new Random(seed);
            Random forSteps = new Random(seed);
            Settings s = Settings.of(2, 200, 0.05, 0.9);
            List<Double> runRates = new ArrayList<>();
            Result byRun =
                    CapacitySearch.run(
                            s,
                            (rate, size) -> {
                                runRates.add(rate);
                                return noisy(rate, forRun);
                            },
                            null);
            List<ProbeResult> done = new ArrayList<>();
            CapacitySearch.Step step = CapacitySearch.next(s, done);
            while (!step.done()) {
                done.add(noisy(step.nextRate(), forSteps));
                step = CapacitySearch.next(s, done);
            }
            assertThat(done)
                    .extracting(ProbeResult::requestRate)
                    .containsExactlyElementsOf(runRates);
            assertThat(step.result().outcome()).isEqualTo(byRun.outcome());
            assertThat(step.result().passingRate()).isEqualTo(byRun.passingRate());
            assertThat(step.result().failingRate()).isEqualTo(byRun.failingRate());
            assertThat(step.nextRate()).isNull();
        }
    }

    @Test
    void aStepBeginsAtTheMinRateAndRejectsAForeignHistory() {
        Settings s = Settings.of(3, 30, 0.05, 0.95);
        assertThat(CapacitySearch.next(s, List.of()).nextRate()).isEqualTo(3.0);
        assertThat(
                        CapacitySearch.next(
                                        s, List.of(ProbeResult.delivered(3, 3.0, 100, 100, null)))
                                .nextRate())
                .isEqualTo(6.0);
        assertThatThrownBy(
                        () ->
                                CapacitySearch.next(
                                        s, List.of(ProbeResult.delivered(4, 4.0, 100, 100, null))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("probe 1 ran at 4.00 req/s (size 1)");
    }

    private static ProbeResult noisy(double rate, Random random) {
        double p = 1 / (1 + Math.exp((rate - 23) / 1.5));
        long good = 0;
        for (int i = 0; i < 200; i++) {
            good += random.nextDouble() < p ? 1 : 0;
        }
        return ProbeResult.delivered(rate, rate, good, 200, null);
    }

    /** The same probe with another load verdict (one failed rule). */
    static ProbeResult withLoad(ProbeResult p, LoadVerdict.Delivery delivery, String reason) {
        return new ProbeResult(
                p.requestRate(),
                p.size(),
                p.achievedRate(),
                p.goodRequests(),
                p.attemptedRequests(),
                p.failedRequests(),
                p.failureClasses(),
                new LoadVerdict(delivery, reason, reason + " (test)", List.of(reason)),
                p.profile());
    }

    @Test
    void theCapacityIsNeverAboveWhatThePassingProbesAchieved() throws Exception {
        // a Poisson draw: every probe achieved 93 % of its nominal rate, and was delivered
        CapacitySearch.Probe probe =
                (rate, size) ->
                        ProbeResult.delivered(rate, 0.93 * rate, rate <= 10 ? 100 : 0, 100, null);
        Result r = CapacitySearch.run(Settings.of(1, 100, 0.05, 0.95), probe, null);
        assertThat(r.outcome()).isEqualTo(Outcome.FOUND);
        assertThat(r.passingAchievedRate()).isCloseTo(0.93 * r.passingRate(), within(1e-9));
        assertThat(r.maxRequestRate())
                .isCloseTo(r.passingAchievedRate(), within(r.passingAchievedRate() * 5e-4));
        assertThat(r.maxRequestRate()).isLessThan(r.passingRate());
    }

    @Test
    void aProbeTooShortToJudgeIsGrownAndJudgedOnTheLargerOne() throws Exception {
        // the server takes 100 req/s; probes above 50 req/s are too short to judge at size 1
        List<String> probed = new ArrayList<>();
        CapacitySearch.Probe probe =
                (rate, size) -> {
                    probed.add(rate + "x" + size);
                    ProbeResult p =
                            ProbeResult.delivered(rate, rate, rate <= 100 ? 100 : 0, 100, null);
                    return rate > 50 && size == 1
                            ? withLoad(
                                    p,
                                    LoadVerdict.Delivery.INDETERMINATE,
                                    LoadVerdict.SCHEDULE_TOO_SHORT)
                            : p;
                };
        Result r = CapacitySearch.run(Settings.of(8, 1000, 0.05, 0.95), probe, null);
        assertThat(r.outcome()).isEqualTo(Outcome.FOUND);
        assertThat(r.passingRate()).isLessThanOrEqualTo(100.0);
        assertThat(r.failingRate()).isGreaterThan(100.0);
        // 64 req/s was too short at size 1 and ran again 4 times larger
        assertThat(probed).containsSubsequence("32.0x1", "64.0x1", "64.0x4", "128.0x1", "128.0x4");
        assertThat(r.probes())
                .filteredOn(p -> p.result().size() == 1 && p.result().requestRate() > 50)
                .allSatisfy(p -> assertThat(p.verdict()).isEqualTo("indeterminate"));
        // a rate that needed growing is confirmed at the grown size, never again at size 1
        String edge = r.passingRate() + "x";
        assertThat(probed.stream().filter(x -> x.startsWith(edge) && x.endsWith("x1")))
                .hasSizeLessThanOrEqualTo(1);
        assertThat(probed.stream().filter(x -> x.startsWith(edge) && x.endsWith("x4")))
                .hasSizeGreaterThanOrEqualTo(2);
    }

    @Test
    void aProbeTooShortEvenAtTheLargestSizeEndsTheSearchIndeterminate() throws Exception {
        CapacitySearch.Probe probe =
                (rate, size) -> {
                    ProbeResult p = ProbeResult.delivered(rate, rate, 100, 100, null);
                    return rate > 4
                            ? withLoad(
                                    p,
                                    LoadVerdict.Delivery.INDETERMINATE,
                                    LoadVerdict.SCHEDULE_TOO_SHORT)
                            : p;
                };
        Result r = CapacitySearch.run(Settings.of(2, 100, 0.05, 0.95), probe, null);
        assertThat(r.outcome()).isEqualTo(Outcome.INDETERMINATE);
        assertThat(r.passingRate()).isEqualTo(4.0);
        assertThat(r.probes())
                .extracting(p -> p.result().requestRate() + "x" + p.result().size())
                .containsExactly("2.0x1", "4.0x1", "8.0x1", "8.0x4", "8.0x16");
        assertThat(r.message()).contains("too short to judge").contains("16 times");
        // driven one step at a time, the operator asks for the same sizes
        List<ProbeResult> done = new ArrayList<>();
        CapacitySearch.Step step = stepByStep(Settings.of(2, 100, 0.05, 0.95), probe, done);
        assertThat(done).extracting(ProbeResult::size).containsExactly(1, 1, 1, 4, 16);
        assertThat(step.result().outcome()).isEqualTo(Outcome.INDETERMINATE);
    }

    @Test
    void aServerThatFailsEveryRequestMissesTheSloAndTheMessageNamesTheFailures() throws Exception {
        CapacitySearch.Probe probe =
                (rate, size) ->
                        new ProbeResult(
                                rate,
                                size,
                                rate,
                                0,
                                10,
                                10,
                                "http_5xx: 10",
                                new LoadVerdict(
                                        LoadVerdict.Delivery.NOT_DELIVERED,
                                        LoadVerdict.TOO_MANY_FAILURES,
                                        "100.0 % of requests failed (http_5xx: 10)",
                                        List.of(LoadVerdict.TOO_MANY_FAILURES)),
                                null);
        Result r = CapacitySearch.run(Settings.of(1, 1e9, 0.05, 0.95), probe, null);
        assertThat(r.outcome()).isEqualTo(Outcome.MIN_RATE_FAILED);
        assertThat(r.probes().get(0).passed()).isFalse();
        assertThat(r.probes().get(0).result().loadDelivered()).isTrue();
        assertThat(r.message()).contains("10 of 10 requests failed (http_5xx: 10)");
    }

    @Test
    void aProbeHeldBackByTheConcurrencyCapFailsItsRate() throws Exception {
        CapacitySearch.Probe probe =
                (rate, size) -> {
                    ProbeResult p = ProbeResult.delivered(rate, rate, 100, 100, null);
                    return rate > 10
                            ? withLoad(
                                    p,
                                    LoadVerdict.Delivery.NOT_DELIVERED,
                                    LoadVerdict.CONCURRENCY_LIMITED)
                            : p;
                };
        Result r = CapacitySearch.run(Settings.of(1, 100, 0.05, 0.95), probe, null);
        assertThat(r.outcome()).isEqualTo(Outcome.FOUND);
        assertThat(r.failingRate()).isGreaterThan(10.0);
        assertThat(r.passingRate()).isLessThanOrEqualTo(10.0);
    }

    @Test
    void anInterruptedSearchKeepsTheBracketSoFar() {
        List<ProbeResult> done =
                List.of(
                        ProbeResult.delivered(1, 1.0, 100, 100, null),
                        ProbeResult.delivered(2, 2.0, 100, 100, null),
                        ProbeResult.delivered(4, 4.0, 0, 100, null),
                        ProbeResult.delivered(2.828, 2.8, 100, 100, null));
        Result r = CapacitySearch.interrupted(Settings.of(1, 100, 0.05, 0.95), done);
        assertThat(r.outcome()).isEqualTo(Outcome.INTERRUPTED);
        assertThat(r.passingRate()).isEqualTo(2.828);
        assertThat(r.failingRate()).isEqualTo(4.0);
        assertThat(r.maxRequestRate()).isEqualTo(2.8);
        assertThat(r.message()).contains("interrupted after 4 probe(s)");
    }

    @Test
    void settingsAreChecked() {
        assertThatThrownBy(() -> Settings.of(0, 10, 0.05, 0.95)).hasMessageContaining("min rate");
        assertThatThrownBy(() -> Settings.of(5, 1, 0.05, 0.95)).hasMessageContaining("max rate");
        assertThatThrownBy(() -> Settings.of(1, 10, 0, 0.95)).hasMessageContaining("precision");
        assertThatThrownBy(() -> Settings.of(1, 10, 0.05, 2)).hasMessageContaining("attainment");
    }
}
