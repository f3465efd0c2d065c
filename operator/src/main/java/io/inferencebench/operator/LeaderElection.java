package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.Durations;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfigurationBuilder;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import java.time.Duration;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The Lease replicas compete for; only its holder reconciles.
 *
 * <p>Timings (JOSDK's defaults are 15 s / 10 s / 2 s): the leader renews every retry period; when
 * no renewal has succeeded for the renew deadline it stops leading, and JOSDK then exits the
 * process. A standby may take the Lease only a lease duration after it last saw it renewed. On an
 * overloaded node (CPU starved by benchmarks, long GC pauses, a slow API server) one renewal can
 * take longer than 10 s, and the leader would exit while it still holds the Lease and no one else
 * could take it yet: a restart for nothing, with the scrapes and barriers of every run lost for
 * that while. So the leader keeps trying for 50 s of a 60 s lease: it exits only shortly before a
 * standby could take over. The 10 s between the two cover the difference between the two replicas'
 * clocks over a minute and the exit itself, so two leaders never overlap. The price is failover: a
 * crashed leader's Lease is taken over after up to 60 s instead of 15 s, which a run survives
 * (runner pods keep their schedule; the scraper's checkpoint keeps the stage's samples). Renewing
 * every 5 s gives ten attempts within the deadline.
 */
public class LeaderElection {

    static final Duration LEASE_DURATION = Duration.ofSeconds(60);
    static final Duration RENEW_DEADLINE = Duration.ofSeconds(50);
    static final Duration RETRY_PERIOD = Duration.ofSeconds(5);

    /** fabric8's LeaderElector jitters the retry period by up to this factor. */
    static final double JITTER_FACTOR = 1.2;

    @Produces
    @ApplicationScoped
    LeaderElectionConfiguration leaderElection(
            @ConfigProperty(
                            name = "inferencebench.leader-election.lease-name",
                            defaultValue = "inferencebench-operator-lease")
                    String leaseName,
            @ConfigProperty(
                            name = "inferencebench.leader-election.lease-duration",
                            defaultValue = "60s")
                    String leaseDuration,
            @ConfigProperty(
                            name = "inferencebench.leader-election.renew-deadline",
                            defaultValue = "50s")
                    String renewDeadline,
            @ConfigProperty(
                            name = "inferencebench.leader-election.retry-period",
                            defaultValue = "5s")
                    String retryPeriod) {
        return configuration(
                leaseName,
                Durations.parse(leaseDuration),
                Durations.parse(renewDeadline),
                Durations.parse(retryPeriod));
    }

    /**
     * The configuration, refusing timings under which a leader could act after a standby took over,
     * or give up before its first retry.
     *
     * @throws IllegalArgumentException naming the property when the timings do not nest
     */
    static LeaderElectionConfiguration configuration(
            String leaseName, Duration leaseDuration, Duration renewDeadline, Duration retry) {
        if (renewDeadline.compareTo(leaseDuration) >= 0) {
            throw new IllegalArgumentException(
                    "inferencebench.leader-election.renew-deadline ("
                            + renewDeadline
                            + ") must be shorter than lease-duration ("
                            + leaseDuration
                            + "): a leader must stop before a standby may take the lease");
        }
        if (renewDeadline.toMillis() <= retry.toMillis() * JITTER_FACTOR) {
            throw new IllegalArgumentException(
                    "inferencebench.leader-election.renew-deadline ("
                            + renewDeadline
                            + ") must exceed "
                            + JITTER_FACTOR
                            + " x retry-period ("
                            + retry
                            + "): a leader must get more than one renewal attempt");
        }
        return LeaderElectionConfigurationBuilder.aLeaderElectionConfiguration(leaseName)
                .withLeaseDuration(leaseDuration)
                .withRenewDeadline(renewDeadline)
                .withRetryPeriod(retry)
                .build();
    }
}
