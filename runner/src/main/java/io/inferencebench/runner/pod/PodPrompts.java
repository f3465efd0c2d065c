package io.inferencebench.runner.pod;

import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.runner.dataset.HfTokenizer;
import io.inferencebench.runner.dataset.Prompt;
import io.inferencebench.runner.dataset.ServerTokenizer;
import io.inferencebench.runner.plan.PromptSource;
import io.inferencebench.runner.plan.RunPlan;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The prompts a runner pod prepares before it reports ready: built with the server's tokenizer when
 * synthetic prompts have no tokenizer file, else from the dataset (the file the Job mounted, the
 * inline text or the download of its URL), as many as {@link PodWorkload#datasetSize} says.
 */
final class PodPrompts {

    private PodPrompts() {}

    /**
     * What a pod prepared.
     *
     * @param prompts its prompts, in order
     * @param trace the trace read and this pod's share of it, or {@code null}
     * @param warming the shared prefixes the first pod warms the endpoints with before each stage
     *     ({@link PodCacheWarming}), empty on other pods and without a warm state
     */
    record Prepared(List<Prompt> prompts, PromptSource.TracePrompts trace, List<Prompt> warming) {}

    /**
     * Prepares this pod's prompts (a trace's: this pod's share of its requests).
     *
     * @param headers the request headers, credentials included (the tokenizer endpoints need them)
     * @param noServerTokenizer told why the server's tokenizer did not answer
     * @throws PodFailure when the dataset yields no prompt
     */
    static Prepared prepare(
            RunnerWorkOrder order,
            int index,
            RunPlan plan,
            Map<String, String> headers,
            HfTokenizer tokenizer,
            PodSettings settings,
            Consumer<String> noServerTokenizer)
            throws IOException, InterruptedException {
        long seed = plan.dataset().seed();
        boolean synthetic = plan.dataset().synthetic();
        boolean madeUp = plan.dataset().tokensMadeUp();
        // Without a tokenizer, only ids (or text) the server's own tokenizer made are sure to exist
        // in the model; blind ids can be out of a small model's vocabulary.
        ServerTokenizer server = null;
        if (madeUp && tokenizer == null) {
            ServerTokenizer.Probe probe =
                    ServerTokenizer.probe(
                            plan.wire().backend(),
                            order.baseUrl(),
                            headers,
                            plan.model(),
                            Duration.ofSeconds(10),
                            plan.tls());
            server = probe.tokenizer();
            if (server == null) {
                noServerTokenizer.accept(probe.reason());
            }
        }
        boolean tokenIds =
                PromptSource.tokenIdsByDefault(plan.wire(), madeUp, tokenizer != null, server);
        Files.createDirectories(settings.scratchDir());
        if (PodWorkload.replaysTrace(order)) {
            return trace(order, index, plan, tokenIds, server, tokenizer, settings);
        }
        int datasetSize = PodWorkload.datasetSize(order, index, plan);
        List<Prompt> prompts =
                server != null
                        ? PromptSource.fromServer(
                                plan.dataset(), datasetSize, tokenIds, server, seed)
                        : PromptSource.load(
                                plan.dataset(),
                                synthetic
                                        ? null
                                        : PodWorkload.datasetFile(
                                                plan.dataset(),
                                                settings.datasetFile(),
                                                settings.scratchDir()),
                                datasetSize,
                                tokenIds,
                                tokenizer,
                                seed);
        if (prompts.isEmpty()) {
            throw new PodFailure("the dataset yielded no prompts after filtering");
        }
        List<Prompt> warming =
                PodCacheWarming.warms(order, index)
                        ? PromptSource.warmingPrompts(
                                plan.dataset(),
                                // every prefix any pod may send: each draws them from the run's
                                // seed
                                plan.dataset().prefixes().prefixes(),
                                PromptSource.tokens(server, tokenIds, tokenizer))
                        : List.of();
        return new Prepared(prompts, null, warming);
    }

    /** This pod's share of the trace's requests: positions index, index + pods, ... */
    private static Prepared trace(
            RunnerWorkOrder order,
            int index,
            RunPlan plan,
            boolean tokenIds,
            ServerTokenizer server,
            HfTokenizer tokenizer,
            PodSettings settings)
            throws IOException, InterruptedException {
        java.nio.file.Path file =
                PodWorkload.datasetFile(
                        plan.dataset(), settings.datasetFile(), settings.scratchDir());
        Long runSeed = order.workload().getDataset().getSeed();
        PromptSource.TracePrompts read;
        try {
            read =
                    PromptSource.trace(
                            plan.dataset(),
                            file,
                            PodWorkload.traceCap(order),
                            PromptSource.tokens(server, tokenIds, tokenizer),
                            tokenizer,
                            runSeed == null ? 0 : runSeed,
                            index,
                            order.parallelism());
        } catch (IOException e) {
            throw new PodFailure("workload.dataset (trace): " + e.getMessage());
        }
        if (read.prompts().isEmpty()) {
            throw new PodFailure(
                    "workload.dataset (trace): "
                            + read.trace().requests().size()
                            + " requests to replay, fewer than the "
                            + order.parallelism()
                            + " runner pods; lower spec.runner.parallelism");
        }
        return new Prepared(read.prompts(), read, List.of());
    }
}
