package io.inferencebench.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class LeaderElectionTest {

    @Test
    void theDefaultsTolerateSlowRenewalsAndStillNest() {
        LeaderElectionConfiguration c =
                new LeaderElection().leaderElection("lease", "60s", "50s", "5s");
        assertThat(c.getLeaseName()).isEqualTo("lease");
        assertThat(c.getLeaseDuration()).isEqualTo(LeaderElection.LEASE_DURATION);
        assertThat(c.getRenewDeadline()).isEqualTo(LeaderElection.RENEW_DEADLINE);
        assertThat(c.getRetryPeriod()).isEqualTo(LeaderElection.RETRY_PERIOD);
        // longer than JOSDK's 10 s, within which an overloaded node's renewal can fail
        assertThat(c.getRenewDeadline())
                .isGreaterThan(LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE);
        assertThat(c.isExitOnStopLeading()).isTrue();
    }

    @Test
    void timingsThatCouldOverlapTwoLeadersAreRefused() {
        assertThatThrownBy(
                        () ->
                                LeaderElection.configuration(
                                        "l",
                                        Duration.ofSeconds(30),
                                        Duration.ofSeconds(30),
                                        Duration.ofSeconds(2)))
                .hasMessageContaining("renew-deadline")
                .hasMessageContaining("shorter than lease-duration");
        assertThatThrownBy(
                        () ->
                                LeaderElection.configuration(
                                        "l",
                                        Duration.ofSeconds(30),
                                        Duration.ofSeconds(6),
                                        Duration.ofSeconds(5)))
                .hasMessageContaining("more than one renewal attempt");
    }
}
