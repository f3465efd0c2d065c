package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.inferencebench.crds.workorder.PartLabels;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.crds.workorder.ProgressReport;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The operator reads runner parts through the typed contract of crds/workorder. */
class PartsTest {

    static ConfigMap part(int index, Map<String, String> data) {
        return new ConfigMapBuilder()
                .withNewMetadata()
                .withName("r-part-" + index)
                .addToLabels(PartLabels.PART_INDEX, Integer.toString(index))
                .endMetadata()
                .withData(data)
                .build();
    }

    @Test
    void progressModelAndStateAreReadAsTheRunnerWroteThem() {
        ProgressReport written =
                new ProgressReport(2, 40, 3, 5, 12.5, 81.25, "2026-12-01T00:00:00Z");
        Parts parts =
                Parts.from(
                        List.of(
                                part(
                                        0,
                                        Map.of(
                                                PartReport.STATE,
                                                PartReport.STATE_RUNNING,
                                                PartReport.RUN_UID,
                                                "uid",
                                                PartReport.MODEL,
                                                "acme/m-7b",
                                                PartReport.PROGRESS,
                                                written.toJson())),
                                part(1, Map.of(PartReport.STATE, PartReport.STATE_READY)),
                                part(2, Map.of(PartReport.RUN_UID, "other-run"))),
                        "uid");
        assertThat(parts.all()).hasSize(2);
        Parts.Part first = parts.all().iterator().next();
        assertThat(first.progress()).isEqualTo(written);
        assertThat(first.model()).contains("acme/m-7b");
        assertThat(parts.allReady(2)).isTrue();
        // A progress value that is not a report (another runner version) gives no numbers.
        Parts odd =
                Parts.from(
                        List.of(part(0, Map.of(PartReport.PROGRESS, "{\"stage\": \"x\"}"))), null);
        assertThat(odd.all().iterator().next().progress()).isNull();
    }
}
