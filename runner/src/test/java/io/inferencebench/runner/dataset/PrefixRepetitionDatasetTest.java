package io.inferencebench.runner.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The shared-prefix prompts: lengths, groups and the seeds each part is drawn from. */
class PrefixRepetitionDatasetTest {

    private static final PrefixRepetitionDataset.Shape SHAPE =
            new PrefixRepetitionDataset.Shape(100, 20, 8, 7);

    private static List<Prompt> ids(int count, long podSeed) throws Exception {
        return PrefixRepetitionDataset.generate(
                count,
                SHAPE,
                LengthDistribution.fixed(4),
                RandomDataset.local(true, null),
                podSeed);
    }

    /** Each prompt's first {@code prefixTokens} ids, as a list to count by. */
    private static List<Integer> prefixOf(Prompt p) {
        return Arrays.stream(Arrays.copyOf(p.tokenIds(), SHAPE.prefixTokens())).boxed().toList();
    }

    @Test
    void promptsSpreadEvenlyOverThePrefixesEachWithItsOwnSuffix() throws Exception {
        List<Prompt> prompts = ids(400, 7);
        assertThat(prompts).hasSize(400);
        Map<List<Integer>, Integer> perPrefix = new HashMap<>();
        Set<List<Integer>> suffixes = new HashSet<>();
        for (Prompt p : prompts) {
            assertThat(p.tokenIds()).hasSize(120);
            assertThat(p.inputTokens()).isEqualTo(120);
            assertThat(p.maxTokens()).isEqualTo(4);
            assertThat(p.inputSource()).isEqualTo("token_ids");
            perPrefix.merge(prefixOf(p), 1, Integer::sum);
            suffixes.add(
                    Arrays.stream(Arrays.copyOfRange(p.tokenIds(), 100, 120)).boxed().toList());
        }
        assertThat(perPrefix).hasSize(8);
        assertThat(perPrefix.values()).containsOnly(50);
        assertThat(suffixes).hasSize(400);
        // In random order, not eight runs of one prefix.
        assertThat(prefixOf(prompts.get(0)))
                .satisfiesAnyOf(
                        first -> assertThat(prefixOf(prompts.get(1))).isNotEqualTo(first),
                        first -> assertThat(prefixOf(prompts.get(2))).isNotEqualTo(first));
    }

    @Test
    void everyPodDrawsTheRunsPrefixesAndItsOwnSuffixes() throws Exception {
        List<Prompt> pod0 = ids(80, 7);
        List<Prompt> pod1 = ids(80, 7 + 1_000_003L);
        assertThat(pod0.stream().map(PrefixRepetitionDatasetTest::prefixOf).distinct().toList())
                .containsExactlyInAnyOrderElementsOf(
                        pod1.stream()
                                .map(PrefixRepetitionDatasetTest::prefixOf)
                                .distinct()
                                .toList());
        assertThat(pod0.get(0).tokenIds()).isNotEqualTo(pod1.get(0).tokenIds());
        // The same seeds give the same prompts.
        List<Prompt> again = ids(80, 7);
        for (int i = 0; i < 80; i++) {
            assertThat(again.get(i).tokenIds()).isEqualTo(pod0.get(i).tokenIds());
        }
        // Another run seed gives other prefixes.
        List<Prompt> otherRun =
                PrefixRepetitionDataset.generate(
                        80,
                        new PrefixRepetitionDataset.Shape(100, 20, 8, 8),
                        LengthDistribution.fixed(4),
                        RandomDataset.local(true, null),
                        7);
        assertThat(otherRun.stream().map(PrefixRepetitionDatasetTest::prefixOf))
                .doesNotContainAnyElementsOf(
                        pod0.stream().map(PrefixRepetitionDatasetTest::prefixOf).toList());
    }

    @Test
    void fewerPromptsThanPrefixesUseOnlyTheFirstPrefixesOncePerPrompt() throws Exception {
        List<Prompt> three = ids(3, 7);
        List<Prompt> eight = ids(8, 7);
        Set<List<Integer>> all = new HashSet<>();
        eight.forEach(p -> all.add(prefixOf(p)));
        assertThat(all).hasSize(8);
        Set<List<Integer>> used = new HashSet<>();
        three.forEach(p -> used.add(prefixOf(p)));
        assertThat(used).hasSize(3);
        assertThat(all).containsAll(used);
    }

    @Test
    void wordPromptsStartWithTheirPrefixTextAndAreLabelledApproximate() throws Exception {
        List<Prompt> prompts =
                PrefixRepetitionDataset.generate(
                        16,
                        new PrefixRepetitionDataset.Shape(30, 5, 2, 0),
                        LengthDistribution.fixed(8),
                        RandomDataset.local(false, null),
                        0);
        Set<String> prefixes = new HashSet<>();
        for (Prompt p : prompts) {
            String[] words = p.text().split(" ");
            assertThat(words).hasSize(35);
            assertThat(p.inputTokens()).isEqualTo(35);
            assertThat(p.inputSource()).isEqualTo("approximation");
            prefixes.add(String.join(" ", Arrays.copyOf(words, 30)));
        }
        assertThat(prefixes).hasSize(2);
    }

    @Test
    void tokenizerPromptsSayWhatTheTokenizerCountsAndShareTheirPrefixText() throws Exception {
        try (HfTokenizer tokenizer = HfTokenizer.load(DatasetTest.testTokenizer())) {
            List<Prompt> prompts =
                    PrefixRepetitionDataset.generate(
                            12,
                            new PrefixRepetitionDataset.Shape(40, 10, 3, 1),
                            LengthDistribution.fixed(8),
                            RandomDataset.local(false, tokenizer),
                            1);
            Set<String> prefixes = new HashSet<>();
            for (Prompt p : prompts) {
                assertThat(p.inputSource()).isEqualTo("tokenizer");
                // What the prompt says is what the tokenizer counts, always; the end is fitted
                // towards prefix + suffix tokens, which this tiny byte-level vocabulary (478
                // tokens) rarely lets it reach exactly, as with its random prompts.
                assertThat(p.inputTokens()).isEqualTo(tokenizer.count(p.text()));
                assertThat(p.inputTokens()).isBetween(45, 60);
            }
            for (Prompt p : prompts) {
                prefixes.add(p.text().substring(0, 40));
            }
            assertThat(prefixes).hasSize(3);
        }
    }
}
