package io.inferencebench.profile.compare;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/** Pairs the stages of a baseline and a candidate run for {@link ProfileComparison}. */
final class StagePairing {

    private StagePairing() {}

    /**
     * Pairs the stages of two runs by request rate (closed-loop stages by concurrency too), in the
     * baseline's order; a rate seen several times in both runs pairs its stages in their order.
     * Stages without a partner are named in {@code notes}.
     *
     * @throws IllegalArgumentException when a stage has no rate
     * @throws NotComparableException when a rate appears a different number of times in the two
     *     runs, or no stage finds a partner
     */
    static List<ComparedStage[]> pair(
            List<ComparedStage> base, List<ComparedStage> cand, Set<String> notes) {
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
                        return List.<ComparedStage[]>of(
                                new ComparedStage[] {base.get(0), cand.get(0)});
                    }
                    throw new IllegalArgumentException(
                            s.label
                                    + ": no metrics.request_rate"
                                    + s.noRateReason()
                                    + ": stages are paired by request rate");
                }
            }
        }
        List<ComparedStage[]> pairs = new ArrayList<>();
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
            if (sameInBase.size() != sameInCand.size()) {
                throw new NotComparableException(
                        "cannot pair the stages at "
                                + b.keyText()
                                + ": the baseline has "
                                + sameInBase.size()
                                + (sameInBase.size() == 1 ? " stage" : " stages")
                                + " at "
                                + b.keyText()
                                + ", the candidate "
                                + sameInCand.size()
                                + " (baseline "
                                + labels(sameInBase)
                                + "; candidate "
                                + labels(sameInCand)
                                + "); compare the profile files you mean");
            }
            for (int k = 0; k < sameInBase.size(); k++) {
                pairs.add(new ComparedStage[] {sameInBase.get(k), sameInCand.get(k)});
                paired.add(sameInBase.get(k));
                paired.add(sameInCand.get(k));
            }
        }
        if (pairs.isEmpty()) {
            throw new NotComparableException(
                    "nothing to pair: no stage of the baseline ("
                            + keys(base)
                            + ") has the request rate of a stage of the candidate ("
                            + keys(cand)
                            + "); stages are paired by request rate (closed-loop stages also by"
                            + " concurrency), never by position");
        }
        pairs.sort(Comparator.comparingInt(p -> base.indexOf(p[0])));
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
        return pairs;
    }

    static boolean sameKey(ComparedStage a, ComparedStage b) {
        return sameRate(a.rate, b.rate)
                && (Double.isFinite(a.rate) || Objects.equals(a.concurrency(), b.concurrency()));
    }

    private static String keys(List<ComparedStage> side) {
        return String.join(", ", side.stream().map(ComparedStage::keyText).toList());
    }

    private static String labels(List<ComparedStage> stages) {
        return String.join(", ", stages.stream().map(s -> s.label).toList());
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
