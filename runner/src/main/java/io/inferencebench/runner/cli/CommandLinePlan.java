package io.inferencebench.runner.cli;

import io.inferencebench.crds.v1alpha1.PrefixCacheSpec;
import io.inferencebench.runner.plan.PlanResolver;
import io.inferencebench.runner.plan.PlanTarget;
import io.inferencebench.runner.plan.RunPlan;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The command line's road to a {@link RunPlan}: the sections of {@code --config} (target, workload,
 * load, slo) with the flags of the mixins laid over them, through the {@link PlanResolver} a runner
 * pod uses on its work order. For any command taking these mixins.
 *
 * @param plan what the engine runs
 * @param baseUrl the server's base URL
 * @param requestHeaders the plan's headers plus the API key of {@code --api-key-file}
 * @param prefixCache the config's {@code workload.prefixCache}, or {@code null}
 */
public record CommandLinePlan(
        RunPlan plan,
        String baseUrl,
        Map<String, String> requestHeaders,
        PrefixCacheSpec prefixCache) {

    /**
     * Resolves the flags over the config.
     *
     * @param config the {@code --config} file, or {@code null}
     * @throws Main.UsageError naming the flag or the config field
     */
    public static CommandLinePlan resolve(
            Path config,
            TargetOptions target,
            WorkloadOptions workload,
            LoadOptions load,
            SloOptions slo,
            PrintWriter err)
            throws IOException {
        ConfigFile file = config == null ? new ConfigFile() : ConfigFile.read(config);
        String baseUrl = target.baseUrl(file.target, err);
        PlanTarget planTarget = target.layOver(file.target, baseUrl, err);
        RunPlan plan;
        PrefixCacheSpec prefixCache;
        try {
            var workloadSpec = workload.layOver(file.workload);
            boolean conversations = workloadSpec.getDataset().getConversation() != null;
            if (workloadSpec.getModels() != null && planTarget.model() != null) {
                if (target.model != null && !target.model.isBlank()) {
                    throw new Main.UsageError(
                            "--model-mix: not with --model: with a mix each request asks for one of"
                                    + " its models");
                }
                if (workload.mixesModels()) {
                    // The flag's mix takes the place of the config's one model.
                    planTarget =
                            new PlanTarget(
                                    planTarget.backend(),
                                    planTarget.api(),
                                    planTarget.path(),
                                    null,
                                    planTarget.headers(),
                                    planTarget.tls());
                }
            }
            var loadSpec =
                    load.layOver(
                            file.load,
                            workloadSpec.getDataset().getType()
                                    == io.inferencebench.crds.v1alpha1.DatasetType.TRACE,
                            conversations);
            if (conversations && planTarget.api() == null && planTarget.path() == null) {
                // A session's history is a list of chat messages: the chat API unless told.
                planTarget =
                        new PlanTarget(
                                planTarget.backend(),
                                "chat",
                                null,
                                planTarget.model(),
                                planTarget.headers(),
                                planTarget.tls());
            }
            var sloSpec = slo.layOver(file.slo);
            // workload.prefixCache of a BenchmarkRun: here, the base URL is reset before stages.
            prefixCache = workloadSpec.getPrefixCache();
            plan =
                    PlanResolver.resolve(
                            planTarget,
                            workloadSpec,
                            loadSpec,
                            sloSpec,
                            new PlanResolver.Road("", target.wireFields(file.target), true),
                            false,
                            load.rampUp());
        } catch (PlanResolver.InvalidSpec e) {
            // What the flags give is checked with their names before; the rest is the file's.
            throw new Main.UsageError(
                    (config != null ? "--config " + config + ": " : "") + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(e.getMessage());
        }
        Map<String, String> headers = new LinkedHashMap<>(plan.headers());
        headers.putAll(target.credentials());
        return new CommandLinePlan(plan, baseUrl, headers, prefixCache);
    }
}
