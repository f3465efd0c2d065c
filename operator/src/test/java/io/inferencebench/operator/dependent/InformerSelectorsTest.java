package io.inferencebench.operator.dependent;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.operator.Labels;
import io.inferencebench.operator.TestRuns;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Each dependent's informer selects what that dependent creates, and nothing of the others': a
 * resource its informer does not see is created again on every reconcile, and one it sees of
 * another kind is taken for its own.
 */
class InformerSelectorsTest {

    @Test
    void eachDependentsInformerSelectsItsOwnResourceOnly() {
        BenchmarkRun run = TestRuns.sweep();
        String control = selector(ControlConfigMapDependent.class);
        String workOrder = selector(RunnerWorkOrderDependent.class);
        String job = selector(RunnerJobDependent.class);

        assertThat(control).isEqualTo(Labels.CONTROL_SELECTOR);
        assertThat(workOrder).isEqualTo(Labels.WORK_ORDER_SELECTOR);
        assertThat(job).isEqualTo(Labels.RUNNER_SELECTOR);

        HasMetadata controlMap = ControlConfigMapDependent.desired(run);
        HasMetadata workOrderMap = RunnerWorkOrderDependent.desired(run);
        HasMetadata runnerJob = RunnerJobDependent.desired(run, DesiredStateTest.DEFAULTS);
        assertThat(selects(control, controlMap)).isTrue();
        assertThat(selects(control, workOrderMap)).isFalse();
        assertThat(selects(workOrder, workOrderMap)).isTrue();
        assertThat(selects(workOrder, controlMap)).isFalse();
        assertThat(selects(job, runnerJob)).isTrue();

        // A runner pod's part ConfigMap carries the runner's labels and its index: not a work
        // order.
        Map<String, String> part = new HashMap<>(workOrderMap.getMetadata().getLabels());
        part.put(Labels.PART_INDEX, "0");
        assertThat(selects(workOrder, part)).isFalse();
        assertThat(selects(workOrder, workOrderMap.getMetadata().getLabels())).isTrue();
    }

    private static String selector(Class<?> dependent) {
        return dependent.getAnnotation(KubernetesDependent.class).informer().labelSelector();
    }

    private static boolean selects(String selector, HasMetadata resource) {
        return selects(selector, resource.getMetadata().getLabels());
    }

    /** The equality ({@code k=v}) and absence ({@code !k}) terms of a label selector, all met. */
    private static boolean selects(String selector, Map<String, String> labels) {
        for (String term : selector.split(",")) {
            if (term.startsWith("!")) {
                if (labels.containsKey(term.substring(1))) {
                    return false;
                }
            } else {
                String[] kv = term.split("=", 2);
                if (!kv[1].equals(labels.get(kv[0]))) {
                    return false;
                }
            }
        }
        return true;
    }
}
