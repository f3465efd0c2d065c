package io.inferencebench.runner.cli;

import io.inferencebench.profile.text.TerminalText;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.ServerTokenizer;
import io.inferencebench.runner.dataset.TraceFile;
import io.inferencebench.runner.plan.PromptSource;
import io.inferencebench.runner.plan.RunPlan;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The prompts of a plan on this machine: the server's tokenizer asked when it has one and no {@code
 * --tokenizer} is given, the token-id choice of {@code --prompt-format}, the file dataset found by
 * {@link WorkloadOptions#datasetFile}.
 *
 * @param prompts the prompts, at least as many as the largest stage needs (or 1000)
 * @param tokenIds whether synthetic prompts are sent as token ids
 * @param serverTokenizer the server's tokenizer endpoints, or {@code null}
 * @param trace the trace whose requests the prompts are, in order, or {@code null}
 */
public record PreparedPrompts(
        List<Prompt> prompts,
        boolean tokenIds,
        ServerTokenizer serverTokenizer,
        PromptSource.TracePrompts trace) {

    /** Prepares the prompts of the plan. */
    public static PreparedPrompts prepare(
            RunPlan plan,
            String baseUrl,
            Map<String, String> requestHeaders,
            HfTokenizer tokenizer,
            WorkloadOptions workload,
            PrintWriter err)
            throws IOException, InterruptedException {
        boolean madeUp = plan.dataset().tokensMadeUp();
        ServerTokenizer serverTokenizer =
                madeUp && tokenizer == null
                        ? serverTokenizer(plan, baseUrl, requestHeaders, err)
                        : null;
        boolean tokenIds =
                workload.tokenIds(plan.wire(), madeUp, tokenizer != null, serverTokenizer);
        if (plan.replaysTrace()) {
            return trace(plan, workload, tokenIds, tokenizer, serverTokenizer, err);
        }
        return new PreparedPrompts(
                prompts(plan, workload, tokenIds, tokenizer, serverTokenizer, err),
                tokenIds,
                serverTokenizer,
                null);
    }

    /** The requests of the plan's trace and their prompts. */
    private static PreparedPrompts trace(
            RunPlan plan,
            WorkloadOptions workload,
            boolean tokenIds,
            HfTokenizer tokenizer,
            ServerTokenizer serverTokenizer,
            PrintWriter err)
            throws IOException, InterruptedException {
        Path file = workload.datasetFile(plan.dataset());
        PromptSource.TracePrompts read;
        try {
            read =
                    PromptSource.trace(
                            plan.dataset(),
                            file,
                            plan.traceCap(),
                            PromptSource.tokens(serverTokenizer, tokenIds, tokenizer),
                            tokenizer,
                            plan.dataset().seed(),
                            0,
                            1);
        } catch (IOException e) {
            throw new Main.UsageError(workload.datasetField() + ": " + e.getMessage());
        }
        TraceFile trace = read.trace();
        long[] offsets = trace.offsetsNanos();
        err.printf(
                Locale.ROOT,
                "trace: %d requests to replay (%s), recorded over %.3f s%s%n",
                trace.requests().size(),
                trace.format().wireName(),
                offsets[offsets.length - 1] / 1e9,
                trace.skipped() == 0
                        ? ""
                        : "; "
                                + trace.skipped()
                                + " left out: they recorded 0 input or output tokens");
        return new PreparedPrompts(read.prompts(), tokenIds, serverTokenizer, read);
    }

    private static List<Prompt> prompts(
            RunPlan plan,
            WorkloadOptions workload,
            boolean tokenIds,
            HfTokenizer tokenizer,
            ServerTokenizer serverTokenizer,
            PrintWriter err)
            throws IOException, InterruptedException {
        int count = plan.datasetSize();
        long seed = plan.dataset().seed();
        if (serverTokenizer != null) {
            long promptsStart = System.nanoTime();
            List<Prompt> prompts =
                    PromptSource.fromServer(plan.dataset(), count, tokenIds, serverTokenizer, seed);
            err.printf(
                    Locale.ROOT,
                    "prompts: %d built with the server's tokenizer (%d calls to /tokenize and"
                            + " /detokenize, %.1f s)%n",
                    prompts.size(),
                    serverTokenizer.calls(),
                    (System.nanoTime() - promptsStart) / 1e9);
            return prompts;
        }
        Path file = plan.dataset().synthetic() ? null : workload.datasetFile(plan.dataset());
        try {
            return PromptSource.load(plan.dataset(), file, count, tokenIds, tokenizer, seed);
        } catch (IOException e) {
            if (plan.dataset().synthetic()) {
                throw e;
            }
            throw new Main.UsageError(workload.datasetField() + ": " + e.getMessage());
        }
    }

    /**
     * The target's tokenizer endpoints, when its backend has them and they answer; otherwise null,
     * and the synthetic prompts are text of common words (lengths approximate).
     */
    private static ServerTokenizer serverTokenizer(
            RunPlan plan, String baseUrl, Map<String, String> requestHeaders, PrintWriter err) {
        if (!ServerTokenizer.BACKENDS.contains(plan.wire().backend())) {
            return null;
        }
        ServerTokenizer.Probe probe =
                ServerTokenizer.probe(
                        plan.wire().backend(),
                        baseUrl,
                        requestHeaders,
                        plan.model(),
                        Duration.ofSeconds(10),
                        plan.tls());
        if (probe.tokenizer() == null) {
            err.println(
                    "prompts: the server's /tokenize did not answer ("
                            + TerminalText.oneLine(probe.reason())
                            + "); without --tokenizer the synthetic prompts are common words, their"
                            + " token counts approximate");
        }
        return probe.tokenizer();
    }
}
