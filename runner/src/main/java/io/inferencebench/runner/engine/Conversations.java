package io.inferencebench.runner.engine;

import io.inferencebench.crds.v1alpha1.ConversationSpec;
import java.time.Duration;
import java.util.SplittableRandom;

/**
 * The prompts of a run as conversations: sessions of {@code turns} prompts each, laid out session
 * by session (session s's turn t is prompt {@code s * turns + t}), every turn's prompt carrying the
 * history of the turns before it. A session sends its next turn only after the previous one's
 * reply, and after a think time.
 *
 * @param turns prompts (requests) per session, at least 1
 * @param thinkTime the pause between a reply and the session's next request: every pause, or the
 *     mean of exponentially drawn ones
 * @param exponential whether pauses are drawn (exponential, mean {@code thinkTime}) rather than
 *     fixed
 */
public record Conversations(int turns, Duration thinkTime, boolean exponential) {

    public Conversations {
        if (turns < 1) {
            throw new IllegalArgumentException("a session needs at least one turn, got " + turns);
        }
        if (thinkTime.isNegative()) {
            throw new IllegalArgumentException("a think time must not be negative");
        }
    }

    /** The shape as profiles name it: {@code turns=5 think_time=2s fixed}. */
    public String describe() {
        return ConversationSpec.describe(turns, thinkTime, exponential);
    }

    /** Sessions in {@code prompts} prompts laid out session by session. */
    public int sessions(int prompts) {
        return prompts / turns;
    }

    /**
     * The pause before turn {@code turn} (1-based: the pause before the second turn is turn 1's) of
     * session {@code session}: the think time, or a draw from the run's seed that depends only on
     * the session and the turn, so a rerun pauses alike whichever event loop sends it.
     */
    public long thinkNanos(long seed, long session, int turn) {
        long mean = thinkTime.toNanos();
        if (!exponential || mean == 0) {
            return mean;
        }
        SplittableRandom random =
                new SplittableRandom(seed * 1_000_003L + session * 1_009L + turn).split();
        return (long) (-Math.log(1.0 - random.nextDouble()) * mean);
    }
}
