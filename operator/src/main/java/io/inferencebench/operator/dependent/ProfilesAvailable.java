package io.inferencebench.operator.dependent;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;

/** Precondition of the output ConfigMap: at least one stage profile is in status. */
public class ProfilesAvailable implements Condition<Object, BenchmarkRun> {

    @Override
    public boolean isMet(
            DependentResource<Object, BenchmarkRun> dependentResource,
            BenchmarkRun run,
            Context<BenchmarkRun> context) {
        return run.getStatus() != null
                && run.getStatus().getProfiles() != null
                && !run.getStatus().getProfiles().isEmpty();
    }
}
