package io.inferencebench.operator.dependent;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.KeyToPathBuilder;
import io.fabric8.kubernetes.api.model.PodAntiAffinity;
import io.fabric8.kubernetes.api.model.PodAntiAffinityBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.WeightedPodAffinityTermBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.ConfigMapKeyRef;
import io.inferencebench.crds.v1alpha1.DatasetSource;
import io.inferencebench.crds.v1alpha1.DatasetType;
import io.inferencebench.crds.v1alpha1.Durations;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.RunnerSpec;
import io.inferencebench.crds.v1alpha1.TokenizerSpec;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.operator.Labels;
import io.inferencebench.operator.RunnerDefaults;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import java.util.ArrayList;
import java.util.List;

/**
 * The Indexed runner Job {@code <run>-runner}: {@code parallelism = completions =
 * spec.runner.parallelism}, no retries (a restarted runner would break the stage barriers), pods
 * admitted by Pod Security {@code restricted}.
 */
@KubernetesDependent(informer = @Informer(labelSelector = Labels.RUNNER_SELECTOR))
public class RunnerJobDependent extends CRUDKubernetesDependentResource<Job, BenchmarkRun> {

    /** Where the work order is mounted in runner pods. */
    public static final String WORK_ORDER_DIR = "/etc/inferencebench/workorder";

    /** Dataset file path in runner pods when the dataset comes from a ConfigMap. */
    public static final String DATASET_CONFIG_MAP_FILE = "/data/dataset/dataset";

    /** Mount point of a dataset PersistentVolumeClaim. */
    public static final String DATASET_PVC_DIR = "/data/pvc";

    /** Where the CA bundle of spec.target.tls is mounted in runner pods. */
    public static final String TLS_CA_FILE = "/etc/inferencebench/tls/ca.crt";

    /** Tokenizer file path in runner pods. */
    public static final String TOKENIZER_FILE = "/data/tokenizer/tokenizer.json";

    /** Environment variable holding the dataset file path, when the dataset is a file. */
    public static final String DATASET_FILE_ENV = "INFERENCEBENCH_DATASET_FILE";

    /** Environment variable holding the tokenizer file path, when a tokenizer is set. */
    public static final String TOKENIZER_FILE_ENV = "INFERENCEBENCH_TOKENIZER_FILE";

    /** Runner pods run as this unprivileged user. */
    public static final long RUNNER_UID = 65532L;

    public RunnerJobDependent() {
        super(Job.class);
    }

    @Override
    protected Job desired(BenchmarkRun run, Context<BenchmarkRun> context) {
        return desired(run, RunnerDefaults.fromConfig());
    }

