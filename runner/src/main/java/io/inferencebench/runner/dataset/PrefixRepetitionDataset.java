package io.inferencebench.runner.dataset;

import io.inferencebench.crds.v1alpha1.PrefixRepetitionSpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Synthetic prompts in groups that share a prefix (vLLM's {@code prefix_repetition} dataset): each
 * prompt is one of the shape's prefixes followed by its own suffix, prompts spread evenly over the
 * prefixes in random order. The prefixes come from the shape's seed - the run's, so every runner
 * pod sends the same prefixes - and the suffixes, order and output lengths from the pod's own seed.
 *
 * <p>The reuse a prefix cache can find is thus known by construction: of the prompts of one prefix,
 * all but the first can hit the prefix's full blocks.
 */
public final class PrefixRepetitionDataset {

    /**
     * The shape of the prompts.
     *
     * @param seed the run's seed, from which the prefixes are drawn
     */
    public record Shape(int prefixTokens, int suffixTokens, int prefixes, long seed) {

        /** The shape as profiles name it. */
        public String describe() {
            return PrefixRepetitionSpec.of(prefixTokens, suffixTokens, prefixes).describe();
        }
    }

    private PrefixRepetitionDataset() {}

    /**
     * {@code count} prompts of {@code prefixTokens + suffixTokens} tokens (as {@code tokens} counts
     * them).
     */
    public static List<Prompt> generate(
            int count, Shape shape, LengthDistribution output, SyntheticTokens tokens, long seed)
            throws IOException, InterruptedException {
        List<SyntheticTokens.Run> prefixes = prefixes(count, shape, tokens);
        SplittableRandom random = new SplittableRandom(seed);
        int[] group = new int[count];
        for (int i = 0; i < count; i++) {
            group[i] = i % shape.prefixes();
        }
        for (int i = count - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int swap = group[i];
            group[i] = group[j];
            group[j] = swap;
        }
        List<Prompt> prompts = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int outLen = output.sample(random);
            SyntheticTokens.Run suffix = tokens.make(shape.suffixTokens(), random);
            prompts.add(tokens.prompt(List.of(prefixes.get(group[i]), suffix), outLen, random));
        }
        return prompts;
    }

    /**
     * The prefixes {@code count} prompts of {@code shape} share, each alone as a prompt asking for
     * one output token: what a warm prefix cache holds before a stage ({@code prefixCache.state:
     * warm}). The same tokens as the prompts' prefixes on every runner, drawn from the run's seed.
     */
    public static List<Prompt> warmingPrompts(int count, Shape shape, SyntheticTokens tokens)
            throws IOException, InterruptedException {
        List<Prompt> prompts = new ArrayList<>();
        // Only a prefix's own run: a text prompt of one run is not trimmed or topped up.
        SplittableRandom unused = new SplittableRandom(shape.seed());
        for (SyntheticTokens.Run prefix : prefixes(count, shape, tokens)) {
            prompts.add(tokens.prompt(List.of(prefix), 1, unused));
        }
        return prompts;
    }

    private static List<SyntheticTokens.Run> prefixes(
            int count, Shape shape, SyntheticTokens tokens)
            throws IOException, InterruptedException {
        // Only as many prefixes as there are prompts are ever sent; each pod draws the same ones.
        int used = Math.min(shape.prefixes(), count);
        SplittableRandom shared = new SplittableRandom(shape.seed()).split();
        List<SyntheticTokens.Run> prefixes = new ArrayList<>(used);
        for (int g = 0; g < used; g++) {
            prefixes.add(tokens.make(shape.prefixTokens(), shared));
        }
        return prefixes;
    }
}
