package io.inferencebench.profile.compare;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** Pairs the stages of a baseline and a candidate run for {@link ProfileComparison}. */
final class StagePairing {

    private StagePairing() {}

    /**
     * The stages of one load (rate, or concurrency) in each run: one each, or the repeats of a
     * stage ({@code load.repeats}), as many as each run has.
     */
    record Group(List<ComparedStage> baseline, List<ComparedStage> candidate) {

        Group {
            baseline = List.copyOf(baseline);
            candidate = List.copyOf(candidate);
        }
    }

    /**
     * Groups the stages of two runs by request rate (closed-loop stages by concurrency too), in the
     * baseline's order; a rate seen several times in a run is that stage's repeats, however many
     * each run has. Stages without a partner are named in {@code notes}.
     *
     * @throws IllegalArgumentException when a stage has no rate
     * @throws NotComparableException when no stage finds a partner
     */
    static List<Group> pair(List<ComparedStage> base, List<ComparedStage> cand, Set<String> notes) {
        for (List<ComparedStage> side : List.of(base, cand)) {
            for (ComparedStage s : side) {
                if (Double.isNaN(s.rate)) {
                    if (base.size() == 1 && cand.size() == 1) {
                        // One stage each: nothing to choose between, but the reader must know.
                        notes.add(
                                "the runs' only stages are paired without a request rate: "
                                        + s.who()
                                        + " does not say which rate it ran at"
                                        + s.noRateReason()
                                        + "; make sure both ran the same load");
                        return List.of(new Group(base, cand));
                    }
                    throw new IllegalArgumentException(
                            s.label
                                    + ": no metrics.request_rate"
                                    + s.noRateReason()
                                    + ": stages are paired by request rate");
                }
            }
        }
        List<Group> groups = new ArrayList<>();
        List<ComparedStage> paired = new ArrayList<>();
        for (ComparedStage b : base) {
            if (paired.contains(b)) {
                continue;
            }
            List<ComparedStage> sameInBase = base.stream().filter(o -> sameKey(b, o)).toList();
            List<ComparedStage> sameInCand = cand.stream().filter(o -> sameKey(b, o)).toList();
            if (sameInCand.isEmpty()) {
                continue;
            }
            groups.add(new Group(sameInBase, sameInCand));
            paired.addAll(sameInBase);
            paired.addAll(sameInCand);
        }
        if (groups.isEmpty()) {
            throw new NotComparableException(
                    "nothing to pair: no stage of the baseline ("
                            + keys(base)
                            + ") has the request rate of a stage of the candidate ("
                            + keys(cand)
                            + "); stages are paired by request rate (closed-loop stages also by"
                            + " concurrency), never by position");
        }
        for (ComparedStage b : base) {
            if (!paired.contains(b)) {
                notes.add(
                        "baseline stage "
                                + b.describe()
                                + " has no candidate stage at that rate: not compared");
            }
        }
        for (ComparedStage c : cand) {
            if (!paired.contains(c)) {
                notes.add(
                        "candidate stage "
                                + c.describe()
                                + " has no baseline stage at that rate: not compared");
            }
        }
        return groups;
    }

    static boolean sameKey(ComparedStage a, ComparedStage b) {
        return sameRate(a.rate, b.rate)
                && (Double.isFinite(a.rate) || Objects.equals(a.concurrency(), b.concurrency()));
    }

    private static String keys(List<ComparedStage> side) {
        return String.join(", ", side.stream().map(ComparedStage::keyText).toList());
    }

    private static boolean sameRate(double a, double b) {
        if (Double.isNaN(a) || Double.isNaN(b)) {
            return false;
        }
        if (Double.isInfinite(a) || Double.isInfinite(b)) {
            return a == b;
        }
        return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
    }
}
