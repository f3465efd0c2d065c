package io.inferencebench.runner.pod;

import io.inferencebench.crds.v1alpha1.PrefixCacheSpec;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.runner.session.PrefixWarmup;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The first runner pod's step before each barrier of a run whose stages start warm ({@code
 * workload.prefixCache.state: warm}): the operator reset the endpoints and published them with the
 * barrier ({@link RunnerWorkOrder#stageWarmKey}); this pod, which holds the workload's prompts,
 * sends each shared prefix to each of them before the barrier and reports how it went ({@link
 * PartReport#stageWarmedKey}). One pod warms so the servers see each prefix once per endpoint
 * however many pods the run has.
 */
final class PodCacheWarming {

    private final PrefixWarmup warmup;
    private final Clock clock;

    PodCacheWarming(PrefixWarmup warmup, Clock clock) {
        this.warmup = warmup;
        this.clock = clock;
    }

    /** Whether pod {@code index} warms the endpoints before each stage of {@code order}. */
    static boolean warms(RunnerWorkOrder order, int index) {
        PrefixCacheSpec declared = order.workload().getPrefixCache();
        return index == 0 && declared != null && declared.getState() == PrefixCacheSpec.State.WARM;
    }

    /**
     * Warms the endpoints published for {@code stage} before its barrier.
     *
     * @param control the control data published with the stage's barrier
     * @param start the stage's barrier
     * @return {@link PartReport#WARMED}, or why the stage does not start warm
     */
    String beforeBarrier(Map<String, String> control, int stage, Instant start)
            throws InterruptedException {
        String published = control.get(RunnerWorkOrder.stageWarmKey(stage));
        if (published == null || published.isBlank()) {
            return "the operator published no endpoint to warm before stage " + stage;
        }
        List<String> targets =
                Arrays.stream(published.split(","))
                        .map(String::strip)
                        .filter(t -> !t.isEmpty())
                        .toList();
        Instant began = clock.instant();
        PrefixWarmup.Round round = warmup.warmAll(targets);
        Instant ended = clock.instant();
        if (!round.failures().isEmpty()) {
            return round.describeFailures();
        }
        if (!ended.isBefore(start)) {
            return String.format(
                    Locale.ROOT,
                    "the warming of %d endpoint(s) with %d prefixes took %d ms and ended %d ms"
                            + " after the stage's barrier",
                    targets.size(),
                    warmup.prefixes(),
                    Duration.between(began, ended).toMillis(),
                    Duration.between(start, ended).toMillis());
        }
        return PartReport.WARMED;
    }

    /** How many prefixes each endpoint is sent. */
    int prefixes() {
        return warmup.prefixes();
    }
}
