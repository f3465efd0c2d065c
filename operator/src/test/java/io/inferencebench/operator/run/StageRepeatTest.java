package io.inferencebench.operator.run;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.operator.TestRuns;
import org.junit.jupiter.api.Test;

/** A repeated stage's profile says which repeat it is, as the command line's do. */
class StageRepeatTest {

    private static ObjectNode profile() {
        ObjectNode profile = new ObjectMapper().createObjectNode();
        profile.putObject("dimensions").put("stage", "1");
        return profile;
    }

    @Test
    void eachStageOfARepeatedSweepNamesItsRepeat() {
        BenchmarkRun run = TestRuns.sweep(); // rates 5 and 10
        run.getSpec().getLoad().setRepeats(3);
        String[] expected = {"1/3", "1/3", "2/3", "2/3", "3/3", "3/3"};
        for (int stage = 1; stage <= 6; stage++) {
            ObjectNode profile = profile();
            StageAssembly.markRepeat(run, stage, profile);
            assertThat(profile.at("/dimensions/repeat").asText())
                    .as("stage %d", stage)
                    .isEqualTo(expected[stage - 1]);
        }
    }

    @Test
    void withoutRepeatsNothingIsAdded() {
        ObjectNode profile = profile();
        StageAssembly.markRepeat(TestRuns.sweep(), 2, profile);
        assertThat(profile.path("dimensions").has("repeat")).isFalse();
    }
}
