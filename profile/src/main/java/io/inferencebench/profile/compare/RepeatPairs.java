package io.inferencebench.profile.compare;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Which repeats of two runs are compared pair by pair ({@link RepeatTest#paired}): those that drew
 * the same random schedules, repeat by repeat, because the runs share a seed.
 */
final class RepeatPairs {

    private RepeatPairs() {}

    /**
     * The two sides' repeats in pairs that drew the same schedule, each side in its repeats' order:
     * as many a side (two or more), each pair with the same requests due and the same drawn rate to
     * the last bit (one seed's schedule), and the draws differing between repeats (a random
     * schedule, whose draw pairing cancels); else {@code null}. Repeats that all drew one schedule
     * (constant arrivals) have no draw to cancel and keep Welch's test and its degrees of freedom;
     * a stage without a drawn schedule (a closed loop, another tool's file) is never paired.
     */
    static List<List<ComparedStage>> sameSchedules(
            List<ComparedStage> base, List<ComparedStage> cand) {
        if (base.size() != cand.size() || base.size() < 2) {
            return null;
        }
        List<ComparedStage> b = inRepeatOrder(base);
        List<ComparedStage> c = inRepeatOrder(cand);
        for (int i = 0; i < b.size(); i++) {
            Double rateB = b.get(i).number("scheduled_rate");
            Double rateC = c.get(i).number("scheduled_rate");
            Long dueB = b.get(i).count("requests_due");
            Long dueC = c.get(i).count("requests_due");
            if (rateB == null || !rateB.equals(rateC) || dueB == null || !dueB.equals(dueC)) {
                return null;
            }
        }
        boolean drawsDiffer =
                b.stream().map(stage -> stage.number("scheduled_rate")).distinct().count() > 1;
        return drawsDiffer ? List.of(b, c) : null;
    }

    /** Repeats ordered by their number ({@code dimensions.repeat}, "2/3"), else as given. */
    private static List<ComparedStage> inRepeatOrder(List<ComparedStage> stages) {
        List<ComparedStage> ordered = new ArrayList<>(stages);
        if (stages.stream().allMatch(s -> repeatNumber(s) > 0)) {
            ordered.sort(Comparator.comparingInt(RepeatPairs::repeatNumber));
        }
        return ordered;
    }

    private static int repeatNumber(ComparedStage s) {
        String repeat = s.dimensions.path("repeat").asText("");
        int slash = repeat.indexOf('/');
        try {
            return slash > 0 ? Integer.parseInt(repeat.substring(0, slash)) : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
