package io.inferencebench.runner.pod;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.DatasetSpec;
import io.inferencebench.crds.v1alpha1.LoadSpec;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.StageSpec;
import io.inferencebench.crds.v1alpha1.TokenDistribution;
import io.inferencebench.crds.v1alpha1.WorkloadSpec;
import io.inferencebench.crds.workorder.PartReport;
import io.inferencebench.crds.workorder.ProgressReport;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShares;
import io.inferencebench.profile.lpg.StageResult;
import io.inferencebench.runner.stub.OpenAiStub;
import io.inferencebench.runner.stub.StubServer;
import io.inferencebench.testkit.ApiServerFixture;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pod mode against a real API server: the test plays the operator (work order, BenchmarkRun
 * owner, control ConfigMap start instants) and runs runner pods in-process against a loopback
 * OpenAI stub. The runners use a client impersonating the runner ServiceAccount bound to the Role
 * from {@code config/rbac/runner}, narrowed to get, watch, create and patch, so the runner works
 * with those verbs alone.
 */
class PodModeIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String API_KEY = "sk-pod-mode-it-4a7c";
    private static final AtomicInteger NAMESPACES = new AtomicInteger();

    static ApiServerFixture fixture;
    static KubernetesClient admin;
    static StubServer server;
    static final String DISCOVERED_MODEL = "acme/pod-discovered-3b";
    static final ConcurrentLinkedQueue<String> authorizations = new ConcurrentLinkedQueue<>();

    /** Tokenizer probes (a vllm target's /tokenize, asked once per pod while building prompts). */
    static final java.util.concurrent.atomic.AtomicInteger tokenizerCalls =
            new java.util.concurrent.atomic.AtomicInteger();

    /** Model discoveries (GET /v1/models, asked by a pod whose work order names no model). */
    static final AtomicInteger modelsCalls = new AtomicInteger();

    /** The model field of every load request. */
    static final ConcurrentLinkedQueue<String> requestedModels = new ConcurrentLinkedQueue<>();

    /** What the stub saw of each generation request: when (nanoTime), its prompt and max_tokens. */
    /**
     * A request as the stub saw it.
     *
     * @param prompt a completion's prompt, or a chat's messages' contents one per line
     */
    record Arrival(long nanos, String prompt, int maxTokens) {}

    private static String promptOf(com.fasterxml.jackson.databind.JsonNode body) {
        if (!body.has("messages")) {
            return body.path("prompt").asText();
        }
        List<String> contents = new ArrayList<>();
        body.get("messages").forEach(m -> contents.add(m.path("content").asText()));
        return String.join("\n", contents);
    }

    static final ConcurrentLinkedQueue<Arrival> arrivals = new ConcurrentLinkedQueue<>();

    /** Requests of the load: everything but the tokenizer probes and model discoveries. */
    static int loadRequests() {
        return server.requests() - tokenizerCalls.get() - modelsCalls.get();
    }

    @TempDir Path scratch;

    @BeforeAll
    static void start() throws Exception {
        // Threads of a cancelled stage may end with an exception while its connections close;
        // that is expected and must not fail the next await.
        org.awaitility.Awaitility.doNotCatchUncaughtExceptionsByDefault();
        fixture = ApiServerFixture.shared();
        admin = fixture.client();
        if (admin.apiextensions()
                        .v1()
                        .customResourceDefinitions()
                        .withName(BenchmarkRun.CRD_NAME)
                        .get()
                == null) {
            try (InputStream yaml =
                    BenchmarkRun.class.getResourceAsStream(
                            "/META-INF/fabric8/benchmarkruns.inferencebench.io-v1.yml")) {
                CustomResourceDefinition crd =
                        admin.apiextensions().v1().customResourceDefinitions().load(yaml).item();
                admin.apiextensions().v1().customResourceDefinitions().resource(crd).create();
            }
            admin.apiextensions()
                    .v1()
                    .customResourceDefinitions()
                    .withName(BenchmarkRun.CRD_NAME)
                    .waitUntilCondition(
                            c ->
                                    c.getStatus() != null
                                            && c.getStatus().getConditions() != null
                                            && c.getStatus().getConditions().stream()
                                                    .anyMatch(
                                                            x ->
                                                                    x.getType()
                                                                                    .equals(
                                                                                            "Established")
                                                                            && x.getStatus()
                                                                                    .equals(
                                                                                            "True")),
                            60,
                            TimeUnit.SECONDS);
        }
        OpenAiStub stub = new OpenAiStub(5, 1, true);
        server =
                new StubServer(
                        (request, exchange) -> {
                            if (request.path().endsWith("tokenize")) {
                                // As a server without tokenizer endpoints: text prompts.
                                tokenizerCalls.incrementAndGet();
                                exchange.respond(404, "application/json", "{}");
                                return;
                            }
                            if (request.path().equals("/v1/models")) {
                                modelsCalls.incrementAndGet();
                                exchange.respond(
                                        200,
                                        "application/json",
                                        "{\"object\":\"list\",\"data\":[{\"id\":\""
                                                + DISCOVERED_MODEL
                                                + "\",\"object\":\"model\"}]}");
                                return;
                            }
                            arrivals.add(
                                    new Arrival(
                                            System.nanoTime(),
                                            promptOf(request.json()),
                                            request.json().path("max_tokens").asInt()));
                            authorizations.add(String.valueOf(request.header("Authorization")));
                            requestedModels.add(request.json().path("model").asText());
                            stub.handle(request, exchange);
                        });
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    /** A namespace with the runner ServiceAccount's Role and a BenchmarkRun to own the parts. */
    record Run(String namespace, String name, String uid, KubernetesClient runnerClient) {}

    static Run newRun(String name) throws Exception {
        String ns = "pod-mode-" + NAMESPACES.incrementAndGet();
        admin.namespaces()
                .resource(
                        new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                .create();
        Path rbac = Path.of("../config/rbac/runner/runner.yaml");
        for (HasMetadata item : admin.load(Files.newInputStream(rbac)).items()) {
            item.getMetadata().setNamespace(ns);
            if (item instanceof io.fabric8.kubernetes.api.model.rbac.Role role) {
                // Prove the runner needs no more than these verbs (a subset of the shipped Role).
                role.getRules()
                        .forEach(
                                rule ->
                                        rule.getVerbs()
                                                .retainAll(
                                                        List.of(
                                                                "get", "watch", "create",
                                                                "patch")));
            }
            if (item instanceof io.fabric8.kubernetes.api.model.rbac.RoleBinding binding) {
                binding.getSubjects().forEach(s -> s.setNamespace(ns));
            }
            admin.resource(item).inNamespace(ns).create();
        }
        String manifest =
                """
                apiVersion: inferencebench.io/v1alpha1
                kind: BenchmarkRun
                metadata:
                  name: %s
                spec:
                  target:
                    url: %s
                    model: stub
                  load:
                    requestRates: [10]
                    numPrompts: 10
                """
                        .formatted(name, server.baseUrl());
        BenchmarkRun run =
                admin.resources(BenchmarkRun.class)
                        .inNamespace(ns)
                        .load(new java.io.ByteArrayInputStream(manifest.getBytes()))
                        .create();
        Config config = Config.fromKubeconfig(fixture.kubeconfigYaml());
        config.setImpersonateUsername("system:serviceaccount:" + ns + ":inferencebench-runner");
        config.setImpersonateGroups(
                "system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated");
        KubernetesClient runnerClient = new KubernetesClientBuilder().withConfig(config).build();
        return new Run(ns, name, run.getMetadata().getUid(), runnerClient);
    }

    static RunnerWorkOrder workOrder(Run run, LoadSpec load, int parallelism, boolean key) {
        return workOrder(run, load, parallelism, key, "stub");
    }

    static RunnerWorkOrder workOrder(
            Run run, LoadSpec load, int parallelism, boolean key, String model) {
        WorkloadSpec workload = new WorkloadSpec();
        DatasetSpec dataset = new DatasetSpec();
        dataset.setInputTokens(TokenDistribution.fixed(16));
        dataset.setOutputTokens(TokenDistribution.fixed(4));
        workload.setDataset(dataset);
        return workOrder(run, load, parallelism, key, model, workload);
    }

    /** The work order of {@code workload} (whose stages the operator plans from {@code load}). */
    static RunnerWorkOrder workOrder(
            Run run,
            LoadSpec load,
            int parallelism,
            boolean key,
            String model,
            WorkloadSpec workload) {
        return workOrder(run, load, parallelism, key, model, workload, "completions");
    }

    /** The work order of {@code workload} through {@code api} (completions or chat). */
    static RunnerWorkOrder workOrder(
            Run run,
            LoadSpec load,
            int parallelism,
            boolean key,
            String model,
            WorkloadSpec workload,
            String api) {
        boolean trace =
                workload.getDataset() != null
                        && workload.getDataset().getType()
                                == io.inferencebench.crds.v1alpha1.DatasetType.TRACE;
        return new RunnerWorkOrder(
                run.name(),
                run.namespace(),
                run.uid(),
                parallelism,
                server.baseUrl(),
                api.equals("chat") ? "/v1/chat/completions" : "/v1/completions",
                "vllm",
                api,
                model,
                Map.of("X-Bench", "pod-mode"),
                key,
                workload,
                load,
                StageShares.of(load, parallelism, trace),
                null,
                ResourceNames.control(run.name()),
                run.name() + "-part-",
                1,
                null,
                null,
                null);
    }

    static void publishWorkOrder(Run run, RunnerWorkOrder order) throws Exception {
        admin.configMaps()
                .inNamespace(run.namespace())
                .resource(
                        new ConfigMapBuilder()
                                .withNewMetadata()
                                .withName(ResourceNames.runner(run.name()))
                                .endMetadata()
                                .withData(
                                        Map.of(RunnerWorkOrder.KEY, JSON.writeValueAsString(order)))
                                .build())
                .create();
    }

    private PodSettings settings(Run run, int index, Path workOrderFile, String apiKey) {
        return new PodSettings(
                run.name(),
                run.namespace(),
                "pod-" + index,
                index,
                workOrderFile,
                apiKey,
                null,
                null,
                scratch.resolve("pod-" + index),
                false,
                Duration.ofSeconds(1),
                Duration.ofMillis(500),
                Duration.ofMillis(300));
    }

    private static CompletableFuture<Integer> startPod(
            Run run, PodSettings settings, StringWriter log) {
        return CompletableFuture.supplyAsync(
                () ->
                        new PodRun(
                                        settings,
                                        run.runnerClient(),
                                        new PrintWriter(log, true),
                                        Clock.systemUTC())
                                .run(),
                r -> Thread.ofPlatform().name("pod-" + settings.index()).start(r));
    }

    /** Two runner pods of {@code run}, ready, through one stage's barrier a second on, done. */
    private void twoPodsRunOneStage(Run run) throws Exception {
        StringWriter log0 = new StringWriter();
        StringWriter log1 = new StringWriter();
        CompletableFuture<Integer> pod0 = startPod(run, settings(run, 0, null, null), log0);
        CompletableFuture<Integer> pod1 = startPod(run, settings(run, 1, null, null), log1);
        awaitReady(run, 0);
        awaitReady(run, 1);
        openBarrier(run, 1, Instant.now().plusSeconds(1));
        assertThat(pod0.get(60, TimeUnit.SECONDS)).as(log0.toString()).isZero();
        assertThat(pod1.get(60, TimeUnit.SECONDS)).as(log1.toString()).isZero();
    }

    /** Waits up to 60 s; on timeout the failure carries both pods' logs. */
    private static void awaitOrShowLogs(
            java.util.concurrent.Callable<Boolean> condition, StringWriter... logs) {
        try {
            await().atMost(Duration.ofSeconds(60)).until(condition);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            StringBuilder all = new StringBuilder(e.getMessage());
            for (int i = 0; i < logs.length; i++) {
                all.append("\n--- pod ").append(i).append(" log ---\n").append(logs[i]);
            }
            throw new AssertionError(all.toString(), e);
        }
    }

    private static ConfigMap part(Run run, int index) {
        return admin.configMaps()
                .inNamespace(run.namespace())
                .withName(ResourceNames.part(run.name(), index))
                .get();
    }

    /** One stage of {@code numPrompts} prompts at {@code rate} requests/s. */
    static LoadSpec oneStage(double rate, int numPrompts) {
        LoadSpec load = new LoadSpec();
        load.setRequestRates(List.of(rate));
        load.setNumPrompts(numPrompts);
        return load;
    }

    /** Waits up to 60 s until runner pod {@code index} reports ready at the first barrier. */
    static void awaitReady(Run run, int index) {
        await().atMost(Duration.ofSeconds(60))
                .until(() -> PartReport.STATE_READY.equals(data(run, index, PartReport.STATE)));
    }

    /** Opens stage {@code stage}'s start barrier at {@code at} in the control ConfigMap. */
    static void openBarrier(Run run, int stage, Instant at) {
        control(run, Map.of(RunnerWorkOrder.stageStartKey(stage), at.toString()));
    }

    static String data(Run run, int index, String key) {
        ConfigMap cm = part(run, index);
        return cm == null || cm.getData() == null ? null : cm.getData().get(key);
    }

    static void control(Run run, Map<String, String> data) {
        String name = ResourceNames.control(run.name());
        if (admin.configMaps().inNamespace(run.namespace()).withName(name).get() == null) {
            admin.configMaps()
                    .inNamespace(run.namespace())
                    .resource(
                            new ConfigMapBuilder()
                                    .withNewMetadata()
                                    .withName(name)
                                    .endMetadata()
                                    .withData(data)
                                    .build())
                    .create();
        } else {
            try {
                admin.configMaps()
                        .inNamespace(run.namespace())
                        .withName(name)
                        .patch(
                                PatchContext.of(PatchType.JSON_MERGE),
                                JSON.writeValueAsString(Map.of("data", data)));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static StageResult stageResult(Run run, int index, int stage) throws Exception {
        return JSON.readValue(
                data(run, index, PartReport.stageResultKey(stage)), StageResult.class);
    }

    @Test
    void twoPodsRunTwoStagesAtTheBarriersAndReportExactCounts() throws Exception {
        Run run = newRun("sweep");
        LoadSpec load = new LoadSpec();
        StageSpec rate = new StageSpec();
        rate.setRequestRate(20.0);
        rate.setNumPrompts(10);
        StageSpec closed = new StageSpec();
        closed.setConcurrency(2);
        closed.setNumPrompts(7);
        load.setStages(List.of(rate, closed));
        RunnerWorkOrder order = workOrder(run, load, 2, true);
        publishWorkOrder(run, order);
        Path orderFile = scratch.resolve("workorder.json");
        Files.writeString(orderFile, JSON.writeValueAsString(order));
        int requestsBefore = loadRequests();
        int probesBefore = tokenizerCalls.get();
        authorizations.clear();

        StringWriter log0 = new StringWriter();
        StringWriter log1 = new StringWriter();
        // Pod 0 reads the mounted file, pod 1 falls back to the ConfigMap through the API.
        CompletableFuture<Integer> pod0 = startPod(run, settings(run, 0, orderFile, API_KEY), log0);
        CompletableFuture<Integer> pod1 =
                startPod(run, settings(run, 1, scratch.resolve("absent.json"), API_KEY), log1);

        await().atMost(Duration.ofSeconds(60))
                .until(
                        () ->
                                PartReport.STATE_READY.equals(data(run, 0, PartReport.STATE))
                                        && PartReport.STATE_READY.equals(
                                                data(run, 1, PartReport.STATE)));
        ConfigMap part0 = part(run, 0);
        assertThat(part0.getMetadata().getLabels())
                .containsEntry("app.kubernetes.io/name", "inferencebench")
                .containsEntry("app.kubernetes.io/instance", run.name())
                .containsEntry("app.kubernetes.io/managed-by", "inferencebench-operator")
                .containsEntry("app.kubernetes.io/component", "runner")
                .containsEntry("inferencebench.io/part-index", "0");
        assertThat(part0.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(
                        o -> {
                            assertThat(o.getUid()).isEqualTo(run.uid());
                            assertThat(o.getKind()).isEqualTo("BenchmarkRun");
                            assertThat(o.getName()).isEqualTo(run.name());
                        });
        assertThat(part0.getData()).containsEntry(PartReport.RUN_UID, run.uid());
        // Nothing is sent before the start barrier.
        Thread.sleep(500);
        assertThat(loadRequests()).isEqualTo(requestsBefore);
        assertThat(tokenizerCalls.get() - probesBefore)
                .as("one /tokenize probe per pod")
                .isEqualTo(2);

        Instant start1 = Instant.now().plusSeconds(2);
        control(
                run,
                Map.of(
                        RunnerWorkOrder.stageStartKey(1),
                        start1.toString(),
                        RunnerWorkOrder.CANCEL_KEY,
                        "false"));
        awaitOrShowLogs(
                () ->
                        "1".equals(data(run, 0, PartReport.STAGES_DONE))
                                && "1".equals(data(run, 1, PartReport.STAGES_DONE)),
                log0,
                log1);
        assertThat(data(run, 0, PartReport.STATE)).isEqualTo(PartReport.STATE_RUNNING);
        long startNanos = start1.getEpochSecond() * 1_000_000_000L + start1.getNano();
        long sent1 = 0;
        for (int i = 0; i < 2; i++) {
            StageResult r = stageResult(run, i, 1);
            assertThat(r.completed).isEqualTo(5);
            assertThat(r.failed).isZero();
            assertThat(r.stageIndex).isZero();
            assertThat(r.requestedRate).isEqualTo(10.0);
            // The stage window begins at the barrier instant, not before.
            assertThat(r.firstDispatchEpochNanos).isGreaterThanOrEqualTo(startNanos);
            assertThat(r.firstDispatchEpochNanos - startNanos)
                    .isLessThan(Duration.ofMillis(1500).toNanos());
            sent1 += r.sent;
            ProgressReport progress = ProgressReport.fromJson(data(run, i, PartReport.PROGRESS));
            assertThat(progress.stage()).isEqualTo(1);
            assertThat(progress.completed()).isEqualTo(5);
        }
        assertThat(sent1).isEqualTo(10);
        assertThat(loadRequests() - requestsBefore).isEqualTo(10);
        // Stage 2 waits for its own barrier.
        assertThat(data(run, 0, PartReport.stageResultKey(2))).isNull();

        Instant start2 = Instant.now().plusSeconds(2);
        openBarrier(run, 2, start2);
        assertThat(pod0.get(60, TimeUnit.SECONDS)).as(log0.toString()).isZero();
        assertThat(pod1.get(60, TimeUnit.SECONDS)).as(log1.toString()).isZero();
        long sent2 = 0;
        for (int i = 0; i < 2; i++) {
            assertThat(data(run, i, PartReport.STATE)).isEqualTo(PartReport.STATE_DONE);
            assertThat(data(run, i, PartReport.STAGES_DONE)).isEqualTo("2");
            StageResult r = stageResult(run, i, 2);
            assertThat(r.completed).isEqualTo(i == 0 ? 4 : 3);
            assertThat(r.concurrency).isEqualTo(1);
            assertThat(r.stageIndex).isEqualTo(1);
            sent2 += r.sent;
        }
        assertThat(sent2).isEqualTo(7);
        assertThat(loadRequests() - requestsBefore).isEqualTo(17);
        // The API key reached the server as a bearer token and nowhere else.
        assertThat(authorizations).hasSize(17).containsOnly("Bearer " + API_KEY);
        for (int i = 0; i < 2; i++) {
            assertThat(JSON.writeValueAsString(part(run, i))).doesNotContain(API_KEY);
        }
        assertThat(log0.toString() + log1).doesNotContain(API_KEY).contains("stage 2/2 done");
        System.out.print(log0);
        System.out.print(log1);
        run.runnerClient().close();
    }

    @Test
    void twoPodsRunTheStagesOfASearchAsTheOperatorDecidesThemAndStopAtItsEnd() throws Exception {
        Run run = newRun("search");
        LoadSpec load = new LoadSpec();
        // A capacity search: no stages, only the size of every probe.
        load.setNumPrompts(12);
        RunnerWorkOrder order = workOrder(run, load, 2, false);
        assertThat(order.stages()).isEmpty();
        publishWorkOrder(run, order);
        int requestsBefore = loadRequests();
        StringWriter log0 = new StringWriter();
        StringWriter log1 = new StringWriter();
        CompletableFuture<Integer> pod0 =
                startPod(run, settings(run, 0, scratch.resolve("absent.json"), null), log0);
        CompletableFuture<Integer> pod1 =
                startPod(run, settings(run, 1, scratch.resolve("absent.json"), null), log1);
        awaitOrShowLogs(
                () ->
                        PartReport.STATE_READY.equals(data(run, 0, PartReport.STATE))
                                && PartReport.STATE_READY.equals(data(run, 1, PartReport.STATE)),
                log0,
                log1);
        assertThat(loadRequests()).isEqualTo(requestsBefore);

        // The test plays the operator: the first probe's barrier and rate (both pods together).
        Instant start1 = Instant.now().plusSeconds(2);
        control(
                run,
                Map.of(
                        RunnerWorkOrder.stageStartKey(1),
                        start1.toString(),
                        RunnerWorkOrder.stageRateKey(1),
                        "20",
                        RunnerWorkOrder.CANCEL_KEY,
                        "false"));
        awaitOrShowLogs(
                () ->
                        "1".equals(data(run, 0, PartReport.STAGES_DONE))
                                && "1".equals(data(run, 1, PartReport.STAGES_DONE)),
                log0,
                log1);
        long startNanos = start1.getEpochSecond() * 1_000_000_000L + start1.getNano();
        long sent1 = 0;
        long completed1 = 0;
        for (int i = 0; i < 2; i++) {
            StageResult r = stageResult(run, i, 1);
            assertThat(r.stageIndex).isZero();
            assertThat(r.requestedRate).as("each pod sends half the rate").isEqualTo(10.0);
            assertThat(r.completed).isEqualTo(6);
            assertThat(r.failed).isZero();
            assertThat(r.firstDispatchEpochNanos).isGreaterThanOrEqualTo(startNanos);
            sent1 += r.sent;
            completed1 += r.completed;
        }
        assertThat(sent1).isEqualTo(12);
        assertThat(completed1).isEqualTo(12);
        assertThat(loadRequests() - requestsBefore).isEqualTo(12);
        // Nothing more before the operator decides the next probe: the pods wait, alive.
        Thread.sleep(500);
        assertThat(pod0).isNotDone();
        assertThat(pod1).isNotDone();
        assertThat(data(run, 0, PartReport.stageResultKey(2))).isNull();
        assertThat(loadRequests() - requestsBefore).isEqualTo(12);

        Instant start2 = Instant.now().plusSeconds(2);
        control(
                run,
                Map.of(
                        RunnerWorkOrder.stageStartKey(2),
                        start2.toString(),
                        RunnerWorkOrder.stageRateKey(2),
                        "7"));
        awaitOrShowLogs(
                () ->
                        "2".equals(data(run, 0, PartReport.STAGES_DONE))
                                && "2".equals(data(run, 1, PartReport.STAGES_DONE)),
                log0,
                log1);
        long sent2 = 0;
        for (int i = 0; i < 2; i++) {
            StageResult r = stageResult(run, i, 2);
            assertThat(r.stageIndex).isEqualTo(1);
            assertThat(r.requestedRate).isEqualTo(3.5);
            assertThat(r.completed).isEqualTo(6);
            assertThat(r.failed).isZero();
            sent2 += r.sent;
        }
        assertThat(sent2).isEqualTo(12);
        Thread.sleep(500);
        assertThat(pod0).isNotDone();

        Instant start3 = Instant.now().plusSeconds(2);
        control(
                run,
                Map.of(
                        RunnerWorkOrder.stageStartKey(3),
                        start3.toString(),
                        RunnerWorkOrder.stageRateKey(3),
                        "10"));
        awaitOrShowLogs(
                () ->
                        "3".equals(data(run, 0, PartReport.STAGES_DONE))
                                && "3".equals(data(run, 1, PartReport.STAGES_DONE)),
                log0,
                log1);
        for (int i = 0; i < 2; i++) {
            assertThat(stageResult(run, i, 3).requestedRate).isEqualTo(5.0);
            // Stage 3's barrier means stage 1's merged result is stored in the run: the part
            // dropped it and keeps the last two.
            assertThat(data(run, i, PartReport.stageResultKey(1))).isNull();
            assertThat(data(run, i, PartReport.stageResultKey(2))).isNotNull();
        }

        // The search ended after three probes: the pods waiting for a fourth stop, done.
        control(run, Map.of(RunnerWorkOrder.STAGES_KEY, "3"));
        assertThat(pod0.get(60, TimeUnit.SECONDS)).as(log0.toString()).isZero();
        assertThat(pod1.get(60, TimeUnit.SECONDS)).as(log1.toString()).isZero();
        for (int i = 0; i < 2; i++) {
            assertThat(data(run, i, PartReport.STATE)).isEqualTo(PartReport.STATE_DONE);
            assertThat(data(run, i, PartReport.STAGES_DONE)).isEqualTo("3");
            assertThat(data(run, i, PartReport.stageResultKey(4))).isNull();
            assertThat(data(run, i, PartReporter.CANCELLED)).isNull();
        }
        assertThat(loadRequests() - requestsBefore).isEqualTo(36);
        assertThat(log0.toString())
                .contains("stages decided at run time")
                .contains("stage 2 (search) done: 6 ok")
                .contains("done: 3 stage(s)");
        System.out.print(log0);
        System.out.print(log1);
        run.runnerClient().close();
    }

    @Test
    void twoPodsRampTheirSharesAndTheirWindowsAddUpToTheWholeRamp() throws Exception {
        Run run = newRun("ramp");
        LoadSpec load = new LoadSpec();
        load.setArrival(io.inferencebench.crds.v1alpha1.ArrivalProcess.CONSTANT);
        StageSpec ramped = new StageSpec();
        ramped.setRequestRate(20.0);
        ramped.setDuration("2s");
        io.inferencebench.crds.v1alpha1.RampUpSpec ramp =
                new io.inferencebench.crds.v1alpha1.RampUpSpec();
        ramp.setStartRate(4.0);
        ramped.setRampUp(ramp);
        load.setStages(List.of(ramped));
        publishWorkOrder(run, workOrder(run, load, 2, false));
        int requestsBefore = loadRequests();
        twoPodsRunOneStage(run);

        List<StageResult> parts = List.of(stageResult(run, 0, 1), stageResult(run, 1, 1));
        for (StageResult part : parts) {
            // each pod ramped half of both rates: 2 to 10 req/s
            assertThat(part.rampUp.startRate).isEqualTo(2.0);
            assertThat(part.rampUp.endRate).isEqualTo(10.0);
            assertThat(part.rampUp.windows).hasSize(10);
        }
        StageResult merged = StageResult.merge(parts);
        io.inferencebench.profile.lpg.RampProfile whole = merged.rampUp;
        assertThat(whole.startRate).isEqualTo(4.0);
        assertThat(whole.endRate).isEqualTo(20.0);
        assertThat(whole.windowsOmitted).isNull();
        assertThat(whole.windows).hasSize(10);
        long sent = 0;
        long due = 0;
        for (int w = 0; w < 10; w++) {
            io.inferencebench.profile.lpg.RampProfile.Window window = whole.windows.get(w);
            // the whole ramp's mean rate over the window: 4 + 16 (w + 0.5) / 10
            assertThat(window.rampRate())
                    .isCloseTo(4 + 1.6 * (w + 0.5), org.assertj.core.data.Offset.offset(1e-9));
            assertThat(window.due())
                    .isEqualTo(
                            parts.get(0).rampUp.windows.get(w).due()
                                    + parts.get(1).rampUp.windows.get(w).due());
            assertThat(window.sent())
                    .isEqualTo(
                            parts.get(0).rampUp.windows.get(w).sent()
                                    + parts.get(1).rampUp.windows.get(w).sent());
            sent += window.sent();
            due += window.due();
        }
        // the ramp's integral over 2 s is 24 requests; every one was sent and the stub saw them
        assertThat(due).isEqualTo(24);
        assertThat(sent).isEqualTo(merged.sent).isEqualTo(24);
        assertThat(loadRequests() - requestsBefore).isEqualTo(24);
        // the last window has requests at the top rate, and their latency
        assertThat(whole.windows.get(9).completed()).isPositive();
        assertThat(whole.windows.get(9).e2elP50Ms()).isNotNull().isPositive();
        run.runnerClient().close();
    }

    @Test
    void twoPodsReplayATraceEachItsShareAtTheRecordedOffsets() throws Exception {
        Run run = newRun("trace");
        // Ten requests 100 ms apart on the trace's clock, replayed at twice its pace; each asks
        // for its own output length, so the stub's view tells which request arrived when.
        StringBuilder trace = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            trace.append(
                    String.format(
                            "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d,"
                                    + " \"hash_ids\": [1, %d]}%n",
                            5_000 + i * 100, 8 + i, 10 + i, 100 + i));
        }
        WorkloadSpec workload = new WorkloadSpec();
        DatasetSpec dataset = new DatasetSpec();
        dataset.setType(io.inferencebench.crds.v1alpha1.DatasetType.TRACE);
        io.inferencebench.crds.v1alpha1.DatasetSource source =
                new io.inferencebench.crds.v1alpha1.DatasetSource();
        source.setInline(trace.toString());
        dataset.setSource(source);
        io.inferencebench.crds.v1alpha1.TraceSpec replay =
                new io.inferencebench.crds.v1alpha1.TraceSpec();
        replay.setTimeScale(0.5);
        replay.setBlockTokens(4);
        dataset.setTrace(replay);
        workload.setDataset(dataset);
        LoadSpec load = new LoadSpec();
        RunnerWorkOrder order = workOrder(run, load, 2, false, "stub", workload);
        publishWorkOrder(run, order);
        arrivals.clear();
        twoPodsRunOneStage(run);

        StageResult part0 = stageResult(run, 0, 1);
        StageResult part1 = stageResult(run, 1, 1);
        // Pod 0 sent the requests at positions 0, 2, 4, ..., pod 1 those at 1, 3, 5, ...
        assertThat(part0.sent).isEqualTo(5);
        assertThat(part1.sent).isEqualTo(5);
        // The whole replay's mean rate: 9 gaps over 0.45 s; each pod stands for half of it.
        StageResult merged = StageResult.merge(List.of(part0, part1));
        assertThat(merged.requestedRate).isCloseTo(20.0, org.assertj.core.data.Offset.offset(1e-9));
        List<Arrival> seen = new ArrayList<>(arrivals);
        seen.sort(java.util.Comparator.comparingLong(Arrival::nanos));
        assertThat(seen).hasSize(10);
        for (int i = 0; i < 10; i++) {
            Arrival a = seen.get(i);
            assertThat(a.maxTokens()).as("request %d", i).isEqualTo(10 + i);
            // No server tokenizer: common words, one per token.
            assertThat(a.prompt().split(" ")).as("request %d", i).hasSize(8 + i);
            // Across both pods, on the trace's clock at twice its pace (50 ms apart).
            double atMs = (a.nanos() - seen.get(0).nanos()) / 1e6;
            assertThat(atMs)
                    .as("request %d", i)
                    .isCloseTo(50.0 * i, org.assertj.core.data.Offset.offset(40.0));
        }
        // Every prompt starts with hash 1's block, the same tokens from both pods (the run's seed).
        for (Arrival a : seen) {
            assertThat(String.join(" ", java.util.Arrays.copyOf(a.prompt().split(" "), 4)))
                    .isEqualTo(
                            String.join(
                                    " ",
                                    java.util.Arrays.copyOf(seen.get(0).prompt().split(" "), 4)));
        }
        assertThat(seen.get(1).prompt().split(" ")[4])
                .as("the second blocks are each request's own")
                .isNotEqualTo(seen.get(0).prompt().split(" ")[4]);
        run.runnerClient().close();
    }

    @Test
    void twoPodsRunTheirSharesOfTheSessionsAndTheirTurnsAddUp() throws Exception {
        Run run = newRun("conversation");
        WorkloadSpec workload = new WorkloadSpec();
        DatasetSpec dataset = new DatasetSpec();
        dataset.setInputTokens(TokenDistribution.fixed(6));
        dataset.setOutputTokens(TokenDistribution.fixed(3));
        dataset.setConversation(
                io.inferencebench.crds.v1alpha1.ConversationSpec.of(3, "20ms", null));
        workload.setDataset(dataset);
        LoadSpec load = new LoadSpec();
        StageSpec users = new StageSpec();
        users.setConcurrency(4);
        users.setNumPrompts(6);
        load.setStages(List.of(users));
        publishWorkOrder(run, workOrder(run, load, 2, false, "stub", workload, "chat"));
        arrivals.clear();
        twoPodsRunOneStage(run);

        StageResult part0 = stageResult(run, 0, 1);
        StageResult part1 = stageResult(run, 1, 1);
        // Each pod ran 3 of the 6 sessions with 2 of the 4 users: 9 requests each.
        assertThat(part0.sent).isEqualTo(9);
        assertThat(part1.sent).isEqualTo(9);
        assertThat(part0.conversation.sessionsCompleted).isEqualTo(3);
        assertThat(part1.conversation.sessionsCompleted).isEqualTo(3);
        StageResult merged = StageResult.merge(List.of(part0, part1));
        assertThat(merged.concurrency).isEqualTo(4);
        assertThat(merged.conversation.sessionsStarted).isEqualTo(6);
        assertThat(merged.conversation.sessionsCompleted).isEqualTo(6);
        for (int t = 1; t <= 3; t++) {
            var turn = merged.conversation.turns.get(t - 1);
            assertThat(turn.sent()).isEqualTo(6);
            assertThat(turn.completed()).isEqualTo(6);
            // t questions of 6 words and t - 1 replies of 3: no server tokenizer, words.
            assertThat(turn.promptTokensMean()).isEqualTo(6.0 * t + 3.0 * (t - 1));
            assertThat(turn.ttftP50Ms()).isNotNull();
        }
        // The stub saw every turn with its whole history, and six different sessions: each pod
        // drew its own from its seed.
        List<Arrival> seen = new ArrayList<>(arrivals);
        assertThat(seen).hasSize(18);
        java.util.Map<Integer, Long> byMessages =
                seen.stream()
                        .collect(
                                java.util.stream.Collectors.groupingBy(
                                        a -> a.prompt().split("\n").length,
                                        java.util.stream.Collectors.counting()));
        assertThat(byMessages).containsOnly(Map.entry(1, 6L), Map.entry(3, 6L), Map.entry(5, 6L));
        assertThat(seen.stream().map(a -> a.prompt().split("\n")[0]).distinct().count())
                .isEqualTo(6);
        run.runnerClient().close();
    }

    @Test
    void twoPodsAskForTheMixsModelsAndTheirPerModelCountsAddUpToTheServers() throws Exception {
        Run run = newRun("model-mix");
        WorkloadSpec workload = new WorkloadSpec();
        DatasetSpec dataset = new DatasetSpec();
        dataset.setInputTokens(TokenDistribution.fixed(8));
        dataset.setOutputTokens(TokenDistribution.fixed(2));
        workload.setDataset(dataset);
        workload.setModels(
                List.of(
                        io.inferencebench.crds.v1alpha1.WeightedModel.of("base", 1),
                        io.inferencebench.crds.v1alpha1.WeightedModel.of("sql-lora", 1)));
        LoadSpec load = new LoadSpec();
        load.setStages(List.of(StageSpec.rate(50.0, 40, null)));
        publishWorkOrder(run, workOrder(run, load, 2, false, null, workload));
        requestedModels.clear();
        twoPodsRunOneStage(run);

        StageResult merged =
                StageResult.merge(List.of(stageResult(run, 0, 1), stageResult(run, 1, 1)));
        java.util.Map<String, Long> asked =
                requestedModels.stream()
                        .collect(
                                java.util.stream.Collectors.groupingBy(
                                        m -> m, java.util.stream.Collectors.counting()));
        assertThat(asked.keySet()).containsExactlyInAnyOrder("base", "sql-lora");
        for (var m : merged.byModel.models) {
            assertThat(m.sent()).as(m.name()).isEqualTo(asked.get(m.name()));
            assertThat(m.completed()).isEqualTo(asked.get(m.name()));
        }
        assertThat(merged.byModel.models.stream().mapToLong(x -> x.sent()).sum()).isEqualTo(40);
        run.runnerClient().close();
    }

    @Test
    void cancelStopsARunningStageKeepingNothingUnfinished() throws Exception {
        Run run = newRun("cancel");
        LoadSpec load = new LoadSpec();
        StageSpec longStage = new StageSpec();
        longStage.setRequestRate(5.0);
        longStage.setDuration("60s");
        load.setStages(List.of(longStage, longStage));
        publishWorkOrder(run, workOrder(run, load, 1, false));
        StringWriter log = new StringWriter();
        CompletableFuture<Integer> pod = startPod(run, settings(run, 0, null, null), log);
        awaitReady(run, 0);
        openBarrier(run, 1, Instant.now().plusMillis(500));
        // Live progress is published while the stage runs.
        await().atMost(Duration.ofSeconds(30))
                .until(
                        () -> {
                            String p = data(run, 0, PartReport.PROGRESS);
                            return p != null && ProgressReport.fromJson(p).completed() >= 3;
                        });
        assertThat(data(run, 0, PartReport.STATE)).isEqualTo(PartReport.STATE_RUNNING);
        ProgressReport live = ProgressReport.fromJson(data(run, 0, PartReport.PROGRESS));
        assertThat(live.stage()).isEqualTo(1);
        assertThat(live.achievedRate()).isGreaterThan(0);
        assertThat(live.ttftP50Ms()).isNotNull().isGreaterThanOrEqualTo(5.0);

        long cancelAt = System.nanoTime();
        control(run, Map.of(RunnerWorkOrder.CANCEL_KEY, "true"));
        assertThat(pod.get(10, TimeUnit.SECONDS)).as(log.toString()).isZero();
        assertThat(System.nanoTime() - cancelAt).isLessThan(Duration.ofSeconds(5).toNanos());
        assertThat(data(run, 0, PartReport.STATE)).isEqualTo(PartReport.STATE_DONE);
        assertThat(data(run, 0, PartReporter.CANCELLED)).isEqualTo("true");
        assertThat(data(run, 0, PartReport.stageResultKey(1))).isNull();
        assertThat(data(run, 0, PartReport.STAGES_DONE)).isEqualTo("0");
        run.runnerClient().close();
    }

    @Test
    void aDeletedRunEndsAPodWaitingAtTheBarrier() throws Exception {
        Run run = newRun("deleted");
        LoadSpec load = oneStage(5.0, 5);
        publishWorkOrder(run, workOrder(run, load, 1, false));
        StringWriter log = new StringWriter();
        CompletableFuture<Integer> pod = startPod(run, settings(run, 0, null, null), log);
        awaitReady(run, 0);
        admin.resources(BenchmarkRun.class)
                .inNamespace(run.namespace())
                .withName(run.name())
                .delete();
        assertThat(pod.get(15, TimeUnit.SECONDS)).as(log.toString()).isZero();
        assertThat(log.toString()).contains("was deleted");
        assertThat(data(run, 0, PartReporter.CANCELLED)).isEqualTo("true");
        run.runnerClient().close();
    }

    @Test
    void aSearchPodRunsADurationProbeAndStopsWhenTheRunIsDeletedBeforeTheNext() throws Exception {
        Run run = newRun("search-deleted");
        LoadSpec load = new LoadSpec();
        load.setDuration("1s");
        publishWorkOrder(run, workOrder(run, load, 1, false));
        int requestsBefore = loadRequests();
        StringWriter log = new StringWriter();
        CompletableFuture<Integer> pod = startPod(run, settings(run, 0, null, null), log);
        awaitOrShowLogs(() -> PartReport.STATE_READY.equals(data(run, 0, PartReport.STATE)), log);
        control(
                run,
                Map.of(
                        RunnerWorkOrder.stageStartKey(1),
                        Instant.now().plusMillis(500).toString(),
                        RunnerWorkOrder.stageRateKey(1),
                        "8"));
        awaitOrShowLogs(() -> "1".equals(data(run, 0, PartReport.STAGES_DONE)), log);
        StageResult r = stageResult(run, 0, 1);
        assertThat(r.requestedRate).isEqualTo(8.0);
        assertThat(r.sent).isPositive();
        assertThat(r.completed).isEqualTo(r.sent);
        assertThat(loadRequests() - requestsBefore).isEqualTo((int) r.sent);
        assertThat(pod).isNotDone();

        // Waiting for the next probe's rate, the pod notices the run is gone.
        admin.resources(BenchmarkRun.class)
                .inNamespace(run.namespace())
                .withName(run.name())
                .delete();
        assertThat(pod.get(15, TimeUnit.SECONDS)).as(log.toString()).isZero();
        assertThat(log.toString()).contains("was deleted").contains("1 finished stage(s) kept");
        assertThat(data(run, 0, PartReporter.CANCELLED)).isEqualTo("true");
        assertThat(data(run, 0, PartReport.STAGES_DONE)).isEqualTo("1");
        assertThat(loadRequests() - requestsBefore).isEqualTo((int) r.sent);
        run.runnerClient().close();
    }

    @Test
    void aPodWithoutAModelDiscoversItReportsItWhenReadyAndAsksForIt() throws Exception {
        Run run = newRun("discover");
        LoadSpec load = oneStage(20.0, 3);
        publishWorkOrder(run, workOrder(run, load, 1, false, null));
        int discoveriesBefore = modelsCalls.get();
        requestedModels.clear();
        StringWriter log = new StringWriter();
        CompletableFuture<Integer> pod = startPod(run, settings(run, 0, null, null), log);
        awaitOrShowLogs(() -> PartReport.STATE_READY.equals(data(run, 0, PartReport.STATE)), log);
        // The operator puts this into status.model (the MODEL column) and the profiles.
        assertThat(data(run, 0, PartReport.MODEL)).isEqualTo(DISCOVERED_MODEL);
        assertThat(modelsCalls.get() - discoveriesBefore).isEqualTo(1);
        openBarrier(run, 1, Instant.now().plusSeconds(1));
        assertThat(pod.get(60, TimeUnit.SECONDS)).as(log.toString()).isZero();
        assertThat(stageResult(run, 0, 1).completed).isEqualTo(3);
        assertThat(requestedModels).hasSize(3).containsOnly(DISCOVERED_MODEL);
        assertThat(log.toString()).contains("model " + DISCOVERED_MODEL);
        run.runnerClient().close();
    }

    @Test
    void aMissingApiKeyFailsThePodWithAReason() throws Exception {
        Run run = newRun("nokey");
        LoadSpec load = oneStage(5.0, 5);
        publishWorkOrder(run, workOrder(run, load, 1, true));
        StringWriter log = new StringWriter();
        int code = startPod(run, settings(run, 0, null, null), log).get(60, TimeUnit.SECONDS);
        assertThat(code).isEqualTo(PodRun.EXIT_FAILED);
        assertThat(data(run, 0, PartReport.STATE)).isEqualTo(PartReport.STATE_FAILED);
        assertThat(data(run, 0, PartReport.ERROR)).contains(RunnerWorkOrder.API_KEY_ENV);
        assertThat(part(run, 0).getMetadata().getOwnerReferences()).hasSize(1);
        run.runnerClient().close();
    }

    @Test
    void theRunnerIdentityIsRefusedSecrets() throws Exception {
        Run run = newRun("rbac");
        List<String> denied = new ArrayList<>();
        try {
            run.runnerClient().secrets().inNamespace(run.namespace()).list();
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            denied.add("secrets:" + e.getCode());
        }
        // Impersonation only proves something when the API server authorizes with RBAC.
        assertThat(denied).containsExactly("secrets:403");
        run.runnerClient().close();
    }
}
