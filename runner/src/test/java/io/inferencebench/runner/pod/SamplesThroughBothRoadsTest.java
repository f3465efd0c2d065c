package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.SpecValidation;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShares;
import io.inferencebench.crds.workorder.TlsOrder;
import io.inferencebench.runner.cli.CommandLinePlan;
import io.inferencebench.runner.cli.RunCommand;
import io.inferencebench.runner.engine.StagePlan;
import io.inferencebench.runner.plan.PlanResolver;
import io.inferencebench.runner.plan.RunPlan;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/**
 * Every sample BenchmarkRun through both roads to the plan the engine runs: the command line with
 * {@code --config SAMPLE} and no other flag, and a runner pod given the work order the operator
 * builds from it (as JSON, the way the pod reads it). The whole plans must be equal: protocol,
 * path, model, headers, TLS, dataset and lengths, sampling, every stage, cap, warm-up, timeouts,
 * failure gate and SLO.
 */
class SamplesThroughBothRoadsTest {

    private static final ObjectMapper JSON =
            new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    static Stream<Path> samples() throws Exception {
        try (Stream<Path> files = Files.list(Path.of("..", "config", "samples"))) {
            return files
                    .filter(p -> p.toString().endsWith(".yaml"))
                    .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
                    .sorted()
                    .toList()
                    .stream();
        }
    }

    /**
     * The samples with their stages in the spec. A capacity search ({@code spec.search}) decides
     * its stages at run time, so neither road has a fixed stage list to compare; its pods' shares
     * of a probe are checked instead ({@link #searchSamples}).
     */
    static Stream<Path> fixedStageSamples() throws Exception {
        List<Path> fixed = new java.util.ArrayList<>();
        for (Path sample : samples().toList()) {
            if (spec(sample).getSearch() == null) {
                fixed.add(sample);
            }
        }
        return fixed.stream();
    }

    static BenchmarkRunSpec spec(Path sample) throws Exception {
        ObjectMapper yaml =
                new ObjectMapper(new YAMLFactory())
                        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        return yaml.readValue(sample.toFile(), BenchmarkRun.class).getSpec();
    }

    /** What the operator writes (RunnerWorkOrderDependent), read back as the pod reads it. */
    static RunnerWorkOrder workOrder(BenchmarkRunSpec spec, int parallelism) throws Exception {
        TargetSpec target = spec.getTarget();
        TlsOrder tls =
                target.getTls() == null
                        ? null
                        : new TlsOrder(
                                null,
                                Boolean.TRUE.equals(target.getTls().getInsecureSkipVerify()),
                                target.getTls().getServerName());
        RunnerWorkOrder order =
                new RunnerWorkOrder(
                        "r",
                        "ns",
                        "uid",
                        parallelism,
                        "http://127.0.0.1:1",
                        target.getPath(),
                        target.getBackend().wireName(),
                        target.getApi().wireName(),
                        target.getModel(),
                        target.getHeaders() == null ? Map.of() : target.getHeaders(),
                        target.getApiKeySecretRef() != null,
                        spec.getWorkload(),
                        spec.getLoad(),
                        StageShares.of(spec.getLoad(), parallelism, spec.replaysTrace()),
                        spec.getSlo(),
                        "r-control",
                        "r-part-",
                        3,
                        tls,
                        null,
                        null);
        return JSON.readValue(JSON.writeValueAsString(order), RunnerWorkOrder.class);
    }

