package io.inferencebench.crds.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.inferencebench.crds.build.CrdGeneration;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The generated CRD on a real kube-apiserver + etcd: every manifest under {@code admission/invalid}
 * is rejected with a message naming its field, the samples in {@code config/samples} and {@code
 * admission/valid} are accepted, and the spec is immutable except {@code cancel}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdmissionIT {

    /** Kubernetes version of the cached binaries (kube-api-test layout). */
    static final String K8S_VERSION = System.getProperty("inferencebench.k8s.version", "1.34.4");

    static final String NAMESPACE = "admission";

    /** The private directory's prefix; this JVM's are {@link #OWN_PREFIX}. */
    static final String PREFIX = "admission-it-";

    static final String OWN_PREFIX = PREFIX + ProcessHandle.current().pid() + "-";

    private KubeAPIServer apiServer;
    private KubernetesClient client;
    private Path testDir;
    private Path kubeconfig;
    private final ObjectMapper json = new ObjectMapper();

    @BeforeAll
    void startApiServerAndInstallCrd() throws IOException {
        reapDirectoriesOfDeadRuns();
        // A private kube-api-test directory whose k8s/ entry links to the binary cache where
        // e2e/scripts/provision-k8s.sh puts it ($HOME, not the JVM's user.home), so certificates
        // of concurrent fixtures do not collide either. It holds the API server's private keys
        // (owner-only, deleted keys first at the end).
        testDir = Files.createTempDirectory(OWN_PREFIX);
        Path binaries = cacheRoot().resolve("k8s").resolve(K8S_VERSION + "-linux-amd64");
        Files.createSymbolicLink(
                Files.createDirectories(testDir.resolve("k8s")).resolve(binaries.getFileName()),
                binaries);
        apiServer =
                new KubeAPIServer(
                        KubeAPIServerConfigBuilder.anAPIServerConfig()
                                .withTestDir(testDir.toString())
                                .withApiServerVersion(K8S_VERSION)
                                .withOfflineMode(true)
                                .withUpdateKubeConfig(false)
                                .build());
        apiServer.start();
        kubeconfig = testDir.resolve("kubeconfig");
        Files.writeString(kubeconfig, apiServer.getKubeConfigYaml());
        client =
                new KubernetesClientBuilder()
                        .withConfig(Config.fromKubeconfig(apiServer.getKubeConfigYaml()))
                        .build();

        // The CRDs exactly as committed (CrdDriftTest guarantees they equal the generated ones).
        for (String file : List.of(CrdGeneration.FILE_NAME, CrdGeneration.SCHEDULE_FILE_NAME)) {
            CustomResourceDefinition crd =
                    client.apiextensions()
                            .v1()
                            .customResourceDefinitions()
                            .load(Path.of("generated", file).toFile())
                            .item();
            client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
        }
        for (String crdName : List.of(BenchmarkRun.CRD_NAME, BenchmarkSchedule.CRD_NAME)) {
            awaitEstablished(crdName);
        }
        client.namespaces()
                .resource(
                        new NamespaceBuilder()
                                .withNewMetadata()
                                .withName(NAMESPACE)
                                .endMetadata()
                                .build())
                .create();
        // Discovery may lag behind Established for a moment.
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(() -> runs().list() != null && schedules().list() != null);
    }

    private void awaitEstablished(String crdName) {
        client.apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName(crdName)
                .waitUntilCondition(
                        c ->
                                c != null
                                        && c.getStatus() != null
                                        && c.getStatus().getConditions() != null
                                        && c.getStatus().getConditions().stream()
                                                .anyMatch(
                                                        cond ->
                                                                "Established".equals(cond.getType())
                                                                        && "True"
                                                                                .equals(
                                                                                        cond
                                                                                                .getStatus())),
                        60,
                        TimeUnit.SECONDS);
    }

    @AfterAll
    void stopApiServerAndDeleteItsKeys() throws IOException {
        if (client != null) {
            client.close();
        }
        if (apiServer != null) {
            apiServer.stop();
        }
        deletePrivateKeysFirst(testDir);
        try (Stream<Path> left = Files.list(tmp())) {
            assertThat(left.map(p -> p.getFileName().toString()))
                    .as("what this class made in %s (certificates, keys, kubeconfig)", tmp())
                    .noneMatch(name -> name.startsWith(OWN_PREFIX));
        }
    }

    /** java.io.tmpdir: where the private directory is made. */
    private static Path tmp() {
        return Path.of(System.getProperty("java.io.tmpdir"));
    }

    /**
     * Deletes the directories of runs of this class whose JVM is gone (killed before its
     * {@code @AfterAll}): they are named after the JVM's pid.
     */
    private static void reapDirectoriesOfDeadRuns() throws IOException {
        Pattern own = Pattern.compile(Pattern.quote(PREFIX) + "(\\d+)-.*");
        try (Stream<Path> entries = Files.list(tmp())) {
            for (Path entry : entries.toList()) {
                Matcher m = own.matcher(entry.getFileName().toString());
                if (m.matches()
                        && ProcessHandle.of(Long.parseLong(m.group(1)))
                                .filter(ProcessHandle::isAlive)
                                .isEmpty()) {
                    deletePrivateKeysFirst(entry);
                }
            }
        }
    }

    /** Deletes a tree without following links: the private keys (*.key, the kubeconfig) first. */
    private static void deletePrivateKeysFirst(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        List<Path> all;
        try (Stream<Path> walk = Files.walk(dir)) {
            all = walk.sorted(Comparator.reverseOrder()).toList();
        }
        for (Path p : all) {
            String name = p.getFileName().toString();
            if (name.endsWith(".key") || name.equals("kubeconfig")) {
                Files.deleteIfExists(p);
            }
        }
        for (Path p : all) {
            Files.deleteIfExists(p);
        }
    }

    private MixedOperation<
                    GenericKubernetesResource,
                    GenericKubernetesResourceList,
                    Resource<GenericKubernetesResource>>
            runs() {
        return client.genericKubernetesResources(
                BenchmarkRun.GROUP + "/" + BenchmarkRun.VERSION, BenchmarkRun.KIND);
    }

    private MixedOperation<
                    GenericKubernetesResource,
                    GenericKubernetesResourceList,
                    Resource<GenericKubernetesResource>>
            schedules() {
        return client.genericKubernetesResources(
                BenchmarkRun.GROUP + "/" + BenchmarkRun.VERSION, BenchmarkSchedule.KIND);
    }

    static Stream<Path> invalidSchedules() throws IOException, URISyntaxException {
        return manifests("admission/schedule-invalid");
    }

    static Stream<Path> validSchedules() throws IOException, URISyntaxException {
        List<Path> all = new ArrayList<>(manifests("admission/schedule-valid").toList());
        try (Stream<Path> samples = Files.list(Path.of("..", "config", "samples", "schedules"))) {
            samples.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(all::add);
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidSchedules")
    void invalidScheduleIsRejectedNamingTheField(Path manifest) throws IOException {
        String yaml = Files.readString(manifest, StandardCharsets.UTF_8);
        String field = header(yaml, "expect-field");
        String message = header(yaml, "expect-message");
        GenericKubernetesResource schedule = parse(yaml);

        assertThatThrownBy(() -> schedules().inNamespace(NAMESPACE).resource(schedule).create())
                .as("%s must be rejected at admission", manifest.getFileName())
                .isInstanceOfSatisfying(
                        KubernetesClientException.class,
                        e -> {
                            assertThat(e.getCode()).isEqualTo(422);
                            assertThat(e.getMessage())
                                    .as("error for %s", manifest.getFileName())
                                    .contains(field + ":")
                                    .contains(message);
                        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("validSchedules")
    void validScheduleIsAcceptedWithJavaDefaultsAndAnEditableTemplate(Path manifest)
            throws IOException {
        GenericKubernetesResource schedule = parse(Files.readString(manifest));
        String name = schedule.getMetadata().getName();
        try {
            schedules().inNamespace(NAMESPACE).resource(schedule).create();
        } catch (KubernetesClientException e) {
            throw new AssertionError(manifest + " was rejected: " + e.getMessage(), e);
        }
        try {
            BenchmarkSchedule typed =
                    client.resources(BenchmarkSchedule.class)
                            .inNamespace(NAMESPACE)
                            .withName(name)
                            .get();
            BenchmarkSchedule javaDefaults =
                    client.getKubernetesSerialization()
                            .unmarshal(Files.readString(manifest), BenchmarkSchedule.class);
            assertThat(typed.getSpec().historyLimitValue())
                    .isEqualTo(javaDefaults.getSpec().historyLimitValue());
            assertThat(typed.getSpec().getConcurrencyPolicy())
                    .isEqualTo(javaDefaults.getSpec().getConcurrencyPolicy())
                    .isNotNull();
            assertThat(typed.getSpec().getSuspend()).isEqualTo(javaDefaults.getSpec().getSuspend());
            // Unlike a run's spec, a schedule's template may change: later runs take it.
            typed.getSpec().getTemplate().getLoad().setNumPrompts(77);
            client.resources(BenchmarkSchedule.class)
                    .inNamespace(NAMESPACE)
                    .resource(typed)
                    .update();
            assertThat(
                            client.resources(BenchmarkSchedule.class)
                                    .inNamespace(NAMESPACE)
                                    .withName(name)
                                    .get()
                                    .getSpec()
                                    .getTemplate()
                                    .getLoad()
                                    .getNumPrompts())
                    .isEqualTo(77);
        } finally {
            schedules().inNamespace(NAMESPACE).withName(name).delete();
        }
    }

    /** Cron expressions at the edges of what a CronJob accepts; CronSyntax says which pass. */
    static Stream<String> cronCorpus() {
        return Stream.of(
                "0 3 * * *",
                "*/5 * * * *",
                "0,30 */6 1-15/2 */3 0,7",
                "30 8 * JAN-JUN MON-FRI",
                "0 0 * * sun",
                "0 0 1 jan-mar/2 *",
                "00 03 01 01 00",
                "59 23 31 12 7",
                "5/15 * * * *",
                "0 0 * * SUN-SAT",
                "1-1 * * * *",
                "  0 3 * * *  ",
                "0  3 * * *",
                "*,5 * * * *",
                "@yearly",
                "@annually",
                "@monthly",
                "@weekly",
                "@daily",
                "@midnight",
                "@hourly",
                "61 * * * *",
                "60 * * * *",
                "-1 * * * *",
                "000 3 * * *",
                "0 24 * * *",
                "0 3 0 * *",
                "0 3 32 * *",
                "0 3 * 0 *",
                "0 3 * 13 *",
                "0 3 * JANUARY *",
                "0 3 * * 8",
                "0 3 * * MONDAY",
                "*/0 * * * *",
                "*/60 * * * *",
                "0 */24 * * *",
                "0 0 * * */7",
                "5-1 * * * *",
                "0 0 * * FRI-MON",
                "0 0 * * SAT-SUN",
                "0 0 * DEC-JAN *",
                "1, * * * *",
                ",1 * * * *",
                "1- * * * *",
                "*/ * * * *",
                "**/2 * * * *",
                "1-5-7 * * * *",
                "1/2/3 * * * *",
                "0 3 ? * MON",
                "0 3 L * *",
                "0 3 * * 5#2",
                "0 3 1W * *",
                "every night",
                "* * * *",
                "0 0 3 * * *",
                "0\t3 * * *",
                "@every 1h",
                "@DAILY",
                "@daily ",
                "@reboot",
                "CRON_TZ=UTC 0 3 * * *",
                "TZ=Europe/Berlin 0 3 * * *");
    }

    private GenericKubernetesResource scheduleWith(String field, String value) {
        GenericKubernetesResource schedule =
                parse(
                        """
                        apiVersion: inferencebench.io/v1alpha1
                        kind: BenchmarkSchedule
                        metadata: {name: corpus}
                        spec:
                          schedule: "0 3 * * *"
                          template:
                            target: {service: {name: vllm, port: 8000}}
                            load: {requestRates: [1], numPrompts: 10}
                        """);
        spec(schedule).put(field, value);
        return schedule;
    }

    /** The API server's verdict: empty when admitted (dry run), else its message. */
    private Optional<String> admission(GenericKubernetesResource schedule) {
        try {
            schedules().inNamespace(NAMESPACE).resource(schedule).dryRun().create();
            return Optional.empty();
        } catch (KubernetesClientException e) {
            assertThat(e.getCode()).as(e.getMessage()).isEqualTo(422);
            return Optional.of(e.getMessage());
        }
    }

    @ParameterizedTest(name = "schedule \"{0}\"")
    @MethodSource("cronCorpus")
    void theCrdAndCronSyntaxAgreeOnASchedule(String expression) {
        Optional<String> expected = CronSyntax.scheduleProblem(expression);
        Optional<String> verdict = admission(scheduleWith("schedule", expression));
        if (expected.isEmpty()) {
            assertThat(verdict).as("admitted").isEmpty();
        } else {
            assertThat(verdict)
                    .as("refused naming spec.schedule and why")
                    .hasValueSatisfying(
                            m -> assertThat(m).contains("spec.schedule:").contains(expected.get()));
        }
    }

    /** Random expressions from the pieces a cron is made of: the same verdict from both. */
    @Test
    void theCrdAndCronSyntaxAgreeOnRandomSchedules() {
        java.util.Random random = new java.util.Random(4242);
        String[] pieces = {
            "*", "*/5", "*/0", "*/61", "0", "5", "07", "59", "60", "23", "24", "31", "32", "12",
            "13", "7", "8", "1-5", "5-1", "0-59", "1-5/2", "5/15", "JAN", "jan-mar", "DEC-JAN",
            "MON", "sun-sat", "FRI-MON", "SAT-SUN", "L", "?", "1,2", "1,", ",1", "-", "**", "1-5-7"
        };
        List<String> disagreements = new ArrayList<>();
        int admitted = 0;
        for (int i = 0; i < 300; i++) {
            int fields = random.nextInt(15) == 0 ? 4 + random.nextInt(3) : 5;
            StringBuilder expression = new StringBuilder();
            for (int f = 0; f < fields; f++) {
                expression.append(f == 0 ? "" : " ").append(pieces[random.nextInt(pieces.length)]);
            }
            String value = expression.toString();
            boolean expected = CronSyntax.scheduleProblem(value).isEmpty();
            boolean actual = admission(scheduleWith("schedule", value)).isEmpty();
            admitted += actual ? 1 : 0;
            if (expected != actual) {
                disagreements.add(value + (actual ? " (admitted)" : " (refused)"));
            }
        }
        assertThat(disagreements).as("the API server and CronSyntax disagree").isEmpty();
        assertThat(admitted).as("some admitted").isPositive();
    }

    @ParameterizedTest(name = "timeZone \"{0}\"")
    @ValueSource(
            strings = {
                "UTC",
                "GMT",
                "Europe/Berlin",
                "America/Argentina/Buenos_Aires",
                "America/Port-au-Prince",
                "Etc/GMT+2",
                "US/Eastern",
                "Mars/Olympus_Mons",
                "Local",
                "utc",
                "+02:00",
                "UTC+2",
                "EST5EDT",
                "Europe Berlin",
                "Europe/",
                "/Berlin",
                "Europe//Berlin",
                "Area/Location/Sub/More"
            })
    void theCrdAndCronSyntaxAgreeOnATimeZone(String zone) {
        Optional<String> expected = CronSyntax.timeZoneProblem(zone);
        Optional<String> verdict = admission(scheduleWith("timeZone", zone));
        if (expected.isEmpty()) {
            assertThat(verdict).as("admitted").isEmpty();
        } else {
            assertThat(verdict)
                    .as("refused naming spec.timeZone")
                    .hasValueSatisfying(
                            m -> assertThat(m).contains("spec.timeZone:").contains(expected.get()));
        }
    }

    private GenericKubernetesResource parse(String yaml) {
        return client.getKubernetesSerialization().unmarshal(yaml, GenericKubernetesResource.class);
    }

    static Stream<Path> invalidManifests() throws IOException, URISyntaxException {
        return manifests("admission/invalid");
    }

    static Stream<Path> validManifests() throws IOException, URISyntaxException {
        List<Path> all = new ArrayList<>(manifests("admission/valid").toList());
        try (Stream<Path> samples = Files.list(Path.of("..", "config", "samples"))) {
            samples.filter(p -> p.toString().endsWith(".yaml"))
                    .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
                    .sorted()
                    .forEach(all::add);
        }
        return all.stream();
    }

    private static Stream<Path> manifests(String resourceDir)
            throws IOException, URISyntaxException {
        Path dir = Path.of(AdmissionIT.class.getClassLoader().getResource(resourceDir).toURI());
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList().stream();
        }
    }

    @Test
    void corpusHasAtLeastTwentyInvalidManifestsAndAllFiveSamples()
            throws IOException, URISyntaxException {
        assertThat(invalidManifests().count()).isGreaterThanOrEqualTo(20);
        assertThat(validManifests().map(p -> p.getFileName().toString()))
                .contains(
                        "vllm-rate-sweep.yaml",
                        "sglang-stages.yaml",
                        "tgi-gamma.yaml",
                        "jetstream-concurrency.yaml",
                        "plain-url.yaml");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidManifests")
    void invalidManifestIsRejectedNamingTheField(Path manifest) throws IOException {
        String yaml = Files.readString(manifest, StandardCharsets.UTF_8);
        String field = header(yaml, "expect-field");
        String message = header(yaml, "expect-message");
        GenericKubernetesResource run = parse(yaml);

        assertThatThrownBy(() -> runs().inNamespace(NAMESPACE).resource(run).create())
                .as("%s must be rejected at admission", manifest.getFileName())
                .isInstanceOfSatisfying(
                        KubernetesClientException.class,
                        e -> {
                            assertThat(e.getCode()).isEqualTo(422);
                            assertThat(e.getMessage())
                                    .as("error for %s", manifest.getFileName())
                                    .contains(field + ":")
                                    .contains(message);
                        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("validManifests")
    void validManifestIsAcceptedAndSchemaDefaultsAgreeWithJavaDefaults(Path manifest)
            throws IOException {
        GenericKubernetesResource run = parse(Files.readString(manifest));
        run.getMetadata().setNamespace(NAMESPACE);
        GenericKubernetesResource created;
        try {
            created = runs().inNamespace(NAMESPACE).resource(run).create();
        } catch (KubernetesClientException e) {
            throw new AssertionError(manifest + " was rejected: " + e.getMessage(), e);
        }
        try {
            // What a consumer sees: the server-defaulted spec read as Java must equal the
            // manifest read with Java defaults only, so the two sets of defaults agree.
            JsonNode serverView = javaView(created.getAdditionalProperties().get("spec"));
            JsonNode javaDefaultsView = javaView(run.getAdditionalProperties().get("spec"));
            assertThat(serverView).isEqualTo(javaDefaultsView);
            BenchmarkRun typed =
                    client.resources(BenchmarkRun.class)
                            .inNamespace(NAMESPACE)
                            .withName(run.getMetadata().getName())
                            .get();
            if (typed.getSpec().replaysTrace()) {
                // a trace's load may have no stages: one replay of the trace
                assertThat(typed.getSpec().getLoad().replayStages()).isNotEmpty();
                assertThat(SpecValidation.validate(typed.getSpec())).isEmpty();
            } else if (typed.getSpec().getSearch() == null) {
                assertThat(typed.getSpec().getLoad().resolvedStages()).isNotEmpty();
            } else {
                // a search's stages are decided at run time: none up front, defaults filled in
                assertThat(typed.getSpec().getLoad().resolvedStages()).isEmpty();
                assertThat(typed.getSpec().getSearch().getPrecision())
                        .isEqualTo(SearchSpec.DEFAULT_PRECISION);
                assertThat(SpecValidation.validate(typed.getSpec())).isEmpty();
            }
        } finally {
            runs().inNamespace(NAMESPACE).withName(run.getMetadata().getName()).delete();
        }
    }

    private JsonNode javaView(Object spec) throws IOException {
        BenchmarkRunSpec typed = json.convertValue(spec, BenchmarkRunSpec.class);
        return json.valueToTree(typed);
    }

    @Test
    void specIsImmutableExceptCancelWhichCannotBeUndone() {
        GenericKubernetesResource run =
                parse(
                        """
                        apiVersion: inferencebench.io/v1alpha1
                        kind: BenchmarkRun
                        metadata: {name: immutable}
                        spec:
                          target: {service: {name: vllm, port: 8000}}
                          load: {requestRates: [1], numPrompts: 10}
                        """);
        runs().inNamespace(NAMESPACE).resource(run).create();
        Resource<GenericKubernetesResource> live =
                runs().inNamespace(NAMESPACE).withName("immutable");

        expectUpdateRejected(
                live,
                spec -> ((Map<String, Object>) spec.get("load")).put("numPrompts", 20),
                "spec.load is immutable");
        expectUpdateRejected(
                live,
                spec -> ((Map<String, Object>) spec.get("target")).put("model", "other"),
                "spec.target is immutable");
        expectUpdateRejected(
                live, spec -> spec.put("slo", Map.of("ttft", "1s")), "spec.slo is immutable");
        expectUpdateRejected(
                live,
                spec -> spec.put("runner", Map.of("parallelism", 3)),
                "spec.runner is immutable");
        expectUpdateRejected(
                live,
                spec -> spec.put("ttlSecondsAfterFinished", 60),
                "spec.ttlSecondsAfterFinished is immutable");

        GenericKubernetesResource cancelled =
                live.edit(
                        r -> {
                            spec(r).put("cancel", true);
                            return r;
                        });
        assertThat(spec(cancelled).get("cancel")).isEqualTo(true);
        expectUpdateRejected(
                live, spec -> spec.put("cancel", false), "spec.cancel cannot be undone");
        live.delete();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> spec(GenericKubernetesResource resource) {
        return (Map<String, Object>) resource.getAdditionalProperties().get("spec");
    }

    private void expectUpdateRejected(
            Resource<GenericKubernetesResource> live,
            java.util.function.Consumer<Map<String, Object>> change,
            String message) {
        assertThatThrownBy(
                        () ->
                                live.edit(
                                        r -> {
                                            change.accept(spec(r));
                                            return r;
                                        }))
                .isInstanceOfSatisfying(
                        KubernetesClientException.class,
                        e -> {
                            assertThat(e.getCode()).isEqualTo(422);
                            assertThat(e.getMessage()).contains(message);
                        });
    }

    @Test
    void statusKeepsLpgProfileDocumentsAndConditionsVerbatim() throws IOException {
        BenchmarkRun run = new BenchmarkRun();
        run.getMetadata().setName("with-status");
        BenchmarkRunSpec spec = new BenchmarkRunSpec();
        TargetSpec target = new TargetSpec();
        target.setService(new ServiceTarget("vllm", 8000));
        spec.setTarget(target);
        LoadSpec load = new LoadSpec();
        load.setStages(List.of(StageSpec.concurrency(4, 100, null)));
        spec.setLoad(load);
        run.setSpec(spec);
        var typed = client.resources(BenchmarkRun.class).inNamespace(NAMESPACE);
        BenchmarkRun created = typed.resource(run).create();

        ObjectNode profile =
                (ObjectNode)
                        json.readTree(
                                """
                                {"metrics": {"num_prompts": 100, "request_rate": "inf",
                                  "server_metrics": {"vllm:num_requests_running":
                                    {"Mean": "3.5", "Median": "4", "Sd": "0.5", "Min": "3",
                                     "Max": "4", "P90": "4", "P99": "4"}},
                                  "avg_latency": 812.5, "p99_ttft_ms": 41.25},
                                 "dimensions": {"date": "20261129-120000", "backend": "vllm"},
                                 "config": {"model": "m", "start_time": {"seconds": 1, "nanos": 2}},
                                 "summary_stats": {"stats": [{"request_rate": 4.1,
                                   "request_latency": {"mean": 812.5}}]}}
                                """);
        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setPhase(Phase.SUCCEEDED);
        status.setObservedGeneration(created.getMetadata().getGeneration());
        Condition completed =
                new ConditionBuilder()
                        .withType(ConditionTypes.COMPLETED)
                        .withStatus("True")
                        .withReason("Succeeded")
                        .withMessage("1 of 1 stages finished")
                        .withLastTransitionTime("2026-11-29T12:00:00Z")
                        .withObservedGeneration(1L)
                        .build();
        status.setConditions(List.of(completed));
        status.setProfiles(List.of(profile));
        status.setStage("1/1");
        RunSummary summary = new RunSummary();
        summary.setRps("4.10");
        status.setSummary(summary);
        created.setStatus(status);
        typed.resource(created).updateStatus();

        BenchmarkRun read = typed.withName("with-status").get();
        assertThat(read.getStatus().getPhase()).isEqualTo(Phase.SUCCEEDED);
        assertThat(read.getStatus().getProfiles()).containsExactly(profile);
        assertThat(read.getStatus().condition(ConditionTypes.COMPLETED))
                .hasValueSatisfying(
                        c -> {
                            assertThat(c.getReason()).isEqualTo("Succeeded");
                            assertThat(c.getLastTransitionTime()).isEqualTo("2026-11-29T12:00:00Z");
                        });
        typed.withName("with-status").delete();
    }

    @Test
    void kubectlExplainShowsFieldDescriptionsAndGetShowsTheColumns() throws Exception {
        Path kubectl = kubectl();
        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1))
                .untilAsserted(
                        () ->
                                assertThat(run(kubectl, "explain", "benchmarkrun.spec.load.stages"))
                                        .contains("exactly one of requestRate or concurrency"));
        assertThat(run(kubectl, "explain", "br.spec.runner.parallelism"))
                .contains("Number of runner pods");
        String table = run(kubectl, "get", "bench", "-n", NAMESPACE, "-o", "wide");
        String header = run(kubectl, "get", "inferencebench", "-A");
        assertThat(table + header).doesNotContain("error");
        GenericKubernetesResource run =
                parse(
                        """
                        apiVersion: inferencebench.io/v1alpha1
                        kind: BenchmarkRun
                        metadata: {name: columns}
                        spec:
                          target: {url: "http://x:1"}
                          load: {requestRates: [1], numPrompts: 10}
                        """);
        runs().inNamespace(NAMESPACE).resource(run).create();
        String listing = run(kubectl, "get", "br", "-n", NAMESPACE);
        assertThat(listing.lines().findFirst().orElseThrow())
                .containsSubsequence(
                        "NAME",
                        "PHASE",
                        "MODEL",
                        "STAGE",
                        "DONE",
                        "RPS",
                        "TTFT P50",
                        "LATENCY P99",
                        "SLO",
                        "CAPACITY",
                        "AGE");
        runs().inNamespace(NAMESPACE).withName("columns").delete();

        assertThat(run(kubectl, "explain", "benchmarkschedule.spec.schedule"))
                .contains("five-field format of Kubernetes CronJobs");
        assertThat(run(kubectl, "explain", "bsched.status.lastVerdict")).contains("NoBaseline");
        schedules()
                .inNamespace(NAMESPACE)
                .resource(
                        parse(
                                """
                                apiVersion: inferencebench.io/v1alpha1
                                kind: BenchmarkSchedule
                                metadata: {name: columns}
                                spec:
                                  schedule: "0 3 * * *"
                                  template:
                                    target: {url: "http://x:1"}
                                    load: {requestRates: [1], numPrompts: 10}
                                """))
                .create();
        String schedules = run(kubectl, "get", "bsched", "-n", NAMESPACE);
        assertThat(schedules.lines().findFirst().orElseThrow())
                .containsSubsequence("NAME", "SCHEDULE", "LAST RUN", "VERDICT", "NEXT", "AGE");
        assertThat(schedules).contains("0 3 * * *");
        schedules().inNamespace(NAMESPACE).withName("columns").delete();
    }

    /** As e2e/scripts/provision-k8s.sh: IB_KUBEAPITEST_DIR, else $HOME/.kubeapitest. */
    static Path cacheRoot() {
        String dir = System.getenv("IB_KUBEAPITEST_DIR");
        if (dir != null && !dir.isBlank()) {
            return Path.of(dir);
        }
        String home = System.getenv("HOME");
        return Path.of(home != null && !home.isBlank() ? home : System.getProperty("user.home"))
                .resolve(".kubeapitest");
    }

    private Path kubectl() {
        Path path =
                cacheRoot().resolve("k8s").resolve(K8S_VERSION + "-linux-amd64").resolve("kubectl");
        if (!Files.isExecutable(path)) {
            fail("kubectl not found at " + path + "; run e2e/scripts/provision-k8s.sh");
        }
        return path;
    }

    private String run(Path kubectl, String... args) throws IOException, InterruptedException {
        List<String> command =
                new ArrayList<>(List.of(kubectl.toString(), "--kubeconfig", kubeconfig.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("kubectl " + String.join(" ", args) + " timed out");
        }
        if (process.exitValue() != 0) {
            throw new AssertionError("kubectl " + String.join(" ", args) + " failed: " + output);
        }
        return output;
    }

    private static String header(String yaml, String key) {
        return yaml.lines()
                .filter(l -> l.startsWith("# " + key + ":"))
                .map(l -> l.substring(("# " + key + ":").length()).trim())
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("manifest lacks '# " + key + ":'"));
    }
}
