package io.inferencebench.runner.dataset;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The prompts of a replayed trace, one per recorded request in order: its recorded prompt text
 * where the trace has it, else synthetic tokens of its recorded input length, asking for its
 * recorded output length.
 *
 * <p>Where the trace gives prefix-block hashes (Mooncake's {@code hash_ids}), block {@code j} of a
 * prompt is the tokens of its {@code j}-th hash, each hash's tokens drawn from the run's seed and
 * the hash alone: two requests that share their first {@code k} hashes share their first {@code k *
 * blockTokens} tokens, as the recorded requests did, so the reuse a prefix cache can find is the
 * trace's. A last block shorter than {@code blockTokens} is its hash's tokens of that length
 * (shared with requests whose block of that hash is as short); tokens beyond the hashes are the
 * request's own.
 */
public final class TraceDataset {

    private TraceDataset() {}

    /**
     * The prompts of {@code trace}'s requests, in its order.
     *
     * @param blockTokens the tokens each hash id stands for
     * @param tokens how synthetic tokens are made (ids or text)
     * @param tokenizer counts recorded prompt text, or {@code null} (an approximation)
     * @param blockSeed the run's seed, from which every hash's tokens are drawn (so every runner
     *     pod sends the same tokens for a hash)
     * @param ownSeed the seed of each request's own tokens (a runner pod's own)
     */
    public static List<Prompt> prompts(
            TraceFile trace,
            int blockTokens,
            SyntheticTokens tokens,
            HfTokenizer tokenizer,
            long blockSeed,
            long ownSeed)
            throws IOException, InterruptedException {
        Map<Block, SyntheticTokens.Run> blocks = new HashMap<>();
        SplittableRandom own = new SplittableRandom(ownSeed);
        List<Prompt> prompts = new ArrayList<>(trace.requests().size());
        for (TraceFile.Request r : trace.requests()) {
            if (r.text() != null) {
                prompts.add(
                        new Prompt(
                                r.text(),
                                null,
                                null,
                                FileDatasets.countTokens(r.text(), tokenizer),
                                r.outputTokens(),
                                FileDatasets.source(tokenizer)));
                continue;
            }
            List<SyntheticTokens.Run> runs = new ArrayList<>();
            int remaining = r.inputTokens();
            long[] hashes = r.hashIds() == null ? new long[0] : r.hashIds();
            for (int j = 0; j < hashes.length && remaining > 0; j++) {
                int take = Math.min(blockTokens, remaining);
                Block block = new Block(hashes[j], take);
                SyntheticTokens.Run run = blocks.get(block);
                if (run == null) {
                    run = tokens.make(take, new SplittableRandom(block.seed(blockSeed)));
                    blocks.put(block, run);
                }
                runs.add(run);
                remaining -= take;
            }
            if (remaining > 0) {
                runs.add(tokens.make(remaining, own));
            }
            prompts.add(tokens.prompt(runs, r.outputTokens(), own));
        }
        return prompts;
    }

    /** A hash's tokens of one length. */
    private record Block(long hash, int tokens) {

        /** The seed of this block's tokens: the run's, the hash and the length mixed. */
        long seed(long runSeed) {
            long s = runSeed * 0x9E3779B97F4A7C15L;
            s ^= hash + 0x632BE59BD9B4E019L + (s << 6) + (s >>> 2);
            return s * 31 + tokens;
        }
    }
}
