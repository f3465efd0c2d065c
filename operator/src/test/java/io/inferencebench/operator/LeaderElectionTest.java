package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LeaderElectionTest {

    @Test
    void theDefaultsWorkTogether() {
        assertThat(
                        LeaderElection.timingProblem(
                                Duration.ofSeconds(60),
                                Duration.ofSeconds(40),
                                Duration.ofSeconds(4)))
                .isNull();
    }

    @Test
    void aLeaseNoLongerThanTheRenewDeadlineIsRefusedNamingBothProperties() {
        assertThat(
                        LeaderElection.timingProblem(
                                Duration.ofSeconds(30),
                                Duration.ofSeconds(30),
                                Duration.ofSeconds(2)))
                .contains("lease-duration (PT30S)")
                .contains("renew-deadline (PT30S)");
    }

    @Test
    void aRenewDeadlineWithoutRoomForRetriesIsRefused() {
        assertThat(
                        LeaderElection.timingProblem(
                                Duration.ofSeconds(60),
                                Duration.ofSeconds(5),
                                Duration.ofSeconds(5)))
                .contains("renew-deadline (PT5S)")
                .contains("retry-period (PT5S)");
        assertThat(
                        LeaderElection.timingProblem(
                                Duration.ofSeconds(60), Duration.ofSeconds(40), Duration.ZERO))
                .contains("retry-period must be positive");
    }

    @Test
    void eachProcessIsItsOwnCandidateNamedAfterItsPod() {
        String first = LeaderElection.identity("inferencebench-operator-7d9f-abcde");
        String again = LeaderElection.identity("inferencebench-operator-7d9f-abcde");
        assertThat(first).startsWith("inferencebench-operator-7d9f-abcde_").isNotEqualTo(again);
        assertThat(LeaderElection.identity(null)).startsWith("inferencebench-operator_");
    }
}
