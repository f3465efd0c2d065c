package io.inferencebench.runner.engine;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * A stage in a flight recording, from its schedule's anchor to its last result: profiles and
 * compilation or GC events can be placed inside or outside the measured window. Costs nothing when
 * no recording runs.
 */
@Name("io.inferencebench.Stage")
@Label("Load stage")
@Category("InferenceBench")
@Description("One load stage of the runner, from the schedule's anchor to its last result")
final class StageEvent extends jdk.jfr.Event {

    @Label("Stage")
    @Description("1-based stage number; 0 for the warm-up")
    int stage;

    @Label("Requested rate")
    @Description("req/s; NaN for a closed-loop stage, Infinity for all at once")
    double requestRate;

    @Label("Kind")
    @Description(
            "measured, warm-up (discarded requests before the stages) or self-warm-up (the runner's own JIT warm-up against a local server)")
    String kind;

    @Label("Sent")
    long sent;
}
