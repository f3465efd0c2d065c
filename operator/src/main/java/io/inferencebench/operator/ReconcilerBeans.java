package io.inferencebench.operator;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;

/**
 * What {@link BenchmarkRunReconciler}'s one constructor takes that Quarkus does not provide: the
 * wall clock, and the active-run cap read from configuration once (a bad value stops the operator
 * at start, naming the variable).
 */
public class ReconcilerBeans {

    @Produces
    @Singleton
    Clock clock() {
        return Clock.systemUTC();
    }

    @Produces
    @Singleton
    RunAdmission runAdmission() {
        return RunAdmission.fromConfig();
    }
}
