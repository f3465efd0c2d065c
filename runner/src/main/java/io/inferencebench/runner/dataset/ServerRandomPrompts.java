package io.inferencebench.runner.dataset;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * The random dataset built with the target's own tokenizer ({@link ServerTokenizer}) when no local
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

    public static List<Prompt> generate(
            int count,
            LengthDistribution input,
            LengthDistribution output,
            boolean tokenIds,
            ServerTokenizer server,
            long seed)
            throws IOException, InterruptedException {
        int[] pool = pool(server);
        SplittableRandom random = new SplittableRandom(seed);
        List<Prompt> prompts = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int inLen = input.sample(random);
            int outLen = output.sample(random);
            int[] ids = draw(pool, inLen, random);
            if (tokenIds) {
                prompts.add(new Prompt(null, ids, null, inLen, outLen, SOURCE));
            } else {
                prompts.add(exactText(server, pool, ids, inLen, outLen, random));
            }
        }
        return prompts;
    }

    private static int[] draw(int[] pool, int n, SplittableRandom random) {
        int[] ids = new int[n];
        for (int k = 0; k < n; k++) {
            ids[k] = pool[random.nextInt(pool.length)];
        }
        return ids;
    }

    private static Prompt exactText(
            ServerTokenizer server,
            int[] pool,
            int[] ids,
            int target,
            int outLen,
            SplittableRandom random)
            throws IOException, InterruptedException {
        String text = server.detokenize(ids);
        int measured = -1;
        for (int round = 0; round < ROUNDS; round++) {
            int[] encoded = server.tokenize(text);
            measured = encoded.length;
            if (measured == target) {
                return new Prompt(text, null, null, target, outLen, SOURCE);
            }
            int[] next = Arrays.copyOf(encoded, target);
            for (int k = encoded.length; k < target; k++) {
                next[k] = pool[random.nextInt(pool.length)];
            }
            text = server.detokenize(next);
        }
        // Still off after trimming and topping up: say what the server counts.
        return new Prompt(text, null, null, server.tokenize(text).length, outLen, SOURCE);
    }
}
