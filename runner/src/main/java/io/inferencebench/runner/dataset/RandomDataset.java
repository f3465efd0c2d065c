package io.inferencebench.runner.dataset;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Synthetic prompts of chosen token lengths (vLLM's "random" dataset).
 *
 * <p>Three ways to make a prompt of n tokens without asking the server, from most to least exact:
 * token ids (where the API takes them: the length is exact by construction); text decoded from
 * random token ids and re-encoded until the tokenizer says it has exactly n tokens (when a
 * tokenizer.json is given); otherwise n common English words, each a single token in the usual BPE
 * vocabularies, which is an approximation and is labelled so in the profile. {@link
 * ServerRandomPrompts} adds the server's own tokenizer.
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

    private static final int ROUNDS = 16;

    private RandomDataset() {}

    /** Prompts of the sampled lengths, one run of tokens each. */
    public static List<Prompt> generate(
            int count,
            LengthDistribution input,
            LengthDistribution output,
            SyntheticTokens tokens,
            long seed)
            throws IOException, InterruptedException {
        SplittableRandom random = new SplittableRandom(seed);
        List<Prompt> prompts = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int inLen = input.sample(random);
            int outLen = output.sample(random);
            prompts.add(tokens.prompt(List.of(tokens.make(inLen, random)), outLen, random));
        }
        return prompts;
    }

    /**
     * The ways that need no server: token ids, text exact with a local tokenizer, or common words.
     */
    public static SyntheticTokens local(boolean tokenIds, HfTokenizer tokenizer) {
        int idLimit = tokenizer != null ? tokenizer.vocabSize() : DEFAULT_ID_LIMIT;
        int firstId = Math.min(FIRST_ORDINARY_ID, Math.max(0, idLimit / 4));
        if (tokenIds) {
            return new Ids(firstId, idLimit);
        }
        return tokenizer != null ? new TokenizerText(tokenizer, firstId, idLimit) : new Words();
    }

    /** Random ids in [firstId, idLimit). */
    private record Ids(int firstId, int idLimit) implements SyntheticTokens {
        @Override
        public Run make(int n, SplittableRandom random) {
            int[] ids = new int[n];
            for (int k = 0; k < n; k++) {
                ids[k] = firstId + random.nextInt(idLimit - firstId);
            }
            return new Run(null, ids, n);
        }

        @Override
        public Prompt prompt(List<Run> runs, int maxTokens, SplittableRandom random) {
            int[] ids = SyntheticTokens.concat(runs);
            return new Prompt(null, ids, null, ids.length, maxTokens, "token_ids");
        }
    }

    /** Text the local tokenizer counts exactly. */
    private record TokenizerText(HfTokenizer tokenizer, int firstId, int idLimit)
            implements SyntheticTokens {
        @Override
        public Run make(int n, SplittableRandom random) {
            return exactText(tokenizer, n, random, firstId, idLimit);
        }

        @Override
        public Prompt prompt(List<Run> runs, int maxTokens, SplittableRandom random) {
            Run whole =
                    runs.size() == 1
                            ? runs.get(0)
                            : fit(
                                    tokenizer,
                                    SyntheticTokens.join(runs),
                                    runs.stream().mapToInt(Run::tokens).sum(),
                                    random,
                                    firstId,
                                    idLimit);
            return new Prompt(whole.text(), null, null, whole.tokens(), maxTokens, "tokenizer");
        }
    }

    /** Common words, one token each in the usual vocabularies: an approximation. */
    private record Words() implements SyntheticTokens {
        @Override
        public Run make(int n, SplittableRandom random) {
            StringBuilder sb = new StringBuilder(n * 5);
            for (int k = 0; k < n; k++) {
                if (k > 0) {
                    sb.append(' ');
                }
                sb.append(WORDS[random.nextInt(WORDS.length)]);
            }
            return new Run(sb.toString(), null, n);
        }

        @Override
        public Prompt prompt(List<Run> runs, int maxTokens, SplittableRandom random) {
            int tokens = runs.stream().mapToInt(Run::tokens).sum();
            return new Prompt(
                    SyntheticTokens.join(runs), null, null, tokens, maxTokens, "approximation");
        }
    }

    /**
     * Decodes random ids and re-encodes until the text has exactly {@code target} tokens; merges at
     * the seams can change the count, so a few rounds of trimming or topping up are needed.
     */
    static SyntheticTokens.Run exactText(
            HfTokenizer tokenizer, int target, SplittableRandom random, int firstId, int idLimit) {
        long[] ids = new long[target];
        for (int k = 0; k < target; k++) {
            ids[k] = firstId + random.nextInt(idLimit - firstId);
        }
        return fit(tokenizer, tokenizer.decode(ids), target, random, firstId, idLimit);
    }

    /**
     * Trims or tops up the end of {@code text} until the tokenizer counts exactly {@code target}
     * tokens; the start, and so a shared prefix, stays as it is.
     */
    private static SyntheticTokens.Run fit(
            HfTokenizer tokenizer,
            String text,
            int target,
            SplittableRandom random,
            int firstId,
            int idLimit) {
        for (int round = 0; round < ROUNDS; round++) {
            long[] encoded = tokenizer.encode(text);
            if (encoded.length == target) {
                return new SyntheticTokens.Run(text, null, target);
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
        return new SyntheticTokens.Run(text, null, tokenizer.count(text));
    }
}