    static CommandLinePlan commandLine(String... args) throws Exception {
        CommandLine cl = new CommandLine(new RunCommand());
        cl.parseArgs(args);
        RunCommand run = cl.getCommand();
        return run.resolvePlan(new PrintWriter(new StringWriter()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("samples")
    void samplesAreValidSpecs(Path sample) throws Exception {
        assertThat(SpecValidation.validate(spec(sample))).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixedStageSamples")
    void theCommandLineAndOnePodResolveTheSamePlan(Path sample) throws Exception {
        BenchmarkRunSpec spec = spec(sample);
        RunPlan cli = commandLine("--config", sample.toString()).plan();
        RunPlan pod = PodWorkload.plan(workOrder(spec, 1), 0);
        assertThat(cli).isEqualTo(pod);
        // And the spec itself, resolved where no road's files are involved.
        assertThat(PlanResolver.resolve(spec, PlanResolver.Road.pod())).isEqualTo(pod);
        // Not trivially equal: the sample's own choices are in the plan.
        assertThat(cli.stages())
                .hasSize(
                        spec.replaysTrace()
                                ? spec.getLoad().replayStages().size()
                                : spec.getLoad().resolvedStages().size());
        assertThat(cli.wire().backend()).isEqualTo(spec.getTarget().getBackend().wireName());
        // A model mix asks for its first model where one model is named (profiles, discovery).
        assertThat(cli.model())
                .isEqualTo(
                        spec.getWorkload() != null && spec.getWorkload().getModels() != null
                                ? spec.getWorkload().getModels().get(0).getName()
                                : spec.getTarget().getModel());
    }

    @Test
    void theSharedPrefixSamplesPodsSendTheRunsPrefixesEachWithItsOwnSuffixes() throws Exception {
        Path sample = Path.of("..", "config", "samples", "vllm-shared-prefix.yaml");
        BenchmarkRunSpec spec = spec(sample);
        var shape = spec.getWorkload().getDataset().getPrefixRepetition();
        int parallelism = spec.getRunner().getParallelism();
        RunnerWorkOrder order = workOrder(spec, parallelism);
        Map<List<Integer>, Integer> perPrefix = new java.util.HashMap<>();
        java.util.Set<List<Integer>> prompts = new java.util.HashSet<>();
        int sent = 0;
        for (int index = 0; index < parallelism; index++) {
            RunPlan pod = PodWorkload.plan(order, index);
            int size = PodWorkload.datasetSize(order, index, pod);
            for (var prompt :
                    io.inferencebench.runner.plan.PromptSource.load(
                            pod.dataset(), null, size, true, null, pod.dataset().seed())) {
                int[] ids = prompt.tokenIds();
                assertThat(ids).hasSize(shape.getPrefixTokens() + shape.getSuffixTokens());
                List<Integer> prefix =
                        java.util.Arrays.stream(ids, 0, shape.getPrefixTokens()).boxed().toList();
                perPrefix.merge(prefix, 1, Integer::sum);
                prompts.add(java.util.Arrays.stream(ids).boxed().toList());
                sent++;
            }
        }
        // Both pods send the run's 8 prefixes, 100 prompts each over the 800, no prompt twice:
        // a cold cache can hit (800 - 8) x prefixTokens tokens, as the sample says.
        assertThat(sent).isEqualTo(spec.getLoad().getNumPrompts());
        assertThat(perPrefix).hasSize(shape.getPrefixes());
        assertThat(perPrefix.values()).containsOnly(sent / shape.getPrefixes());
        assertThat(prompts).hasSize(sent);
    }

    @Test
    void theWarmSharedPrefixSamplesFirstPodWarmsWithExactlyThePrefixesEveryPodSends()
            throws Exception {
        Path sample = Path.of("..", "config", "samples", "vllm-shared-prefix-warm.yaml");
        BenchmarkRunSpec spec = spec(sample);
        var shape = spec.getWorkload().getDataset().getPrefixRepetition();
        int parallelism = spec.getRunner().getParallelism();
        RunnerWorkOrder order = workOrder(spec, parallelism);
        java.util.Set<List<Integer>> sentPrefixes = new java.util.HashSet<>();
        for (int index = 0; index < parallelism; index++) {
            RunPlan pod = PodWorkload.plan(order, index);
            int size = PodWorkload.datasetSize(order, index, pod);
            for (var prompt :
                    io.inferencebench.runner.plan.PromptSource.load(
                            pod.dataset(), null, size, true, null, pod.dataset().seed())) {
                sentPrefixes.add(
                        java.util.Arrays.stream(prompt.tokenIds(), 0, shape.getPrefixTokens())
                                .boxed()
                                .toList());
            }
            assertThat(PodCacheWarming.warms(order, index)).isEqualTo(index == 0);
        }
        RunPlan first = PodWorkload.plan(order, 0);
        java.util.Set<List<Integer>> warmed = new java.util.HashSet<>();
        for (var prompt :
                io.inferencebench.runner.plan.PromptSource.warmingPrompts(
                        first.dataset(),
                        first.dataset().prefixes().prefixes(),
                        io.inferencebench.runner.dataset.RandomDataset.local(true, null))) {
            assertThat(prompt.maxTokens()).isEqualTo(1);
            warmed.add(java.util.Arrays.stream(prompt.tokenIds()).boxed().toList());
        }
        assertThat(warmed).hasSize(shape.getPrefixes()).isEqualTo(sentPrefixes);
        // A cold sample's pods warm nothing.
        BenchmarkRunSpec cold = spec(Path.of("..", "config", "samples", "vllm-shared-prefix.yaml"));
        assertThat(PodCacheWarming.warms(workOrder(cold, 2), 0)).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixedStageSamples")
    void theSamplesPodsTogetherSendWhatTheCommandLineSends(Path sample) throws Exception {
        BenchmarkRunSpec spec = spec(sample);
        int parallelism = spec.getRunner().getParallelism();
        RunPlan cli = commandLine("--config", sample.toString()).plan();
        RunnerWorkOrder order = workOrder(spec, parallelism);
        for (int stage = 0; stage < cli.stages().size(); stage++) {
            StagePlan whole = cli.stages().get(stage);
            long prompts = 0;
            double rate = 0;
            int concurrency = 0;
            double rampStart = 0;
            double rampEnd = 0;
            for (int index = 0; index < parallelism; index++) {
                RunPlan pod = PodWorkload.plan(order, index);
                assertThat(pod.withoutShares()).isEqualTo(cli.withoutShares());
                StagePlan share = pod.stages().get(stage);
                if (share == null) {
                    continue;
                }
                prompts += share.numPrompts();
                rate += share.requestRate();
                concurrency += share.concurrency() == null ? 0 : share.concurrency();
                assertThat(share.duration()).isEqualTo(whole.duration());
                assertThat(share.arrival()).isEqualTo(whole.arrival());
                assertThat(share.ramped()).isEqualTo(whole.ramped());
                if (share.ramped()) {
                    assertThat(share.rampUp().strategy()).isEqualTo(whole.rampUp().strategy());
                    rampStart += share.rampUp().startRate();
                    rampEnd += share.rampUp().endRate();
                }
            }
            assertThat(prompts).isEqualTo(whole.numPrompts());
            if (whole.ramped()) {
                // Each pod ramps its share of both rates; over a duration the mean rates add up
                // too (over its own requests a pod's mean differs by the discreteness of n).
                assertThat(rampStart)
                        .isCloseTo(
                                whole.rampUp().startRate(),
                                org.assertj.core.data.Offset.offset(1e-9));
                assertThat(rampEnd)
                        .isCloseTo(
                                whole.rampUp().endRate(),
                                org.assertj.core.data.Offset.offset(1e-9));
                if (whole.duration() != null) {
                    assertThat(rate)
                            .isCloseTo(
                                    whole.requestRate(), org.assertj.core.data.Offset.offset(1e-9));
                }
            } else if (whole.concurrency() != null) {
                assertThat(concurrency).isEqualTo(whole.concurrency());
            } else if (whole.replay() != null) {
                // A replay's rate comes from the trace once read: theTraceSampleReplaysOneClock.
                assertThat(whole.replay().bound()).isFalse();
            } else {
                assertThat(rate)
                        .isCloseTo(whole.requestRate(), org.assertj.core.data.Offset.offset(1e-9));
            }
        }
    }

    @Test
    void theTraceSamplesPodsTogetherReplayWhatTheCommandLineReplaysOnOneClock(
            @org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path sample = Path.of("..", "config", "samples", "vllm-trace.yaml");
        BenchmarkRunSpec spec = spec(sample);
        // 100 requests, one every 30 s: the sample's window [10m, 40m) holds the 60 from 10m.
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 100; i++) {
            lines.append(
                    String.format(
                            "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": 4,"
                                    + " \"hash_ids\": [7, %d]}%n",
                            i * 30_000, 520 + i, i));
        }
        Path file = Files.writeString(dir.resolve("mooncake.jsonl"), lines);
        RunPlan cli = commandLine("--config", sample.toString()).plan();
        var read =
                io.inferencebench.runner.plan.PromptSource.trace(
                        cli.dataset(),
                        file,
                        cli.traceCap(),
                        io.inferencebench.runner.plan.PromptSource.tokens(null, true, null),
                        null,
                        cli.dataset().seed(),
                        0,
                        1);
        StagePlan whole = read.bind(cli).stages().get(0);
        assertThat(whole.numPrompts()).isEqualTo(60);
        // Twice as slow as recorded: 59 gaps of 60 s.
        assertThat(whole.requestRate())
                .isCloseTo(59 / 3540.0, org.assertj.core.data.Offset.offset(1e-12));
        int parallelism = spec.getRunner().getParallelism();
        RunnerWorkOrder order = workOrder(spec, parallelism);
        java.util.TreeMap<Long, int[]> sent = new java.util.TreeMap<>();
        double rate = 0;
        List<Integer> firstBlock = null;
        for (int index = 0; index < parallelism; index++) {
            RunPlan pod = PodWorkload.plan(order, index);
            var mine =
                    io.inferencebench.runner.plan.PromptSource.trace(
                            pod.dataset(),
                            file,
                            PodWorkload.traceCap(order),
                            io.inferencebench.runner.plan.PromptSource.tokens(null, true, null),
                            null,
                            spec.getWorkload().getDataset().getSeed(),
                            index,
                            parallelism);
            StagePlan share = mine.bind(pod).stages().get(0);
            rate += share.requestRate();
            long[] offsets = share.replay().offsetsNanos();
            for (int i = 0; i < offsets.length; i++) {
                int[] ids = mine.prompts().get(i).tokenIds();
                sent.put(offsets[i], ids);
                List<Integer> block = java.util.Arrays.stream(ids, 0, 512).boxed().toList();
                if (firstBlock == null) {
                    firstBlock = block;
                }
                // Hash 7 is every prompt's first block: the same tokens from every pod.
                assertThat(block).isEqualTo(firstBlock);
            }
        }
        // Together: every request of the replay once, each at the command line's offset.
        long[] expected = whole.replay().offsetsNanos();
        assertThat(sent.keySet())
                .containsExactlyElementsOf(java.util.Arrays.stream(expected).boxed().toList());
        assertThat(rate).isCloseTo(whole.requestRate(), org.assertj.core.data.Offset.offset(1e-12));
        for (int i = 0; i < expected.length; i++) {
            assertThat(sent.get(expected[i])).hasSize(520 + 20 + i);
        }
    }

    static Stream<Path> searchSamples() throws Exception {
        List<Path> searched = new java.util.ArrayList<>();
        for (Path sample : samples().toList()) {
            if (spec(sample).getSearch() != null) {
                searched.add(sample);
            }
        }
        return searched.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("searchSamples")
    void aSearchSamplesPodsTogetherSendEachProbeWhole(Path sample) throws Exception {
        BenchmarkRunSpec spec = spec(sample);
        double rate = spec.getSearch().getMinRate();
        for (int parallelism : List.of(spec.getRunner().getParallelism(), 3)) {
            RunnerWorkOrder order = workOrder(spec, parallelism);
            assertThat(order.stages()).as("stages decided at run time").isEmpty();
            long prompts = 0;
            double sent = 0;
            RunPlan first = PodWorkload.plan(order, 0);
            for (int index = 0; index < parallelism; index++) {
                RunPlan pod = PodWorkload.plan(order, index);
                assertThat(pod.stages()).isEmpty();
                assertThat(pod.withoutShares()).isEqualTo(first.withoutShares());
                StagePlan probe =
                        PodWorkload.probe(order, index, PodWorkload.probeShare(order, 1, rate));
                if (probe == null) {
                    continue;
                }
                assertThat(PodWorkload.datasetSize(order, index, pod))
                        .isGreaterThanOrEqualTo((int) Math.min(probe.numPrompts(), 1000));
                prompts += probe.numPrompts();
                sent += probe.requestRate();
            }
            if (spec.getLoad().getNumPrompts() != null) {
                assertThat(prompts).isEqualTo(spec.getLoad().getNumPrompts().longValue());
            }
            assertThat(sent).isCloseTo(rate, org.assertj.core.data.Offset.offset(1e-9));
        }
    }

    @Test
    void theConfigsTargetSectionIsUsedAndFlagsWin() throws Exception {
        Path sample = Path.of("..", "config", "samples", "plain-url.yaml");
        CommandLinePlan fromFile = commandLine("--config", sample.toString());
        assertThat(fromFile.baseUrl()).isEqualTo("http://llm-gateway.example.internal:8080");
        assertThat(fromFile.plan().wire().api()).isEqualTo("chat");
        assertThat(fromFile.plan().wire().path()).isEqualTo("/v1/chat/completions");
        assertThat(fromFile.plan().model()).isEqualTo("my-model");
        assertThat(fromFile.requestHeaders()).containsEntry("X-Benchmark", "inferencebench");

        CommandLinePlan flags =
                commandLine(
                        "--config",
                        sample.toString(),
                        "--base-url",
                        "http://127.0.0.1:9",
                        "--model",
                        "other",
                        "--api",
                        "completions",
                        "--header",
                        "X-Benchmark=cli",
                        "--num-prompts",
                        "7");
        assertThat(flags.baseUrl()).isEqualTo("http://127.0.0.1:9");
        assertThat(flags.plan().model()).isEqualTo("other");
        assertThat(flags.plan().wire().path()).isEqualTo("/v1/completions");
        assertThat(flags.requestHeaders()).containsEntry("X-Benchmark", "cli");
        assertThat(flags.plan().stages().get(0).numPrompts()).isEqualTo(7);
        // The sample's duration still bounds the stage.
        assertThat(flags.plan().stages().get(0).duration())
                .isEqualTo(fromFile.plan().stages().get(0).duration());
    }

    @Test
    void tgiWithTheSpecsDefaultApiSendsTgiNativeRequestsAsTheCliDoes() throws Exception {
        BenchmarkRunSpec spec = new BenchmarkRunSpec();
        TargetSpec target = new TargetSpec();
        target.setUrl("http://tgi:8080");
        target.setBackend(io.inferencebench.crds.v1alpha1.Backend.TGI);
        spec.setTarget(target);
        spec.setWorkload(new WorkloadSpec());
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0));
        load.setNumPrompts(10);
        spec.setLoad(load);
        RunPlan pod = PodWorkload.plan(workOrder(spec, 1), 0);
        RunPlan cli =
                commandLine("--backend", "tgi", "--request-rate", "1", "--num-prompts", "10")
                        .plan();
        // Before, backend: tgi in a BenchmarkRun sent /v1/completions.
        assertThat(pod.wire().path()).isEqualTo("/generate_stream").isEqualTo(cli.wire().path());
        assertThat(pod.wire()).isEqualTo(cli.wire());
    }
}
