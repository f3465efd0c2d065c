package io.inferencebench.operator;

import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/** The Lease replicas compete for; only its holder reconciles. */
public class LeaderElection {

    @Produces
    @ApplicationScoped
    LeaderElectionConfiguration leaderElection(
            @ConfigProperty(
                            name = "inferencebench.leader-election.lease-name",
                            defaultValue = "inferencebench-operator-lease")
                    String leaseName) {
        return new LeaderElectionConfiguration(leaseName);
    }
}