    /**
     * The desired runner Job.
     *
     * @param run the run
     * @param defaults operator defaults for image and pull policy
     * @return the Job
     */
    public static Job desired(BenchmarkRun run, RunnerDefaults defaults) {
        BenchmarkRunSpec spec = run.getSpec();
        RunnerSpec runner = spec.getRunner();
        int parallelism = runner.getParallelism();
        String name = ResourceNames.runner(run.getMetadata().getName());

        List<Volume> volumes = new ArrayList<>();
        List<VolumeMount> mounts = new ArrayList<>();
        List<EnvVar> env = new ArrayList<>();
        volumes.add(
                new VolumeBuilder()
                        .withName("work-order")
                        .withNewConfigMap()
                        .withName(name)
                        .endConfigMap()
                        .build());
        mounts.add(mount("work-order", WORK_ORDER_DIR));
        // Read-only root file system: the JVM and the runner write only here.
        volumes.add(new VolumeBuilder().withName("tmp").withNewEmptyDir().endEmptyDir().build());
        mounts.add(new VolumeMountBuilder().withName("tmp").withMountPath("/tmp").build());
        datasetVolume(spec, volumes, mounts, env);
        tokenizerVolume(spec, volumes, mounts, env);
        tlsCaVolume(spec, volumes, mounts);

        env.add(fieldEnv("POD_NAME", "metadata.name"));
        env.add(fieldEnv("POD_NAMESPACE", "metadata.namespace"));
        env.add(
                new EnvVarBuilder()
                        .withName("RUN_NAME")
                        .withValue(run.getMetadata().getName())
                        .build());
        if (spec.getTarget().getApiKeySecretRef() != null) {
            env.add(
                    new EnvVarBuilder()
                            .withName(RunnerWorkOrder.API_KEY_ENV)
                            .withNewValueFrom()
                            .withNewSecretKeyRef()
                            .withName(spec.getTarget().getApiKeySecretRef().getName())
                            .withKey(spec.getTarget().getApiKeySecretRef().getKey())
                            .endSecretKeyRef()
                            .endValueFrom()
                            .build());
        }

        Container container =
                new ContainerBuilder()
                        .withName("runner")
                        .withImage(runner.getImage() != null ? runner.getImage() : defaults.image())
                        .withImagePullPolicy(
                                runner.getImagePullPolicy() != null
                                        ? runner.getImagePullPolicy()
                                        : defaults.imagePullPolicy())
                        .withArgs("pod", "--work-order", WORK_ORDER_DIR + "/" + RunnerWorkOrder.KEY)
                        .withEnv(env)
                        .withVolumeMounts(mounts)
                        .withResources(runner.getResources())
                        .withNewSecurityContext()
                        .withAllowPrivilegeEscalation(false)
                        .withReadOnlyRootFilesystem(true)
                        .withRunAsNonRoot(true)
                        .withNewCapabilities()
                        .withDrop("ALL")
                        .endCapabilities()
                        .withNewSeccompProfile()
                        .withType("RuntimeDefault")
                        .endSeccompProfile()
                        .endSecurityContext()
                        .build();

        JobBuilder job =
                new JobBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace(run.getMetadata().getNamespace())
                        .withLabels(Labels.of(run, Labels.RUNNER))
                        .endMetadata()
                        .withNewSpec()
                        .withCompletionMode("Indexed")
                        .withCompletions(parallelism)
                        .withParallelism(parallelism)
                        .withBackoffLimit(0)
                        .withNewTemplate()
                        .withNewMetadata()
                        .withLabels(Labels.of(run, Labels.RUNNER))
                        .endMetadata()
                        .withNewSpec()
                        .withRestartPolicy("Never")
                        .withServiceAccountName(runner.getServiceAccountName())
                        .withAutomountServiceAccountToken(true)
                        .withEnableServiceLinks(false)
                        .withNewSecurityContext()
                        .withRunAsNonRoot(true)
                        .withRunAsUser(RUNNER_UID)
                        .withRunAsGroup(RUNNER_UID)
                        .withFsGroup(RUNNER_UID)
                        .withNewSeccompProfile()
                        .withType("RuntimeDefault")
                        .endSeccompProfile()
                        .endSecurityContext()
                        .withContainers(container)
                        .withVolumes(volumes)
                        .withNodeSelector(runner.getNodeSelector())
                        .withTolerations(runner.getTolerations())
                        .withAffinity(affinity(run))
                        .endSpec()
                        .endTemplate()
                        .endSpec();
        if (spec.getTimeout() != null) {
            job.editSpec()
                    .withActiveDeadlineSeconds(Durations.parse(spec.getTimeout()).toSeconds())
                    .endSpec();
        }
        return job.build();
    }

    private static VolumeMount mount(String volume, String path) {
        return new VolumeMountBuilder()
                .withName(volume)
                .withMountPath(path)
                .withReadOnly(true)
                .build();
    }

    private static EnvVar fieldEnv(String name, String fieldPath) {
        return new EnvVarBuilder()
                .withName(name)
                .withNewValueFrom()
                .withNewFieldRef()
                .withFieldPath(fieldPath)
                .endFieldRef()
                .endValueFrom()
                .build();
    }

    private static void datasetVolume(
            BenchmarkRunSpec spec,
            List<Volume> volumes,
            List<VolumeMount> mounts,
            List<EnvVar> env) {
        var dataset = spec.getWorkload().getDataset();
        if (dataset == null || dataset.getSource() == null) {
            return;
        }
        DatasetSource source = dataset.getSource();
        if (source.getConfigMapRef() != null) {
            ConfigMapKeyRef ref = source.getConfigMapRef();
            String key =
                    ref.getKey() != null
                            ? ref.getKey()
                            : dataset.getType() == DatasetType.SHAREGPT
                                    ? "dataset.json"
                                    : "dataset.jsonl";
            volumes.add(configMapKeyVolume("dataset", ref.getName(), key, "dataset"));
            mounts.add(mount("dataset", "/data/dataset"));
            env.add(
                    new EnvVarBuilder()
                            .withName(DATASET_FILE_ENV)
                            .withValue(DATASET_CONFIG_MAP_FILE)
                            .build());
        } else if (source.getPvc() != null) {
            volumes.add(
                    new VolumeBuilder()
                            .withName("dataset")
                            .withNewPersistentVolumeClaim()
                            .withClaimName(source.getPvc().getClaimName())
                            .withReadOnly(true)
                            .endPersistentVolumeClaim()
                            .build());
            mounts.add(mount("dataset", DATASET_PVC_DIR));
            env.add(
                    new EnvVarBuilder()
                            .withName(DATASET_FILE_ENV)
                            .withValue(DATASET_PVC_DIR + "/" + source.getPvc().getPath())
                            .build());
        }
    }

