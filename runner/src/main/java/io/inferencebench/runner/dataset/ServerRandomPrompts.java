package io.inferencebench.runner.dataset;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * Synthetic prompts built with the target's own tokenizer ({@link ServerTokenizer}) when no local
 * one is given. The ids come from the server's encoding of a fixed English text, so every id is one
 * the model has whatever its vocabulary size; prompts draw from them at random.
 *
 * <p>Token-id prompts (completions API) are exact by construction. Text prompts are decoded by the
 * server and re-encoded until the server counts exactly the requested length (merges at the seams
 * can change the count, as with a local tokenizer); both are labelled {@value #SOURCE} - exact, as
 * counted by the server's tokenizer before any chat template.
 */
public final class ServerRandomPrompts {

    /** The {@link Prompt#inputSource()} of these prompts. */
    public static final String SOURCE = "server_tokenizer";

    private static final int ROUNDS = 16;

    private ServerRandomPrompts() {}

    /** The distinct ids of the server's encoding of the common-word text, in id order. */
    static int[] pool(ServerTokenizer server) throws IOException, InterruptedException {
        int[] ids = server.tokenize(String.join(" ", RandomDataset.WORDS) + ".");
        TreeSet<Integer> distinct = new TreeSet<>();
        for (int id : ids) {
            distinct.add(id);
        }
        if (distinct.size() < 2) {
            throw new IOException(
                    server.id() + " encodes a text of 170 words as " + ids.length + " token(s)");
        }
        return distinct.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The server's way of making prompts: its ids, or text it counts exactly. */
    public static SyntheticTokens tokens(ServerTokenizer server, boolean tokenIds)
            throws IOException, InterruptedException {
        int[] pool = pool(server);
        return tokenIds ? new Ids(pool) : new Text(server, pool);
    }

    private static int[] draw(int[] pool, int n, SplittableRandom random) {
        int[] ids = new int[n];
        for (int k = 0; k < n; k++) {
            ids[k] = pool[random.nextInt(pool.length)];
        }
        return ids;
    }

    /** Ids of the server's own encoding. */
    private record Ids(int[] pool) implements SyntheticTokens {
        @Override
        public Run make(int n, SplittableRandom random) {
            return new Run(null, draw(pool, n, random), n);
        }

        @Override
        public Prompt prompt(List<Run> runs, int maxTokens, SplittableRandom random) {
            int[] ids = SyntheticTokens.concat(runs);
            return new Prompt(null, ids, null, ids.length, maxTokens, SOURCE);
        }
    }

    /** Text the server counts exactly. */
    private record Text(ServerTokenizer server, int[] pool) implements SyntheticTokens {
        @Override
        public Run make(int n, SplittableRandom random) throws IOException, InterruptedException {
            return fit(server, pool, server.detokenize(draw(pool, n, random)), n, random);
        }

        @Override
        public Prompt prompt(List<Run> runs, int maxTokens, SplittableRandom random)
                throws IOException, InterruptedException {
            Run whole =
                    runs.size() == 1
                            ? runs.get(0)
                            : fit(
                                    server,
                                    pool,
                                    SyntheticTokens.join(runs),
                                    runs.stream().mapToInt(Run::tokens).sum(),
                                    random);
            return new Prompt(whole.text(), null, null, whole.tokens(), maxTokens, SOURCE);
        }
    }

    /**
     * Trims or tops up the end of {@code text} until the server counts exactly {@code target}
     * tokens; the start, and so a shared prefix, stays as it is.
     */
    private static SyntheticTokens.Run fit(
            ServerTokenizer server, int[] pool, String text, int target, SplittableRandom random)
            throws IOException, InterruptedException {
        for (int round = 0; round < ROUNDS; round++) {
            int[] encoded = server.tokenize(text);
            if (encoded.length == target) {
                return new SyntheticTokens.Run(text, null, target);
            }
            int[] next = Arrays.copyOf(encoded, target);
            for (int k = encoded.length; k < target; k++) {
                next[k] = pool[random.nextInt(pool.length)];
            }
            text = server.detokenize(next);
        }
        // Still off after trimming and topping up: say what the server counts.
        return new SyntheticTokens.Run(text, null, server.tokenize(text).length);
    }
}
