package io.inferencebench.runner.dataset;

import java.io.IOException;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One way of making synthetic prompts of chosen token lengths (see {@link RandomDataset} for the
 * ways and how exact each is): runs of tokens, and prompts made of one or more runs in order.
 */
public interface SyntheticTokens {

    /**
     * A run of tokens: ids where prompts are sent as ids, else text.
     *
     * @param tokens its length as this way knows it (exact, or the approximation it labels)
     */
    record Run(String text, int[] ids, int tokens) {}

    /** A run of {@code n} tokens drawn from {@code random}. */
    Run make(int n, SplittableRandom random) throws IOException, InterruptedException;

    /**
     * A prompt of the runs in order. One run keeps its own length; id runs are concatenated, exact
     * by construction; text runs are joined with a space, and where a tokenizer counts them the end
     * of the joined text is trimmed or topped up (from {@code random}) until it has the runs' total
     * (a merge at a seam can change the count), the start left as it is.
     */
    Prompt prompt(List<Run> runs, int maxTokens, SplittableRandom random)
            throws IOException, InterruptedException;

    /** Id runs concatenated: the length is the sum, exact. */
    static int[] concat(List<Run> runs) {
        int n = 0;
        for (Run r : runs) {
            n += r.ids().length;
        }
        int[] ids = new int[n];
        int at = 0;
        for (Run r : runs) {
            System.arraycopy(r.ids(), 0, ids, at, r.ids().length);
            at += r.ids().length;
        }
        return ids;
    }

    /** Text runs joined with a space. */
    static String join(List<Run> runs) {
        StringBuilder sb = new StringBuilder();
        for (Run r : runs) {
            if (!sb.isEmpty()) {
                sb.append(' ');
            }
            sb.append(r.text());
        }
        return sb.toString();
    }
}
