package io.inferencebench.operator.dependent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunStatus;
import io.inferencebench.crds.v1alpha1.ConfigMapKeyRef;
import io.inferencebench.crds.v1alpha1.DatasetSource;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.SecretKeyRef;
import io.inferencebench.crds.v1alpha1.TokenizerSpec;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.operator.Labels;
import io.inferencebench.operator.RunnerDefaults;
import io.inferencebench.operator.TestRuns;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DesiredStateTest {

    static final RunnerDefaults DEFAULTS = new RunnerDefaults("runner:test", "IfNotPresent");
    final ObjectMapper json = new ObjectMapper();

    @Test
    void workOrderResolvesServiceUrlAndSharesWithoutSecrets() throws Exception {
        BenchmarkRun run = TestRuns.sweep();
        run.getSpec().getRunner().setParallelism(3);
        run.getSpec().getTarget().setApiKeySecretRef(new SecretKeyRef("hf", "token"));
        run.getSpec().getTarget().setHeaders(Map.of("X-Team", "bench"));
        ConfigMap configMap = RunnerWorkOrderDependent.desired(run);

        assertThat(configMap.getMetadata().getName()).isEqualTo("sweep-runner");
        assertThat(configMap.getMetadata().getNamespace()).isEqualTo("bench");
        assertThat(configMap.getMetadata().getLabels())
                .containsEntry(Labels.INSTANCE, "sweep")
                .containsEntry(Labels.MANAGED_BY, "inferencebench-operator")
                .containsEntry(Labels.COMPONENT, "runner")
                .containsEntry(Labels.NAME, "inferencebench");
        String text = configMap.getData().get(RunnerWorkOrder.KEY);
        RunnerWorkOrder order = json.readValue(text, RunnerWorkOrder.class);
        assertThat(order.baseUrl()).isEqualTo("http://vllm.bench.svc:8000");
        // No spec.target.path: the runner derives it from backend and api, as its CLI does.
        assertThat(order.path()).isNull();
        assertThat(order.api()).isEqualTo("completions");
        assertThat(order.backend()).isEqualTo("vllm");
        assertThat(order.model()).isEqualTo("google/gemma-7b");
        assertThat(order.parallelism()).isEqualTo(3);
        assertThat(order.apiKeyFromEnv()).isTrue();
        assertThat(order.headers()).containsEntry("X-Team", "bench");
        assertThat(order.stages()).hasSize(2);
        assertThat(order.stages().get(0).promptsPerPod()).containsExactly(34, 33, 33);
        assertThat(order.stages().get(1).ratePerPod()).isEqualTo(10.0 / 3);
        assertThat(order.controlConfigMap()).isEqualTo("sweep-control");
        assertThat(order.partConfigMapPrefix()).isEqualTo("sweep-part-");
        assertThat(text).doesNotContain("token\"").doesNotContain("hf\"");
    }

    @Test
    void workOrderUsesTheUrlAsGiven() {
        BenchmarkRun run = TestRuns.sweep();
        run.getSpec().getTarget().setService(null);
        run.getSpec().getTarget().setUrl("https://gw.example:8443");
        assertThat(RunnerWorkOrderDependent.baseUrl(run)).isEqualTo("https://gw.example:8443");
    }

    @Test
    void aTlsCaIsMountedIntoRunnerPodsAndNamedInTheWorkOrder() throws Exception {
        BenchmarkRun run = TestRuns.sweep();
        run.getSpec().getTarget().setService(null);
        run.getSpec().getTarget().setUrl("https://gw.example:8443");
        io.inferencebench.crds.v1alpha1.TlsSpec tls = new io.inferencebench.crds.v1alpha1.TlsSpec();
        tls.setCaSecretRef(new SecretKeyRef("gw-tls", "ca.crt"));
        tls.setServerName("llm.example.com");
        run.getSpec().getTarget().setTls(tls);

        RunnerWorkOrder order =
                json.readValue(
                        RunnerWorkOrderDependent.desired(run).getData().get(RunnerWorkOrder.KEY),
                        RunnerWorkOrder.class);
        assertThat(order.tls().caFile()).isEqualTo(RunnerJobDependent.TLS_CA_FILE);
        assertThat(order.tls().insecureSkipVerify()).isFalse();
        assertThat(order.tls().serverName()).isEqualTo("llm.example.com");

        PodSpec pod = RunnerJobDependent.desired(run, DEFAULTS).getSpec().getTemplate().getSpec();
        var volume =
                pod.getVolumes().stream().filter(v -> v.getName().equals("tls-ca")).findFirst();
        assertThat(volume).isPresent();
        assertThat(volume.get().getSecret().getSecretName()).isEqualTo("gw-tls");
        assertThat(volume.get().getSecret().getItems().get(0).getKey()).isEqualTo("ca.crt");
        assertThat(volume.get().getSecret().getItems().get(0).getPath()).isEqualTo("ca.crt");
        assertThat(pod.getContainers().get(0).getVolumeMounts())
                .anySatisfy(
                        m -> {
                            assertThat(m.getName()).isEqualTo("tls-ca");
                            assertThat(m.getMountPath()).isEqualTo("/etc/inferencebench/tls");
                            assertThat(m.getReadOnly()).isTrue();
                        });

        // Without spec.target.tls the work order carries no TLS section and nothing is mounted.
        BenchmarkRun plain = TestRuns.sweep();
        assertThat(
                        json.readValue(
                                        RunnerWorkOrderDependent.desired(plain)
                                                .getData()
                                                .get(RunnerWorkOrder.KEY),
                                        RunnerWorkOrder.class)
                                .tls())
                .isNull();
        assertThat(
                        RunnerJobDependent.desired(plain, DEFAULTS)
                                .getSpec()
                                .getTemplate()
                                .getSpec()
                                .getVolumes())
                .noneMatch(v -> v.getName().equals("tls-ca"));
    }

    @Test
    void jobIsIndexedWithParallelismAndRestrictedPodSecurity() {
        BenchmarkRun run = TestRuns.sweep();
        run.getSpec().getRunner().setParallelism(4);
        Job job = RunnerJobDependent.desired(run, DEFAULTS);

        assertThat(job.getMetadata().getName()).isEqualTo("sweep-runner");
        assertThat(job.getSpec().getCompletionMode()).isEqualTo("Indexed");
        assertThat(job.getSpec().getCompletions()).isEqualTo(4);
        assertThat(job.getSpec().getParallelism()).isEqualTo(4);
        assertThat(job.getSpec().getBackoffLimit()).isZero();
        assertThat(job.getSpec().getTemplate().getMetadata().getLabels())
                .containsEntry(Labels.COMPONENT, "runner")
                .containsEntry(Labels.INSTANCE, "sweep");

        PodSpec pod = job.getSpec().getTemplate().getSpec();
        assertThat(pod.getRestartPolicy()).isEqualTo("Never");
        assertThat(pod.getServiceAccountName()).isEqualTo("inferencebench-runner");
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(pod.getSecurityContext().getSeccompProfile().getType())
                .isEqualTo("RuntimeDefault");
        Container container = pod.getContainers().getFirst();
        assertThat(container.getImage()).isEqualTo("runner:test");
        assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(container.getSecurityContext().getCapabilities().getDrop())
                .containsExactly("ALL");
        assertThat(container.getSecurityContext().getRunAsNonRoot()).isTrue();
        assertThat(container.getArgs())
                .containsExactly(
                        "pod", "--work-order", "/etc/inferencebench/workorder/workorder.json");
        assertThat(pod.getVolumes()).extracting(v -> v.getName()).contains("work-order", "tmp");
        assertThat(
                        pod.getAffinity()
                                .getPodAntiAffinity()
                                .getPreferredDuringSchedulingIgnoredDuringExecution())
                .singleElement()
                .satisfies(
                        term ->
                                assertThat(term.getPodAffinityTerm().getTopologyKey())
                                        .isEqualTo("kubernetes.io/hostname"));
        assertThat(job.getSpec().getActiveDeadlineSeconds()).isNull();
    }

    @Test
    void jobMountsDatasetAndTokenizerAndTakesTheApiKeyFromTheSecret() {
        BenchmarkRun run = TestRuns.sweep();
        run.getSpec().getWorkload().getDataset().setType(DatasetType.SHAREGPT);
        DatasetSource source = new DatasetSource();
        source.setConfigMapRef(new ConfigMapKeyRef("sharegpt", null));
        run.getSpec().getWorkload().getDataset().setSource(source);
        TokenizerSpec tokenizer = new TokenizerSpec();
        tokenizer.setConfigMapRef(new ConfigMapKeyRef("tok", null));
        run.getSpec().getWorkload().setTokenizer(tokenizer);
        run.getSpec().getTarget().setApiKeySecretRef(new SecretKeyRef("hf", "token"));
        run.getSpec().getRunner().setSpread(false);
        run.getSpec().setTimeout("1h");
        run.getSpec().getRunner().setImage("custom:1");
        Job job = RunnerJobDependent.desired(run, DEFAULTS);

        PodSpec pod = job.getSpec().getTemplate().getSpec();
        assertThat(pod.getAffinity()).isNull();
        assertThat(job.getSpec().getActiveDeadlineSeconds()).isEqualTo(3600L);
        Container container = pod.getContainers().getFirst();
        assertThat(container.getImage()).isEqualTo("custom:1");
        var dataset =
                pod.getVolumes().stream()
                        .filter(v -> v.getName().equals("dataset"))
                        .findFirst()
                        .orElseThrow();
        assertThat(dataset.getConfigMap().getName()).isEqualTo("sharegpt");
        assertThat(dataset.getConfigMap().getItems().getFirst().getKey()).isEqualTo("dataset.json");
        var tokenizerVolume =
                pod.getVolumes().stream()
                        .filter(v -> v.getName().equals("tokenizer"))
                        .findFirst()
                        .orElseThrow();
        assertThat(tokenizerVolume.getConfigMap().getItems().getFirst().getKey())
                .isEqualTo("tokenizer.json");
        EnvVar apiKey =
                container.getEnv().stream()
                        .filter(e -> e.getName().equals(RunnerWorkOrder.API_KEY_ENV))
                        .findFirst()
                        .orElseThrow();
        assertThat(apiKey.getValue()).isNull();
        assertThat(apiKey.getValueFrom().getSecretKeyRef().getName()).isEqualTo("hf");
        assertThat(apiKey.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("token");
        assertThat(container.getEnv())
                .anyMatch(e -> e.getName().equals(RunnerJobDependent.DATASET_FILE_ENV))
                .anyMatch(e -> e.getName().equals(RunnerJobDependent.TOKENIZER_FILE_ENV));
        assertThat(container.getVolumeMounts())
                .allMatch(m -> m.getName().equals("tmp") || Boolean.TRUE.equals(m.getReadOnly()));
    }

    @Test
    void controlCarriesBarrierInstantsAndCancel() {
        BenchmarkRun run = TestRuns.sweep();
        ConfigMap initial = ControlConfigMapDependent.desired(run);
        assertThat(initial.getMetadata().getName()).isEqualTo("sweep-control");
        assertThat(initial.getMetadata().getLabels()).containsEntry(Labels.COMPONENT, "control");
        assertThat(initial.getData()).containsExactly(Map.entry("cancel", "false"));

        BenchmarkRunStatus status = new BenchmarkRunStatus();
        status.setStageStartTimes(List.of("2026-11-29T12:00:02Z", "2026-11-29T12:01:00Z"));
        run.setStatus(status);
        run.getSpec().setCancel(true);
        ConfigMap later = ControlConfigMapDependent.desired(run);
        assertThat(later.getData())
                .containsEntry("stage-1-start", "2026-11-29T12:00:02Z")
                .containsEntry("stage-2-start", "2026-11-29T12:01:00Z")
                .containsEntry("cancel", "true");
    }
}
