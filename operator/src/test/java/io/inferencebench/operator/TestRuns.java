package io.inferencebench.operator;

import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.ServiceTarget;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import java.util.List;

/** Small BenchmarkRuns for unit tests. */
public final class TestRuns {

    private TestRuns() {}

    /** A run against Service vllm:8000 in namespace bench, a 2-rate sweep of 100 prompts each. */
    public static BenchmarkRun sweep() {
        BenchmarkRun run = new BenchmarkRun();
        run.getMetadata().setName("sweep");
        run.getMetadata().setNamespace("bench");
        run.getMetadata().setUid("uid-1");
        run.getMetadata().setGeneration(1L);
        run.getMetadata().setCreationTimestamp("2026-11-29T12:00:00Z");
        BenchmarkRunSpec spec = new BenchmarkRunSpec();
        TargetSpec target = new TargetSpec();
        target.setService(new ServiceTarget("vllm", 8000));
        target.setModel("google/gemma-7b");
        spec.setTarget(target);
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(5.0, 10.0));
        load.setNumPrompts(100);
        spec.setLoad(load);
        run.setSpec(spec);
        return run;
    }
}
