package io.inferencebench.e2e.cluster;

import java.util.HashMap;
import java.util.Map;

/**
 * The BenchmarkRun the cluster scenarios create: streaming completions (backend vllm) from the
 * simulator {@code sim} behind a Service on port {@link #PORT}, random prompts of 16 tokens asking
 * for 8 (seed 7, EOS ignored), constant arrivals, a 1 s cool-down, one runner pod requesting 100m
 * CPU and 256Mi. Each scenario changes only what it is about.
 *
 * <pre>{@code
 * RunYaml.named("sweep").target("sim", MODEL).load("4, 8", 16, 4).runner(2, "OnSuccess").yaml()
 * }</pre>
 */
final class RunYaml {

    /** The target Service's port. */
    static final int PORT = 8000;

    /** What the YAML says, by placeholder; the defaults are the scenarios' common run. */
    private final Map<String, Object> values =
            new HashMap<>(
                    Map.ofEntries(
                            Map.entry("service", "sim"),
                            Map.entry("model", "tiny-model"),
                            Map.entry("targetExtra", ""),
                            Map.entry("workloadExtra", ""),
                            Map.entry("input", 16),
                            Map.entry("output", 8),
                            Map.entry("rates", "1"),
                            Map.entry("prompts", 10),
                            Map.entry("warmup", 0),
                            Map.entry("arrival", "constant"),
                            Map.entry("readinessTimeout", "2m"),
                            Map.entry("requestTimeout", "30s"),
                            Map.entry("startTimeout", "4m"),
                            Map.entry("metrics", ""),
                            Map.entry("parallelism", 1),
                            Map.entry("cleanupPolicy", ""),
                            Map.entry("resources", resources("100m", "256Mi", "768Mi"))));

    private RunYaml(String name) {
        values.put("name", name);
    }

    static RunYaml named(String name) {
        return new RunYaml(name);
    }

    /** The Service the run loads (port {@link #PORT}) and the model it asks for. */
    RunYaml target(String service, String model) {
        return set("service", service, "model", model);
    }

    /** Further lines under {@code spec.target}, each indented four spaces. */
    RunYaml targetExtra(String lines) {
        return set("targetExtra", lines(lines));
    }

    /** Further lines under {@code spec.workload}, each indented four spaces. */
    RunYaml workloadExtra(String lines) {
        return set("workloadExtra", lines(lines));
    }

    /** Prompts of {@code input} tokens asking for {@code output}. */
    RunYaml tokens(int input, int output) {
        return set("input", input, "output", output);
    }

    /**
     * Prompts of the prefix_repetition dataset instead of random ones: {@code prefixes} shared
     * prefixes of {@code prefixTokens}, each prompt's own {@code suffixTokens} after one.
     */
    RunYaml prefixRepetition(int prefixTokens, int suffixTokens, int prefixes) {
        return set(
                "shape",
                "      type: prefix_repetition\n      prefixRepetition: {prefixTokens: %d, suffixTokens: %d, prefixes: %d}\n"
                        .formatted(prefixTokens, suffixTokens, prefixes));
    }

    /** {@code rates} as {@code spec.load.requestRates}' items (e.g. {@code "4, 8"}). */
    RunYaml load(String rates, int numPrompts, int warmupRequests) {
        return set("rates", rates, "prompts", numPrompts, "warmup", warmupRequests);
    }

    /** Poisson arrivals instead of constant ones. */
    RunYaml poisson() {
        return set("arrival", "poisson");
    }

    /**
     * The target's metrics scraped every second; {@code extraLines} (each indented four spaces) go
     * under {@code spec.metrics} too.
     */
    RunYaml metricsEverySecond(String extraLines) {
        return set("metrics", "  metrics:\n    interval: 1s\n" + lines(extraLines));
    }

    /** How long the target may take to be ready, a request to finish, the runner pods to start. */
    RunYaml timeouts(String readiness, String request, String runnerStart) {
        return set(
                "readinessTimeout",
                readiness,
                "requestTimeout",
                request,
                "startTimeout",
                runnerStart);
    }

    /** How many runner pods, and {@code spec.runner.cleanupPolicy} ({@code null}: none). */
    RunYaml runner(int parallelism, String cleanupPolicy) {
        return set(
                "parallelism",
                parallelism,
                "cleanupPolicy",
                cleanupPolicy == null ? "" : "    cleanupPolicy: " + cleanupPolicy + "\n");
    }

    /**
     * The runner pods' CPU and memory requests and memory limit; all {@code null}: no resources at
     * all.
     */
    RunYaml runnerResources(String cpu, String memory, String memoryLimit) {
        return set("resources", cpu == null ? "" : resources(cpu, memory, memoryLimit));
    }

    String yaml() {
        return """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata: {name: %s}
                spec:
                  target:
                    service: {name: %s, port: %d}
                    backend: vllm
                    api: completions
                    model: %s
                    readinessTimeout: %s
                %s  workload:
                    dataset:
                %s      outputTokens: {type: fixed, mean: %d}
                      seed: 7
                    streaming: true
                    ignoreEos: true
                %s  load:
                    requestRates: [%s]
                    numPrompts: %d
                    arrival: %s
                    warmupRequests: %d
                    cooldown: 1s
                    requestTimeout: %s
                %s  runner:
                    parallelism: %d
                    startTimeout: %s
                %s%s"""
                .formatted(
                        values.get("name"),
                        values.get("service"),
                        PORT,
                        values.get("model"),
                        values.get("readinessTimeout"),
                        values.get("targetExtra"),
                        values.getOrDefault(
                                "shape",
                                "      type: random\n      inputTokens: {type: fixed, mean: %d}\n"
                                        .formatted(values.get("input"))),
                        values.get("output"),
                        values.get("workloadExtra"),
                        values.get("rates"),
                        values.get("prompts"),
                        values.get("arrival"),
                        values.get("warmup"),
                        values.get("requestTimeout"),
                        values.get("metrics"),
                        values.get("parallelism"),
                        values.get("startTimeout"),
                        values.get("cleanupPolicy"),
                        values.get("resources"));
    }

    private RunYaml set(Object... keysAndValues) {
        for (int i = 0; i < keysAndValues.length; i += 2) {
            values.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return this;
    }

    private static String resources(String cpu, String memory, String memoryLimit) {
        return "    resources:\n      requests: {cpu: %s, memory: %s}\n      limits: {memory: %s}\n"
                .formatted(cpu, memory, memoryLimit);
    }

    /** {@code text} ending in a newline, or nothing. */
    private static String lines(String text) {
        return text.isEmpty() || text.endsWith("\n") ? text : text + "\n";
    }
}
