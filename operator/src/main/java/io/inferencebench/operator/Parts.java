package io.inferencebench.operator;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.crds.workorder.ProgressReport;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the runner pods reported through their part ConfigMaps, indexed by completion index. Parts
 * of an earlier incarnation of a run (other uid) are ignored.
 */
public final class Parts {

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * One runner pod's report.
     *
     * @param index completion index
     * @param state ready, running, done or failed
     * @param stagesDone stages with results
     * @param progress live progress, or {@code null}
     * @param error failure reason, or {@code null}
     * @param data all keys, for stage results
     */
    public record Part(
            int index,
            String state,
            int stagesDone,
            ProgressReport progress,
            String error,
            Map<String, String> data) {

        /**
         * This part's result of a stage.
         *
         * @param stage 1-based stage
         * @return the StageResult JSON, if written
         */
        public Optional<String> stageResult(int stage) {
            return Optional.ofNullable(data.get(PartReport.stageResultKey(stage)));
        }

        /**
         * How this part's pod warmed the endpoints before a stage (the first pod of a warm run).
         *
         * @param stage 1-based stage
         * @return {@link PartReport#WARMED} or why not, if reported
         */
        public Optional<String> stageWarmed(int stage) {
            return Optional.ofNullable(data.get(PartReport.stageWarmedKey(stage)));
        }

        /**
         * The model this part's pod sends requests with (given or discovered).
         *
         * @return the model, if the pod reported it
         */
        public Optional<String> model() {
            String model = data.get(PartReport.MODEL);
            return model == null || model.isBlank() ? Optional.empty() : Optional.of(model);
        }
    }

    private final Map<Integer, Part> byIndex;

    private Parts(Map<Integer, Part> byIndex) {
        this.byIndex = byIndex;
    }

    /**
     * Reads part ConfigMaps.
     *
     * @param configMaps ConfigMaps labelled with a part index
     * @param runUid uid of the current run; parts with another uid are skipped
     * @return the parts
     */
    public static Parts from(Collection<ConfigMap> configMaps, String runUid) {
        Map<Integer, Part> parts = new TreeMap<>();
        for (ConfigMap configMap : configMaps) {
            Map<String, String> data = configMap.getData() == null ? Map.of() : configMap.getData();
            String uid = data.get(PartReport.RUN_UID);
            if (uid != null && runUid != null && !uid.equals(runUid)) {
                continue;
            }
            String indexLabel =
                    configMap.getMetadata().getLabels() == null
                            ? null
                            : configMap.getMetadata().getLabels().get(Labels.PART_INDEX);
            int index;
            try {
                index = Integer.parseInt(indexLabel);
            } catch (NumberFormatException e) {
                continue;
            }
            ProgressReport progress = null;
            String progressText = data.get(PartReport.PROGRESS);
            if (progressText != null) {
                try {
                    progress = ProgressReport.fromJson(progressText);
                } catch (RuntimeException e) {
                    // A part of another runner version: no live numbers from it.
                    progress = null;
                }
            }
            parts.put(
                    index,
                    new Part(
                            index,
                            data.getOrDefault(PartReport.STATE, ""),
                            parseInt(data.get(PartReport.STAGES_DONE)),
                            progress,
                            data.get(PartReport.ERROR),
                            data));
        }
        return new Parts(parts);
    }

    private static int parseInt(String text) {
        try {
            return text == null ? 0 : Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** All parts, by index. */
    public Collection<Part> all() {
        return byIndex.values();
    }

    /**
     * Whether every one of {@code parallelism} pods reached at least the given state.
     *
     * @param parallelism number of runner pods
     * @return {@code true} when all are ready, running or done
     */
    public boolean allReady(int parallelism) {
        return count(
                        p ->
                                PartReport.STATE_READY.equals(p.state())
                                        || PartReport.STATE_RUNNING.equals(p.state())
                                        || PartReport.STATE_DONE.equals(p.state()))
                >= parallelism;
    }

    /**
     * Number of pods that wrote results for a stage.
     *
     * @param stage 1-based stage
     * @return the count
     */
    public long finishedStage(int stage) {
        return count(p -> p.stagesDone() >= stage);
    }

    /** The first failed part, if any. */
    public Optional<Part> failed() {
        return byIndex.values().stream()
                .filter(p -> PartReport.STATE_FAILED.equals(p.state()))
                .findFirst();
    }

    private long count(java.util.function.Predicate<Part> predicate) {
        return byIndex.values().stream().filter(predicate).count();
    }
}
