package io.inferencebench.runner.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.crds.v1alpha1.TraceFormat;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A trace's prompts: recorded lengths, and shared blocks exactly where the hash ids are shared. */
class TraceDatasetTest {

    private static TraceFile.Request request(int input, int output, long... hashes) {
        return new TraceFile.Request(0, input, output, hashes.length == 0 ? null : hashes, null, 1);
    }

    private static List<Prompt> prompts(long seed, TraceFile.Request... requests) throws Exception {
        return prompts(seed, seed, requests);
    }

    private static List<Prompt> prompts(long blockSeed, long ownSeed, TraceFile.Request... requests)
            throws Exception {
        TraceFile trace =
                new TraceFile(TraceFormat.MOONCAKE, List.of(requests), 0, requests.length);
        return TraceDataset.prompts(
                trace, 4, RandomDataset.local(true, null), null, blockSeed, ownSeed);
    }

    private static int[] block(Prompt p, int index) {
        return Arrays.copyOfRange(p.tokenIds(), index * 4, index * 4 + 4);
    }

    @Test
    void sharedHashesShareTheirBlocksAndNothingElse() throws Exception {
        List<Prompt> p =
                prompts(
                        9,
                        request(12, 5, 1, 2, 3),
                        request(12, 6, 1, 2, 4),
                        request(10, 7, 1, 5, 3),
                        request(7, 8),
                        request(14, 9, 1, 2));
        assertThat(p.stream().map(x -> x.tokenIds().length).toList())
                .isEqualTo(List.of(12, 12, 10, 7, 14));
        assertThat(p.stream().map(Prompt::maxTokens).toList()).isEqualTo(List.of(5, 6, 7, 8, 9));
        assertThat(p.get(0).inputSource()).isEqualTo("token_ids");
        // Hash 1 then 2: the first 8 ids of prompts 0, 1 and 4 are the same.
        assertThat(block(p.get(1), 0)).isEqualTo(block(p.get(0), 0));
        assertThat(block(p.get(1), 1)).isEqualTo(block(p.get(0), 1));
        assertThat(block(p.get(4), 1)).isEqualTo(block(p.get(0), 1));
        // Different third hashes: different third blocks.
        assertThat(block(p.get(1), 2)).isNotEqualTo(block(p.get(0), 2));
        // Hash 1 shared, then 5 against 2: only the first block is shared; hash 3 at position 2
        // is a 2-token block in prompt 2 (10 = 4 + 4 + 2), so it is its own.
        assertThat(block(p.get(2), 0)).isEqualTo(block(p.get(0), 0));
        assertThat(block(p.get(2), 1)).isNotEqualTo(block(p.get(0), 1));
        // Prompt 4 runs past its hashes: its last 6 ids are its own.
        assertThat(Arrays.copyOfRange(p.get(4).tokenIds(), 8, 12))
                .isNotEqualTo(block(p.get(0), 2))
                .isNotEqualTo(block(p.get(1), 2));
    }

    @Test
    void theHashesTokensComeFromTheRunsSeedAlone() throws Exception {
        // As two runner pods make them: the run's seed for the hashes, each its own for the rest.
        Prompt a = prompts(3, 3, request(8, 1, 10, 11)).get(0);
        Prompt b = prompts(3, 99, request(5, 1), request(8, 1, 10, 11)).get(1);
        Prompt c = prompts(4, 3, request(8, 1, 10, 11)).get(0);
        assertThat(b.tokenIds()).isEqualTo(a.tokenIds());
        assertThat(c.tokenIds()).isNotEqualTo(a.tokenIds());
    }

    @Test
    void recordedTextIsSentAsRecorded() throws Exception {
        TraceFile.Request text = new TraceFile.Request(0, 3, 4, null, "one two three", 1);
        TraceFile trace = new TraceFile(TraceFormat.MOONCAKE, List.of(text), 0, 1);
        Prompt p =
                TraceDataset.prompts(trace, 4, RandomDataset.local(false, null), null, 1, 1).get(0);
        assertThat(p.text()).isEqualTo("one two three");
        assertThat(p.maxTokens()).isEqualTo(4);
    }
}
