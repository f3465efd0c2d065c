package io.inferencebench.crds.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SpecValidationTest {

    private static BenchmarkRunSpec validSpec() {
        BenchmarkRunSpec spec = new BenchmarkRunSpec();
        TargetSpec target = new TargetSpec();
        target.setService(new ServiceTarget("vllm", 8000));
        spec.setTarget(target);
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0, 5.0));
        load.setNumPrompts(100);
        spec.setLoad(load);
        return spec;
    }

    @Test
    void validSpecHasNoProblems() {
        assertThat(SpecValidation.validate(validSpec())).isEmpty();
    }

    @Test
    void targetNeedsExactlyOneOfServiceOrUrl() {
        BenchmarkRunSpec spec = validSpec();
        spec.getTarget().setUrl("http://x:1");
        assertThat(SpecValidation.validate(spec))
                .containsExactly("spec.target: exactly one of service or url must be set");
    }

    @Test
    void balanceEndpointsNeedsAService() {
        BenchmarkRunSpec spec = validSpec();
        spec.getTarget().setBalance(Balance.ENDPOINTS);
        assertThat(SpecValidation.validate(spec)).isEmpty();
        spec.getTarget().setService(null);
        spec.getTarget().setUrl("http://x:1");
        assertThat(SpecValidation.validate(spec))
                .containsExactly(
                        "spec.target.balance: endpoints needs spec.target.service (a url has no"
                                + " endpoints to list)");
        spec.getTarget().setBalance(Balance.SERVICE);
        assertThat(SpecValidation.validate(spec)).isEmpty();
    }

    @Test
    void hopByHopAndFramingHeadersAndControlCharactersAreRefusedNamingTheHeaderOnly() {
        BenchmarkRunSpec spec = validSpec();
        java.util.Map<String, String> headers = new java.util.LinkedHashMap<>();
        headers.put("Transfer-Encoding", "chunked");
        headers.put("host", "llm.internal");
        headers.put("X-Tenant", "team-a");
        headers.put("X-Key", "sk-secret\r\nX-Injected: 1");
        headers.put("X-Nul", "a\u0000b");
        headers.put("Bad\nName", "v");
        spec.getTarget().setHeaders(headers);
        List<String> problems = SpecValidation.validate(spec);
        assertThat(problems)
                .hasSize(5)
                .anySatisfy(
                        p ->
                                assertThat(p)
                                        .startsWith("spec.target.headers.Transfer-Encoding: ")
                                        .contains("hop-by-hop or framing header"))
                .anySatisfy(
                        p ->
                                assertThat(p)
                                        .startsWith("spec.target.headers.host: Host is")
                                        .contains("put the host name in the URL"))
                .anySatisfy(
                        p ->
                                assertThat(p)
                                        .startsWith("spec.target.headers.X-Key: ")
                                        .contains("line break"))
                .anySatisfy(p -> assertThat(p).startsWith("spec.target.headers.X-Nul: "))
                .anySatisfy(
                        p ->
                                assertThat(p)
                                        .startsWith("spec.target.headers.Bad\\x0aName: ")
                                        .contains("HTTP token"));
        assertThat(String.join("\n", problems))
                .doesNotContain("sk-secret")
                .doesNotContain("team-a")
                .doesNotContain("\r");
        assertThat(HeaderValidation.validate(headers, "--header", " "))
                .anySatisfy(p -> assertThat(p).startsWith("--header Transfer-Encoding: "));
        assertThat(HeaderValidation.validate(java.util.Map.of("X-Tab", "a\tb"), "h", "."))
                .isEmpty();
    }

    @Test
    void aSearchNeedsAProbeSizeAnSloAndNoStagesOfItsOwn() {
        BenchmarkRunSpec spec = validSpec();
        SearchSpec search = new SearchSpec();
        search.setMinRate(4.0);
        search.setMaxRate(2.0);
        search.setPrecision(1.5);
        spec.setSearch(search);
        spec.getLoad().setNumPrompts(null);
        assertThat(SpecValidation.validate(spec))
                .containsExactlyInAnyOrder(
                        "spec.search: decides every stage's rate at run time; leave load.stages"
                                + " and load.requestRates unset",
                        "spec.load.requestRates: needs numPrompts or duration",
                        "spec.load: spec.search needs numPrompts or duration (the size of every"
                                + " probe)",
                        "spec.search.maxRate: must be greater than minRate 4.0",
                        "spec.search.precision: must be within (0, 1), got 1.5",
                        "spec.search: needs spec.slo (a probe passes when it meets it)");

        spec.getLoad().setRequestRates(null);
        spec.getLoad().setNumPrompts(50);
        search.setMaxRate(40.0);
        search.setPrecision(0.05);
        SloSpec slo = new SloSpec();
        slo.setTtft("500ms");
        spec.setSlo(slo);
        assertThat(SpecValidation.validate(spec)).isEmpty();
        assertThat(spec.getLoad().probeStages(List.of(4.0, 8.0)))
                .extracting(StageSpec::getRequestRate, StageSpec::getNumPrompts)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(4.0, 50),
                        org.assertj.core.groups.Tuple.tuple(8.0, 50));
    }

    @Test
    void aRateWhoseScheduleCannotFitItsStageIsRefused() {
        LoadSpec load = new LoadSpec();
        load.setStages(
                List.of(
                        StageSpec.rate(1e-11, 12, null),
                        StageSpec.rate(0.05, null, "10s"),
                        StageSpec.rate(0.2, null, "10s"),
                        StageSpec.rate(0.01, 1000, null)));
        List<String> problems = SpecValidation.validateLoad(load, "spec.load");
        assertThat(problems)
                .anySatisfy(
                        p ->
                                assertThat(p)
                                        .startsWith("spec.load.stages[0].requestRate: 12 requests")
                                        .contains("7 days"))
                .anySatisfy(
                        p ->
                                assertThat(p)
                                        .startsWith("spec.load.stages[1].requestRate:")
                                        .contains("longer than the stage's duration 10s"))
                .noneSatisfy(p -> assertThat(p).startsWith("spec.load.stages[2]"))
                .noneSatisfy(p -> assertThat(p).startsWith("spec.load.stages[3]"));
        LoadSpec rates = new LoadSpec();
        rates.setRequestRates(List.of(1e-9));
        rates.setNumPrompts(100);
        assertThat(SpecValidation.validateLoad(rates, "spec.load"))
                .anySatisfy(
                        p -> assertThat(p).startsWith("spec.load.requestRates[0]: 100 requests"));
    }

    @Test
    void stageProblemsNameTheStage() {
        LoadSpec load = new LoadSpec();
        StageSpec both = StageSpec.rate(1, 10, null);
        both.setConcurrency(2);
        StageSpec unbounded = new StageSpec();
        unbounded.setRequestRate(-1.0);
        load.setStages(List.of(both, unbounded));
        List<String> problems = SpecValidation.validateLoad(load, "load");
        assertThat(problems)
                .anyMatch(p -> p.startsWith("load.stages[0]: exactly one of requestRate"))
                .anyMatch(p -> p.startsWith("load.stages[1]: at least one of numPrompts"))
                .anyMatch(p -> p.startsWith("load.stages[1].requestRate: must be greater than 0"));
    }

    @Test
    void repeatsRunTheStagesOverInterleavedWithinTheStageBoundAndNotWithASearch() {
        LoadSpec load = new LoadSpec();
        load.setStages(List.of(StageSpec.rate(2, 50, null), StageSpec.rate(8, 100, null)));
        load.setRepeats(3);
        assertThat(SpecValidation.validateLoad(load, "spec.load")).isEmpty();
        assertThat(load.resolvedStages())
                .extracting(StageSpec::getRequestRate)
                .containsExactly(2.0, 8.0, 2.0, 8.0, 2.0, 8.0);
        assertThat(load.repeatCount()).isEqualTo(3);
        load.setRepeats(26);
        assertThat(SpecValidation.validateLoad(load, "spec.load"))
                .containsExactly(
                        "spec.load.repeats: repeats times the stages (or requestRates) must be at"
                                + " most 50: each repeat of a stage is a profile of its own (26 x"
                                + " 2)");
        load.setRepeats(0);
        assertThat(SpecValidation.validateLoad(load, "spec.load"))
                .containsExactly("spec.load.repeats: must be 1 to 50, got 0");
        LoadSpec probes = new LoadSpec();
        probes.setNumPrompts(100);
        probes.setRepeats(2);
        assertThat(SpecValidation.validateLoad(probes, "spec.load", true))
                .singleElement()
                .asString()
                .startsWith("spec.load.repeats: spec.search decides its probes at run time");
        LoadSpec once = new LoadSpec();
        once.setRequestRates(List.of(1.0, 2.0));
        once.setNumPrompts(10);
        assertThat(once.repeatCount()).isEqualTo(1);
        assertThat(once.resolvedStages()).hasSize(2);
    }

    private static RampUpSpec ramp(RampUpSpec.RampStrategy strategy, Double start) {
        RampUpSpec ramp = new RampUpSpec();
        ramp.setStrategy(strategy);
        ramp.setStartRate(start);
        return ramp;
    }

    @Test
    void aRampRisesToItsStagesRateAndEachProblemNamesItsField() {
        StageSpec good = StageSpec.rate(20, null, "30s");
        good.setRampUp(ramp(RampUpSpec.RampStrategy.LINEAR, 0.0));
        StageSpec overRequests = StageSpec.rate(20, 100, null);
        overRequests.setRampUp(ramp(RampUpSpec.RampStrategy.EXPONENTIAL, 2.0));
        LoadSpec load = new LoadSpec();
        load.setStages(List.of(good, overRequests));
        assertThat(SpecValidation.validateLoad(load, "load")).isEmpty();

        StageSpec closed = new StageSpec();
        closed.setConcurrency(4);
        closed.setNumPrompts(10);
        closed.setRampUp(ramp(RampUpSpec.RampStrategy.LINEAR, 1.0));
        StageSpec above = StageSpec.rate(20, 100, null);
        above.setRampUp(ramp(RampUpSpec.RampStrategy.LINEAR, 25.0));
        StageSpec exponentialFromZero = StageSpec.rate(20, null, "10s");
        exponentialFromZero.setRampUp(ramp(RampUpSpec.RampStrategy.EXPONENTIAL, 0.0));
        StageSpec fromZeroWithoutDuration = StageSpec.rate(20, 100, null);
        fromZeroWithoutDuration.setRampUp(ramp(RampUpSpec.RampStrategy.LINEAR, 0.0));
        StageSpec noStart = StageSpec.rate(20, 100, null);
        noStart.setRampUp(ramp(RampUpSpec.RampStrategy.LINEAR, null));
        StageSpec negative = StageSpec.rate(20, 100, null);
        negative.setRampUp(ramp(RampUpSpec.RampStrategy.LINEAR, -1.0));
        load.setStages(
                List.of(
                        closed,
                        above,
                        exponentialFromZero,
                        fromZeroWithoutDuration,
                        noStart,
                        negative));
        assertThat(SpecValidation.validateLoad(load, "load"))
                .containsExactly(
                        "load.stages[0].rampUp: ramps a requestRate (its end rate); a concurrency"
                                + " stage has none",
                        "load.stages[1].rampUp.startRate: 25.0 is above the stage's requestRate"
                                + " 20.0 (the rate the ramp rises to)",
                        "load.stages[2].rampUp.startRate: an exponential ramp needs startRate > 0,"
                                + " got 0",
                        "load.stages[3].rampUp.startRate: a ramp from 0 needs the stage's duration"
                                + " (over its numPrompts alone the first request would never be"
                                + " followed)",
                        "load.stages[4].rampUp.startRate: required (requests/s at the stage's"
                                + " start)",
                        "load.stages[5].rampUp.startRate: must be >= 0, got -1.0");
    }

    @Test
    void aConcurrencyAboveTheLimitIsAllowedOnlyWhenThePromptsBoundIt() {
        StageSpec bounded = new StageSpec();
        bounded.setConcurrency(Integer.MAX_VALUE);
        bounded.setNumPrompts(5);
        StageSpec unbounded = new StageSpec();
        unbounded.setConcurrency(Integer.MAX_VALUE);
        unbounded.setDuration("10s");
        LoadSpec load = new LoadSpec();
        load.setStages(List.of(bounded, unbounded));
        assertThat(SpecValidation.validateLoad(load, "load"))
                .containsExactly(
                        "load.stages[1].concurrency: at most 100000 requests in flight, got"
                                + " 2147483647 (more only with numPrompts at most 100000)");

        LoadSpec capped = new LoadSpec();
        capped.setRequestRates(List.of(Double.POSITIVE_INFINITY));
        capped.setDuration("2s");
        capped.setMaxConcurrency(Integer.MAX_VALUE);
        capped.setWarmupRequests(100_001);
        assertThat(SpecValidation.validateLoad(capped, "load"))
                .contains(
                        "load.maxConcurrency: at most 100000 requests in flight, got 2147483647"
                                + " (leave it unset for no cap)",
                        "load.warmupRequests: at most 100000, got 100001");
    }

    @Test
    void badDurationsAndBurstinessAreReported() {
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(1.0));
        load.setDuration("0s");
        load.setCooldown("10");
        load.setBurstiness(0.5);
        assertThat(SpecValidation.validateLoad(load, "load"))
                .anyMatch(p -> p.startsWith("load.duration: must be greater than zero"))
                .anyMatch(p -> p.startsWith("load.cooldown: invalid duration '10'"))
                .anyMatch(p -> p.startsWith("load.burstiness: burstiness other than 1"));
    }

    @Test
    void datasetRulesMatchTheCrd() {
        WorkloadSpec workload = new WorkloadSpec();
        workload.getDataset().setType(DatasetType.SHAREGPT);
        workload.getDataset().setInputTokens(TokenDistribution.uniform(10, 5));
        assertThat(SpecValidation.validateWorkload(workload, "workload"))
                .anyMatch(p -> p.startsWith("workload.dataset.source: is required"))
                .anyMatch(p -> p.startsWith("workload.dataset.inputTokens: applies only"))
                .anyMatch(p -> p.startsWith("workload.dataset.inputTokens.min: 10 is greater"));
    }

    @Test
    void prefixRepetitionRulesMatchTheCrd() {
        WorkloadSpec workload = new WorkloadSpec();
        workload.getDataset().setType(DatasetType.PREFIX_REPETITION);
        workload.getDataset().setPrefixRepetition(PrefixRepetitionSpec.of(512, 64, 4));
        assertThat(SpecValidation.validateWorkload(workload, "workload")).isEmpty();

        workload.getDataset().setPrefixRepetition(PrefixRepetitionSpec.of(0, 2_000_000, 0));
        workload.getDataset().setInputTokens(TokenDistribution.fixed(10));
        DatasetSource source = new DatasetSource();
        source.setUrl("https://example.com/data.json");
        workload.getDataset().setSource(source);
        assertThat(SpecValidation.validateWorkload(workload, "workload"))
                .contains(
                        "workload.dataset.source: must not be set for type random or"
                                + " prefix_repetition (prompts are synthetic)",
                        "workload.dataset.prefixRepetition.prefixTokens: must be at least 1, got 0",
                        "workload.dataset.prefixRepetition.suffixTokens: must be at most 1000000,"
                                + " got 2000000",
                        "workload.dataset.prefixRepetition.prefixes: must be at least 1, got 0")
                .anyMatch(p -> p.startsWith("workload.dataset.inputTokens: applies only"));

        workload.getDataset().setType(DatasetType.JSONL);
        workload.getDataset().setInputTokens(null);
        workload.getDataset().setPrefixRepetition(new PrefixRepetitionSpec());
        assertThat(SpecValidation.validateWorkload(workload, "workload"))
                .containsExactly(
                        "workload.dataset.prefixRepetition: applies only to type"
                                + " prefix_repetition");
    }

    @Test
    void aDeclaredPrefixCacheNeedsItsState() {
        WorkloadSpec workload = new WorkloadSpec();
        workload.setPrefixCache(PrefixCacheSpec.of(PrefixCacheSpec.State.COLD));
        assertThat(SpecValidation.validateWorkload(workload, "spec.workload")).isEmpty();
        workload.setPrefixCache(new PrefixCacheSpec());
        assertThat(SpecValidation.validateWorkload(workload, "spec.workload"))
                .containsExactly("spec.workload.prefixCache.state: is required (cold or warm)");
    }

    @Test
    void aWarmPrefixCacheNeedsPrefixesToHoldAndOneModel() {
        WorkloadSpec workload = new WorkloadSpec();
        workload.setPrefixCache(PrefixCacheSpec.of(PrefixCacheSpec.State.WARM));
        DatasetSpec dataset = new DatasetSpec();
        dataset.setType(DatasetType.RANDOM);
        workload.setDataset(dataset);
        assertThat(SpecValidation.validateWorkload(workload, "spec.workload"))
                .containsExactly(
                        "spec.workload.prefixCache.state: warm needs dataset.type"
                                + " prefix_repetition, whose shared prefixes are what a warm cache"
                                + " holds; other prompts declare none (use cold)");
        dataset.setType(DatasetType.PREFIX_REPETITION);
        assertThat(SpecValidation.validateWorkload(workload, "spec.workload")).isEmpty();
        // Warm on top of what the caches hold: allowed; a cold cache needs its reset.
        workload.getPrefixCache().setReset(false);
        assertThat(SpecValidation.validateWorkload(workload, "spec.workload")).isEmpty();
        workload.getPrefixCache().setState(PrefixCacheSpec.State.COLD);
        assertThat(SpecValidation.validateWorkload(workload, "spec.workload"))
                .containsExactly(
                        "spec.workload.prefixCache.reset: false is not with state cold: a cache"
                                + " that is not emptied before a stage is not known to be cold");
    }

    @Test
    void everyRunnerPodNeedsWork() {
        BenchmarkRunSpec spec = validSpec();
        spec.getLoad().setNumPrompts(3);
        spec.getRunner().setParallelism(4);
        assertThat(SpecValidation.validate(spec))
                .containsExactly(
                        "spec.load.numPrompts: 3 is lower than spec.runner.parallelism 4; every"
                                + " runner pod needs at least one prompt");
        LoadSpec closed = new LoadSpec();
        closed.setStages(List.of(StageSpec.concurrency(2, 100, null)));
        assertThat(SpecValidation.validateShares(closed, 4))
                .containsExactly(
                        "spec.load.stages[0].concurrency: 2 is lower than spec.runner.parallelism"
                                + " 4; every runner pod needs at least one request in flight");
    }

    @Test
    void prometheusSectionIsCheckedLikeTheSchema() {
        BenchmarkRunSpec spec = validSpec();
        PrometheusSpec prometheus = new PrometheusSpec();
        prometheus.setUrl("http://prometheus.monitoring:9090/prefix");
        prometheus.setSelector("{namespace=\"llm\", job=~'vllm-.*',}");
        prometheus.setLabels(java.util.Map.of("cluster", "east"));
        prometheus.setStep("500ms");
        spec.getMetrics().setPrometheus(prometheus);
        assertThat(SpecValidation.validate(spec)).isEmpty();

        prometheus.setUrl("http://user:pw@prometheus:9090");
        prometheus.setSelector("up{job=\"x\"}");
        prometheus.setLabels(java.util.Map.of("k8s-ns", "x"));
        prometheus.setReplicaLabel("pod name");
        prometheus.setStep("0s");
        prometheus.setTimeout("30");
        spec.getMetrics().setEnabled(false);
        assertThat(SpecValidation.validate(spec))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus: needs spec.metrics.enabled"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.url: must be an http://"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.selector: must be PromQL"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.labels: 'k8s-ns'"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.replicaLabel: must be"))
                .anyMatch(p -> p.equals("spec.metrics.prometheus.step: must be greater than zero"))
                .anyMatch(p -> p.startsWith("spec.metrics.prometheus.timeout: invalid duration"))
                .hasSize(7);
    }

    private static WorkloadSpec traceWorkload(TraceSpec trace) {
        DatasetSpec dataset = new DatasetSpec();
        dataset.setType(DatasetType.TRACE);
        DatasetSource source = new DatasetSource();
        source.setUrl("file:///traces/mooncake.jsonl");
        dataset.setSource(source);
        dataset.setTrace(trace);
        WorkloadSpec workload = new WorkloadSpec();
        workload.setDataset(dataset);
        return workload;
    }

    @Test
    void aTraceKeepsItsRecordedLengthsAndAnOrderedWindow() {
        TraceSpec trace = new TraceSpec();
        trace.setTimeScale(0.0);
        trace.setStart("2m");
        trace.setEnd("1m");
        trace.setBlockTokens(0);
        WorkloadSpec workload = traceWorkload(trace);
        workload.getDataset().setOutputTokens(TokenDistribution.fixed(5));
        workload.getDataset().setMaxInputTokens(100);
        assertThat(SpecValidation.validateWorkload(workload, "workload"))
                .containsExactlyInAnyOrder(
                        "workload.dataset.outputTokens: does not apply to type trace (its"
                                + " requests keep their recorded lengths; narrow the replay with"
                                + " trace.start and trace.end)",
                        "workload.dataset.maxInputTokens: does not apply to type trace (its"
                                + " requests keep their recorded lengths; narrow the replay with"
                                + " trace.start and trace.end)",
                        "workload.dataset.trace.timeScale: must be within [0.0001, 10000]"
                                + " (offsets are multiplied by it), got 0.0",
                        "workload.dataset.trace.blockTokens: must be at least 1, got 0",
                        "workload.dataset.trace.start: must be before trace.end (2m is not"
                                + " before 1m)");
        assertThat(SpecValidation.validateWorkload(traceWorkload(new TraceSpec()), "workload"))
                .isEmpty();
        WorkloadSpec random = new WorkloadSpec();
        random.setDataset(new DatasetSpec());
        random.getDataset().setTrace(new TraceSpec());
        assertThat(SpecValidation.validateWorkload(random, "workload"))
                .containsExactly("workload.dataset.trace: applies only to type trace");
    }

    @Test
    void aReplayedLoadHasNoRatesButMayHaveConcurrencyStages() {
        LoadSpec replay = new LoadSpec();
        assertThat(SpecValidation.validateReplay(replay, "load")).isEmpty();
        replay.setNumPrompts(100);
        replay.setDuration("10m");
        assertThat(SpecValidation.validateReplay(replay, "load")).isEmpty();

        LoadSpec rated = new LoadSpec();
        rated.setRequestRates(List.of(5.0));
        rated.setArrival(ArrivalProcess.CONSTANT);
        assertThat(SpecValidation.validateReplay(rated, "load"))
                .containsExactly(
                        "load.requestRates: a trace sets its own arrival times; scale them with"
                                + " trace.timeScale",
                        "load.arrival: a trace sets its own arrival times; scale them with"
                                + " trace.timeScale");

        LoadSpec stages = new LoadSpec();
        StageSpec closed = new StageSpec();
        closed.setConcurrency(4);
        stages.setStages(List.of(closed, StageSpec.rate(2.0, 10, null)));
        assertThat(SpecValidation.validateReplay(stages, "load"))
                .containsExactly(
                        "load.stages[1]: a trace sets its own arrival times; scale them with"
                                + " trace.timeScale (a concurrency stage sends its requests in"
                                + " order as a closed loop)");
        stages.setStages(List.of(closed));
        stages.setMaxConcurrency(0);
        assertThat(SpecValidation.validateReplay(stages, "load"))
                .containsExactly("load.maxConcurrency: must be at least 1, got 0");
    }

    @Test
    void aBenchmarkRunReplaysATraceWithoutRatesOrSearch() {
        BenchmarkRunSpec spec = validSpec();
        spec.setWorkload(traceWorkload(null));
        spec.setLoad(new LoadSpec());
        assertThat(SpecValidation.validate(spec)).isEmpty();
        spec.getLoad().setNumPrompts(1);
        RunnerSpec runner = new RunnerSpec();
        runner.setParallelism(2);
        spec.setRunner(runner);
        assertThat(SpecValidation.validate(spec))
                .containsExactly(
                        "spec.load: 1 prompts for 2 runner pods; every runner pod needs at least"
                                + " one prompt");
        BenchmarkRunSpec rated = validSpec();
        rated.setWorkload(traceWorkload(null));
        assertThat(SpecValidation.validate(rated))
                .containsExactly(
                        "spec.load.requestRates: a trace sets its own arrival times; scale them"
                                + " with trace.timeScale");
    }

    private static WorkloadSpec conversationWorkload(DatasetType type) {
        DatasetSpec dataset = new DatasetSpec();
        dataset.setType(type);
        dataset.setConversation(ConversationSpec.of(0, "soon", null));
        WorkloadSpec workload = new WorkloadSpec();
        workload.setDataset(dataset);
        return workload;
    }

    @Test
    void aConversationIsOfRandomPromptsWithTurnsAndAThinkTime() {
        assertThat(SpecValidation.validateWorkload(conversationWorkload(DatasetType.RANDOM), "w"))
                .containsExactly(
                        "w.dataset.conversation.turns: must be at least 1, got 0",
                        "w.dataset.conversation.thinkTime: invalid duration 'soon'; use a number"
                                + " with unit ms, s, m or h, e.g. 500ms, 30s, 5m or 1h30m");
        WorkloadSpec shareGpt = conversationWorkload(DatasetType.SHAREGPT);
        shareGpt.getDataset().setConversation(ConversationSpec.of(3, "1s", null));
        DatasetSource inline = new DatasetSource();
        inline.setInline("[]");
        shareGpt.getDataset().setSource(inline);
        assertThat(SpecValidation.validateWorkload(shareGpt, "w")).isEmpty();
        WorkloadSpec jsonl = conversationWorkload(DatasetType.JSONL);
        jsonl.getDataset().setConversation(ConversationSpec.of(3, "1s", null));
        jsonl.getDataset().setSource(inline);
        assertThat(SpecValidation.validateWorkload(jsonl, "w"))
                .containsExactly(
                        "w.dataset.conversation: applies only to type random (synthetic sessions)"
                                + " or sharegpt (recorded conversations)");
    }

    @Test
    void aConversationLoadRunsSessionsInStagesOfUsersOrOfASessionRate() {
        LoadSpec load = new LoadSpec();
        StageSpec users = new StageSpec();
        users.setConcurrency(4);
        users.setNumPrompts(20);
        load.setStages(List.of(users, StageSpec.rate(0.5, 30, "2m")));
        assertThat(SpecValidation.validateConversationLoad(load, "load")).isEmpty();

        LoadSpec rated = new LoadSpec();
        rated.setRequestRates(List.of(5.0));
        rated.setMaxConcurrency(3);
        assertThat(SpecValidation.validateConversationLoad(rated, "load"))
                .containsExactly(
                        "load.requestRates: a conversation workload runs sessions: give"
                                + " load.stages, each with numPrompts (sessions to run) and"
                                + " concurrency (sessions in progress at once) or requestRate"
                                + " (sessions started per second)",
                        "load.maxConcurrency: does not apply to a conversation workload (its"
                                + " sessions set how many requests are in flight)",
                        "load.stages: is required: each stage of a conversation workload sets"
                                + " numPrompts (sessions to run) and concurrency (sessions in"
                                + " progress at once) or requestRate (sessions started per"
                                + " second)");

        LoadSpec incomplete = new LoadSpec();
        StageSpec slow = StageSpec.rate(0.001, 10, "1m");
        incomplete.setStages(List.of(new StageSpec(), slow));
        assertThat(SpecValidation.validateConversationLoad(incomplete, "load"))
                .containsExactly(
                        "load.stages[0]: exactly one of concurrency (sessions in progress at once)"
                                + " or requestRate (sessions started per second) must be set",
                        "load.stages[0].numPrompts: is required (sessions to run in the stage)",
                        "load.stages[1].requestRate: 0.001 sessions/s puts 1.00e+03 s between"
                                + " sessions on average, longer than the stage's duration 1m:"
                                + " the stage would send at most one session; raise the rate or"
                                + " lengthen the stage");
    }

    @Test
    void aBenchmarkRunRunsConversationsInStagesOfSessionsSharedByItsPods() {
        BenchmarkRunSpec spec = validSpec();
        DatasetSpec dataset = new DatasetSpec();
        dataset.setConversation(ConversationSpec.of(3, "1s", ThinkTimeDistribution.FIXED));
        WorkloadSpec workload = new WorkloadSpec();
        workload.setDataset(dataset);
        spec.setWorkload(workload);
        assertThat(SpecValidation.validate(spec))
                .contains(
                        "spec.target.api: a conversation workload needs chat, whose messages"
                                + " carry a session's history");
        spec.getTarget().setApi(ApiKind.CHAT);
        assertThat(SpecValidation.validate(spec))
                .contains(
                        "spec.load.requestRates: a conversation workload runs sessions: give"
                                + " load.stages, each with numPrompts (sessions to run) and"
                                + " concurrency (sessions in progress at once) or requestRate"
                                + " (sessions started per second)");
        LoadSpec load = new LoadSpec();
        StageSpec users = new StageSpec();
        users.setConcurrency(2);
        users.setNumPrompts(10);
        load.setStages(List.of(users));
        spec.setLoad(load);
        assertThat(SpecValidation.validate(spec)).isEmpty();
        RunnerSpec runner = new RunnerSpec();
        runner.setParallelism(3);
        spec.setRunner(runner);
        assertThat(SpecValidation.validate(spec))
                .containsExactly(
                        "spec.load.stages[0].concurrency: 2 is lower than"
                                + " spec.runner.parallelism 3; every runner pod needs at least one"
                                + " request in flight");
    }

    @Test
    void aModelMixNamesEachModelOnceWithAWeightAboveZeroAndReplacesTargetModel() {
        BenchmarkRunSpec spec = validSpec();
        WorkloadSpec workload = new WorkloadSpec();
        workload.setModels(
                List.of(
                        WeightedModel.of("base", 3),
                        WeightedModel.of("base", 1),
                        WeightedModel.of(" ", 1),
                        WeightedModel.of("lora", 0)));
        spec.setWorkload(workload);
        spec.getTarget().setModel("base");
        assertThat(SpecValidation.validate(spec))
                .containsExactly(
                        "spec.workload.models[1].name: 'base' is listed twice",
                        "spec.workload.models[2].name: is required",
                        "spec.workload.models[3].weight: must be > 0, got 0.0",
                        "spec.workload.models: set target.model or workload.models, not both:"
                                + " with models each request asks for one of them");
        spec.getTarget().setModel(null);
        workload.setModels(List.of(WeightedModel.of("base", 3), WeightedModel.of("lora", 1)));
        assertThat(SpecValidation.validate(spec)).isEmpty();
        assertThat(WeightedModel.describe(workload.getModels())).isEqualTo("base:3 lora:1");
    }
}
