package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.crds.workorder.ProgressReport;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProgressReportTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void serialisesTheKeysTheOperatorReads() throws Exception {
        ProgressReport report =
                new ProgressReport(2, 40, 3, 5, 12.5, 81.25, "2026-01-01T00:00:00Z");
        JsonNode node = JSON.readTree(report.toJson());
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        assertThat(names)
                .containsExactly(
                        "stage",
                        "completed",
                        "failed",
                        "inFlight",
                        "achievedRate",
                        "ttftP50Ms",
                        "updatedAt");
        assertThat(node.get("stage").asInt()).isEqualTo(2);
        assertThat(node.get("completed").asLong()).isEqualTo(40);
        assertThat(node.get("failed").asLong()).isEqualTo(3);
        assertThat(node.get("inFlight").asLong()).isEqualTo(5);
        assertThat(node.get("achievedRate").asDouble()).isEqualTo(12.5);
        assertThat(node.get("ttftP50Ms").asDouble()).isEqualTo(81.25);
        assertThat(node.get("updatedAt").asText()).isEqualTo("2026-01-01T00:00:00Z");
        assertThat(ProgressReport.fromJson(report.toJson())).isEqualTo(report);
    }

    @Test
    void neverWritesNonFiniteNumbers() {
        String json =
                new ProgressReport(1, 0, 0, 0, Double.NaN, Double.POSITIVE_INFINITY, "t").toJson();
        assertThat(json).doesNotContain("NaN").doesNotContain("Infinity");
        assertThat(json).doesNotContain("ttftP50Ms").contains("\"achievedRate\":0.0");
    }

    @Test
    void trackerReportsZerosBeforeTheStageStarts() {
        Clock clock = Clock.fixed(Instant.parse("2026-03-04T05:06:07Z"), ZoneOffset.UTC);
        ProgressTracker tracker = new ProgressTracker(clock);
        tracker.beginStage(3);
        ProgressReport r = tracker.snapshot();
        assertThat(r.stage()).isEqualTo(3);
        assertThat(r.completed()).isZero();
        assertThat(r.ttftP50Ms()).isNull();
        assertThat(r.updatedAt()).isEqualTo("2026-03-04T05:06:07Z");
    }

    @Test
    void medianOfOddAndEvenWindows() {
        assertThat(ProgressTracker.median(new double[] {5, 1, 3})).isEqualTo(3);
        assertThat(ProgressTracker.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
    }
}
