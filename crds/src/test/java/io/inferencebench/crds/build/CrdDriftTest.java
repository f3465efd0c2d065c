package io.inferencebench.crds.build;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The committed CRD copies must equal what the Java model generates. Regenerate them with {@code
 * ./mvnw -pl crds test -Dtest=CrdDriftTest -Dinferencebench.crd.update=true}.
 */
class CrdDriftTest {

    static final String UPDATE_PROPERTY = "inferencebench.crd.update";

    /** Paths relative to the crds module directory. */
    static final List<Path> COMMITTED =
            List.of(
                    Path.of("generated", CrdGeneration.FILE_NAME),
                    Path.of("..", "config", "crd", "bases", "inferencebench.io_benchmarkruns.yaml"),
                    // The Helm chart installs this copy (charts/inferencebench/crds/).
                    Path.of(
                            "..",
                            "charts",
                            "inferencebench",
                            "crds",
                            "benchmarkruns.inferencebench.io.yaml"));

    static final List<Path> COMMITTED_SCHEDULE =
            List.of(
                    Path.of("generated", CrdGeneration.SCHEDULE_FILE_NAME),
                    Path.of(
                            "..",
                            "config",
                            "crd",
                            "bases",
                            "inferencebench.io_benchmarkschedules.yaml"),
                    Path.of(
                            "..",
                            "charts",
                            "inferencebench",
                            "crds",
                            "benchmarkschedules.inferencebench.io.yaml"));

    @Test
    void committedCrdCopiesMatchTheJavaModel() throws IOException {
        check(COMMITTED, CrdGeneration.generate());
    }

    @Test
    void committedScheduleCrdCopiesMatchTheJavaModel() throws IOException {
        check(
                COMMITTED_SCHEDULE,
                CrdGeneration.generateAll().get(CrdGeneration.SCHEDULE_FILE_NAME));
    }

    private static void check(List<Path> copies, String generated) throws IOException {
        boolean update = Boolean.getBoolean(UPDATE_PROPERTY);
        for (Path committed : copies) {
            if (update) {
                Files.createDirectories(committed.toAbsolutePath().getParent());
                Files.writeString(committed, generated);
            }
            assertThat(committed)
                    .as(
                            "%s is missing or out of date with the Java model in crds/. Regenerate"
                                    + " with: ./mvnw -pl crds test -Dtest=CrdDriftTest -D%s=true",
                            committed.normalize(), UPDATE_PROPERTY)
                    .exists();
            assertThat(Files.readString(committed))
                    .as(
                            "%s is out of date with the Java model in crds/. Regenerate with:"
                                    + " ./mvnw -pl crds test -Dtest=CrdDriftTest -D%s=true",
                            committed.normalize(), UPDATE_PROPERTY)
                    .isEqualTo(generated);
        }
    }

    @Test
    void generatedCrdListsPrinterColumnsInReadingOrder() {
        String generated = CrdGeneration.generate();
        int previous = -1;
        for (String column : CrdGeneration.COLUMN_ORDER) {
            int at = generated.indexOf("name: \"" + column + "\"");
            assertThat(at).as("column %s", column).isGreaterThan(previous);
            previous = at;
        }
        String schedule = CrdGeneration.generateAll().get(CrdGeneration.SCHEDULE_FILE_NAME);
        previous = -1;
        for (String column : CrdGeneration.SCHEDULE_COLUMN_ORDER) {
            int at = schedule.indexOf("name: \"" + column + "\"");
            assertThat(at).as("schedule column %s", column).isGreaterThan(previous);
            previous = at;
        }
    }

    @Test
    void scheduleTemplateKeepsFieldRulesButNotTheRunsImmutability() {
        String schedule = CrdGeneration.generateAll().get(CrdGeneration.SCHEDULE_FILE_NAME);
        assertThat(schedule).doesNotContain("oldSelf");
        assertThat(schedule).contains("exactly one of requestRate or concurrency");
    }
}
