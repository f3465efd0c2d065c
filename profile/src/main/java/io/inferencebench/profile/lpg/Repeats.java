package io.inferencebench.profile.lpg;

import java.util.Locale;

/**
 * Which repeat a stage is, when a run's stages run several times over ({@code load.repeats}, {@code
 * --repeats}): the profile's {@code dimensions.repeat}, e.g. {@code "2/3"}, on both roads.
 */
public final class Repeats {

    /** The profile dimension that names a stage's repeat. */
    public static final String DIMENSION = "repeat";

    private Repeats() {}

    /**
     * {@code "r/R"} of a stage, or {@code null} without repeats.
     *
     * @param stageIndex the stage's 0-based index in the run
     * @param stages the run's stages, all repeats together
     * @param repeats how many times over the list runs
     */
    public static String label(int stageIndex, int stages, int repeats) {
        if (repeats <= 1 || stages < repeats) {
            return null;
        }
        int once = stages / repeats;
        return String.format(Locale.ROOT, "%d/%d", stageIndex / once + 1, repeats);
    }
}
