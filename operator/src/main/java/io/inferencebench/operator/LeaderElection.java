package io.inferencebench.operator;

import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import java.time.Duration;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The Lease replicas compete for; only its holder reconciles.
 *
 * <p>The timings are longer than client-go's 15 s / 10 s / 2 s on purpose: a leader that cannot
 * renew within the renew deadline exits, and on an overloaded node (or while the API server is
 * slow) ten seconds without a successful renewal happen while the leader still holds the lease and
 * nobody else could take it. A benchmark operator loses nothing by a slower failover (runner pods
 * keep sending load without it, and a new leader picks the run up from its status), but an exit
 * mid-stage costs the stage's server-metric scrapes until the replacement starts.
 */
public class LeaderElection {

    /** client-go's jitter factor: retries happen up to 1.2 retry periods apart. */
    private static final double JITTER_FACTOR = 1.2;

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
                    Duration leaseDuration,
            @ConfigProperty(
                            name = "inferencebench.leader-election.renew-deadline",
                            defaultValue = "40s")
                    Duration renewDeadline,
            @ConfigProperty(
                            name = "inferencebench.leader-election.retry-period",
                            defaultValue = "4s")
                    Duration retryPeriod) {
        String problem = timingProblem(leaseDuration, renewDeadline, retryPeriod);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        return new LeaderElectionConfiguration(
                leaseName,
                null,
                leaseDuration,
                renewDeadline,
                retryPeriod,
                identity(System.getenv("HOSTNAME")),
                null,
                true);
    }

    /**
     * This process's name in the Lease: the pod name (HOSTNAME) plus a random suffix, as
     * kube-controller-manager does. With the pod name alone, a container that kubelet restarted
     * after a crash (same pod, same name) finds "its own" Lease and renews it at once, so the Lease
     * never shows that a leader died and the standby waits for nothing; with a suffix each process
     * is a new candidate and the Lease records every change of leader ({@code holderIdentity},
     * {@code acquireTime}, {@code leaseTransitions}).
     */
    static String identity(String hostname) {
        String host = hostname == null || hostname.isBlank() ? "inferencebench-operator" : hostname;
        return host + "_" + java.util.UUID.randomUUID();
    }

    /**
     * Why the timings cannot work together, or {@code null} when they can: the lease must outlast
     * the renew deadline (or a standby could take it while the leader still acts on it), and the
     * deadline must leave room for more than one retry.
     */
    static String timingProblem(Duration leaseDuration, Duration renewDeadline, Duration retry) {
        if (retry.isZero() || retry.isNegative()) {
            return "inferencebench.leader-election.retry-period must be positive, got " + retry;
        }
        if (leaseDuration.compareTo(renewDeadline) <= 0) {
            return "inferencebench.leader-election.lease-duration ("
                    + leaseDuration
                    + ") must be longer than inferencebench.leader-election.renew-deadline ("
                    + renewDeadline
                    + ")";
        }
        if (renewDeadline.toMillis() <= JITTER_FACTOR * retry.toMillis()) {
            return "inferencebench.leader-election.renew-deadline ("
                    + renewDeadline
                    + ") must be longer than 1.2 x inferencebench.leader-election.retry-period ("
                    + retry
                    + ")";
        }
        return null;
    }
}
