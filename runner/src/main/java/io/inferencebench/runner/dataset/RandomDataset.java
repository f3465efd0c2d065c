package io.inferencebench.runner.dataset;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Synthetic prompts of chosen token lengths (vLLM's "random" dataset).
 *
 * <p>Three ways to make a prompt of n tokens, from most to least exact: token ids (where the API
 * takes them: the length is exact by construction); text decoded from random token ids and
 * re-encoded until the tokenizer says it has exactly n tokens (when a tokenizer.json is given);
 * otherwise n common English words, each a single token in the usual BPE vocabularies, which is an
 * approximation and is labelled so in the profile.
 */
public final class RandomDataset {

    /** Common words that are one token each in GPT-2, Llama and Gemma vocabularies. */
    static final String[] WORDS =
            ("the of and to in is was for on that with as by at from this be are it an or which "
                            + "his have not had but were they has their one all been more when who "
                            + "can there will would said what so if about out up time into some "
                            + "other than then only its also after new first two over most could "
                            + "like made people year may back any way many well where much see "
                            + "our just great good man long day get make world way state life")
                    .split(" ");

    /** Token ids below this are often special or control tokens in real vocabularies. */
    private static final int FIRST_ORDINARY_ID = 100;

    /** Without a tokenizer, ids stay below the smallest common vocabulary (32k). */
    private static final int DEFAULT_ID_LIMIT = 30_000;

    private RandomDataset() {}

    public static List<Prompt> generate(
            int count,
            LengthDistribution input,
            LengthDistribution output,
            boolean tokenIds,
            HfTokenizer tokenizer,
            long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<Prompt> prompts = new ArrayList<>(count);
        int idLimit = tokenizer != null ? tokenizer.vocabSize() : DEFAULT_ID_LIMIT;
        int firstId = Math.min(FIRST_ORDINARY_ID, Math.max(0, idLimit / 4));
        for (int i = 0; i < count; i++) {
            int inLen = input.sample(random);
            int outLen = output.sample(random);
            if (tokenIds) {
                int[] ids = new int[inLen];
                for (int k = 0; k < inLen; k++) {
                    ids[k] = firstId + random.nextInt(idLimit - firstId);
                }
                prompts.add(new Prompt(null, ids, null, inLen, outLen, "token_ids"));
            } else if (tokenizer != null) {
                prompts.add(exactText(tokenizer, inLen, outLen, random, firstId, idLimit));
            } else {
                StringBuilder sb = new StringBuilder(inLen * 5);
                for (int k = 0; k < inLen; k++) {
                    if (k > 0) {
                        sb.append(' ');
                    }
                    sb.append(WORDS[random.nextInt(WORDS.length)]);
                }
                prompts.add(new Prompt(sb.toString(), null, null, inLen, outLen, "approximation"));
            }
        }
        return prompts;
    }

    /**
     * Decodes random ids and re-encodes until the text has exactly {@code target} tokens; merges at
     * the seams can change the count, so a few rounds of trimming or topping up are needed.
     */
    static Prompt exactText(
            HfTokenizer tokenizer,
            int target,
            int outLen,
            SplittableRandom random,
            int firstId,
            int idLimit) {
        long[] ids = new long[target];
        for (int k = 0; k < target; k++) {
            ids[k] = firstId + random.nextInt(idLimit - firstId);
        }
        String text = tokenizer.decode(ids);
        for (int round = 0; round < 16; round++) {
            long[] encoded = tokenizer.encode(text);
            if (encoded.length == target) {
                return new Prompt(text, null, null, target, outLen, "tokenizer");
            }
            if (encoded.length > target) {
                text = tokenizer.decode(Arrays.copyOf(encoded, target));
            } else {
                long[] longer = Arrays.copyOf(encoded, target);
                for (int k = encoded.length; k < target; k++) {
                    longer[k] = firstId + random.nextInt(idLimit - firstId);
                }
                text = tokenizer.decode(longer);
            }
        }
        // Still off after trimming: report the length the tokenizer actually measures.
        return new Prompt(text, null, null, tokenizer.count(text), outLen, "tokenizer");
    }
}