    /**
     * Volume {@code name}: key {@code key} of ConfigMap {@code configMap} as the file {@code path}.
     */
    private static Volume configMapKeyVolume(
            String name, String configMap, String key, String path) {
        return new VolumeBuilder()
                .withName(name)
                .withNewConfigMap()
                .withName(configMap)
                .withItems(new KeyToPathBuilder().withKey(key).withPath(path).build())
                .endConfigMap()
                .build();
    }

    private static void tlsCaVolume(
            BenchmarkRunSpec spec, List<Volume> volumes, List<VolumeMount> mounts) {
        var tls = spec.getTarget().getTls();
        if (tls == null) {
            return;
        }
        String file = TLS_CA_FILE.substring(TLS_CA_FILE.lastIndexOf('/') + 1);
        if (tls.getCaConfigMapRef() != null) {
            var ref = tls.getCaConfigMapRef();
            volumes.add(
                    configMapKeyVolume(
                            "tls-ca",
                            ref.getName(),
                            ref.getKey() != null
                                    ? ref.getKey()
                                    : io.inferencebench.crds.v1alpha1.TlsSpec.DEFAULT_CA_KEY,
                            file));
        } else if (tls.getCaSecretRef() != null) {
            var ref = tls.getCaSecretRef();
            volumes.add(
                    new VolumeBuilder()
                            .withName("tls-ca")
                            .withNewSecret()
                            .withSecretName(ref.getName())
                            .withItems(
                                    new KeyToPathBuilder()
                                            .withKey(ref.getKey())
                                            .withPath(file)
                                            .build())
                            .endSecret()
                            .build());
        } else {
            return;
        }
        mounts.add(
                new VolumeMountBuilder()
                        .withName("tls-ca")
                        .withMountPath(TLS_CA_FILE.substring(0, TLS_CA_FILE.lastIndexOf('/')))
                        .withReadOnly(true)
                        .build());
    }

    private static void tokenizerVolume(
            BenchmarkRunSpec spec,
            List<Volume> volumes,
            List<VolumeMount> mounts,
            List<EnvVar> env) {
        TokenizerSpec tokenizer = spec.getWorkload().getTokenizer();
        if (tokenizer == null || tokenizer.getConfigMapRef() == null) {
            return;
        }
        ConfigMapKeyRef ref = tokenizer.getConfigMapRef();
        volumes.add(
                configMapKeyVolume(
                        "tokenizer",
                        ref.getName(),
                        ref.getKey() != null ? ref.getKey() : TokenizerSpec.DEFAULT_KEY,
                        "tokenizer.json"));
        mounts.add(mount("tokenizer", "/data/tokenizer"));
        env.add(new EnvVarBuilder().withName(TOKENIZER_FILE_ENV).withValue(TOKENIZER_FILE).build());
    }

    private static Affinity affinity(BenchmarkRun run) {
        RunnerSpec runner = run.getSpec().getRunner();
        Affinity user = runner.getAffinity();
        if (!Boolean.TRUE.equals(runner.getSpread())) {
            return user;
        }
        AffinityBuilder affinity = user == null ? new AffinityBuilder() : new AffinityBuilder(user);
        PodAntiAffinity existing = user == null ? null : user.getPodAntiAffinity();
        PodAntiAffinityBuilder anti =
                existing == null
                        ? new PodAntiAffinityBuilder()
                        : new PodAntiAffinityBuilder(existing);
        anti.addToPreferredDuringSchedulingIgnoredDuringExecution(
                new WeightedPodAffinityTermBuilder()
                        .withWeight(100)
                        .withNewPodAffinityTerm()
                        .withTopologyKey("kubernetes.io/hostname")
                        .withNewLabelSelector()
                        .withMatchLabels(Labels.runnerPodSelector(run))
                        .endLabelSelector()
                        .endPodAffinityTerm()
                        .build());
        return affinity.withPodAntiAffinity(anti.build()).build();
    }
}
