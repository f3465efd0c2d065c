package io.inferencebench.operator.schedule;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * Which of a schedule's runs to delete so that at most {@code historyLimit} remain: the oldest
 * finished ones first. Running runs are never deleted, nor any baseline of a run still running (its
 * comparison is made when it finishes; a finished run keeps its comparison in status).
 */
public final class ScheduleHistory {

    private ScheduleHistory() {}

    /**
     * One run of the schedule.
     *
     * @param name run name
     * @param scheduledAt the fire time it was created for
     * @param finished whether it reached a terminal phase
     * @param baselines the runs its {@code spec.baseline} names ({@code runName} or {@code
     *     runNames}), empty when none
     */
    public record Entry(String name, Instant scheduledAt, boolean finished, Set<String> baselines) {

        /** Defensive copy. */
        public Entry {
            baselines = baselines == null ? Set.of() : Set.copyOf(baselines);
        }
    }

    /**
     * The runs to delete.
     *
     * @param runs every run of the schedule
     * @param historyLimit how many to keep (at least 1)
     * @param pinned names never to delete (e.g. a pinned {@code spec.baseline.runName})
     * @return names to delete, oldest first
     */
    public static List<String> prune(List<Entry> runs, int historyLimit, Set<String> pinned) {
        List<Entry> oldestFirst = new ArrayList<>(runs);
        oldestFirst.sort(Comparator.comparing(Entry::scheduledAt).thenComparing(Entry::name));
        int excess = runs.size() - Math.max(1, historyLimit);
        List<String> delete = new ArrayList<>();
        for (Entry candidate : oldestFirst) {
            if (excess <= 0) {
                break;
            }
            if (!candidate.finished() || pinned.contains(candidate.name())) {
                continue;
            }
            boolean neededAsBaseline =
                    oldestFirst.stream()
                            .filter(r -> !r.finished())
                            .anyMatch(r -> r.baselines().contains(candidate.name()));
            if (neededAsBaseline) {
                continue;
            }
            delete.add(candidate.name());
            excess--;
        }
        return delete;
    }
}
