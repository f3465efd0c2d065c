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
     * Prepares this pod's prompts.
     *
     * @param headers the request headers, credentials included (the tokenizer endpoints need them)
     * @param noServerTokenizer told why the server's tokenizer did not answer
     * @throws PodFailure when the dataset yields no prompt
     */
    static List<Prompt> prepare(
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
        // Without a tokenizer, only ids (or text) the server's own tokenizer made are sure to exist
        // in the model; blind ids can be out of a small model's vocabulary.
        ServerTokenizer server = null;
        if (synthetic && tokenizer == null) {
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
                PromptSource.tokenIdsByDefault(plan.wire(), synthetic, tokenizer != null, server);
        Files.createDirectories(settings.scratchDir());
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
        return prompts;
    }
}
