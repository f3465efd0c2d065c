package io.inferencebench.testkit;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.ContainerState;
import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStateTerminatedBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.DownwardAPIVolumeFile;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HostIPBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.ObjectFieldSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodIPBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceFieldSelector;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.ServiceAccountTokenProjection;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.VolumeProjection;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/** Runs one pod for {@link LocalNode}: sandbox, volumes, processes, probes and status. */
final class PodWorker {

    static final String SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
    private static final Duration MAX_BACKOFF = Duration.ofMinutes(5);
    private static final Pattern VAR_REF = Pattern.compile("\\$\\$|\\$\\(([-._a-zA-Z0-9]+)\\)");
    private static final Pattern SUBSCRIPT =
            Pattern.compile("metadata\\.(labels|annotations)\\['(.*)'\\]");

    private final LocalNode node;
    private final KubernetesClient client;
    private final String uid;
    private final String namespace;
    private final String name;
    private final Semaphore wake = new Semaphore(0);
    private volatile Pod latest;
    private volatile boolean removed;
    private volatile boolean shuttingDown;

    private Path podDir;
    private PodNetwork.Sandbox sandbox;
    private String podIp;
    private Instant startTime;
    private boolean prepared;
    private String prepareError;
    private final List<ContainerRun> initContainers = new ArrayList<>();
    private final List<ContainerRun> containers = new ArrayList<>();
    private boolean initDone;
    private boolean initFailed;
    private String lastWrittenStatus;
    private final Map<String, Instant> transitions = new LinkedHashMap<>();

    PodWorker(LocalNode node, Pod pod) {
        this.node = node;
        this.client = node.client();
        this.latest = pod;
        this.uid = pod.getMetadata().getUid();
        this.namespace = pod.getMetadata().getNamespace();
        this.name = pod.getMetadata().getName();
        for (Container c :
                Optional.ofNullable(pod.getSpec().getInitContainers()).orElse(List.of())) {
            initContainers.add(new ContainerRun(c, true));
        }
        for (Container c : pod.getSpec().getContainers()) {
            containers.add(new ContainerRun(c, false));
        }
        initDone = initContainers.isEmpty();
    }

    String uid() {
        return uid;
    }

    boolean is(String namespace, String name) {
        return this.namespace.equals(namespace) && this.name.equals(name);
    }

    Optional<Long> pid(String container) {
        for (ContainerRun run : all()) {
            if (run.spec.getName().equals(container)
                    && run.process != null
                    && run.process.isAlive()) {
                return Optional.of(run.process.pid());
            }
        }
        return Optional.empty();
    }

    void start() {
        Thread.ofVirtual().name("ib-pod-" + namespace + "/" + name).start(this::run);
    }

    void update(Pod pod) {
        latest = pod;
        wake.release();
    }

    void podRemoved() {
        removed = true;
        wake.release();
    }

    /** Node shutdown: kill quickly, release the sandbox, write nothing. */
    void shutdown() {
        shuttingDown = true;
        wake.release();
        for (ContainerRun run : all()) {
            if (run.process != null) {
                run.process.stop(Duration.ofSeconds(2));
            }
        }
        releaseSandbox();
    }

    private List<ContainerRun> all() {
        List<ContainerRun> list = new ArrayList<>(initContainers);
        list.addAll(containers);
        return list;
    }

    // ---------------------------------------------------------------- main loop

    private void run() {
        try {
            startTime = Instant.now().truncatedTo(ChronoUnit.SECONDS);
            podDir =
                    Files.createDirectories(
                            node.root()
                                    .resolve("pods")
                                    .resolve(namespace + "_" + name + "_" + uid));
            Files.createDirectories(podDir.resolve("logs"));
            Files.createDirectories(podDir.resolve("tmp"));
            boolean terminal = false;
            while (!shuttingDown) {
                Pod pod = latest;
                if (removed) {
                    stopAll(Duration.ofSeconds(2), "pod object was removed");
                    break;
                }
                if (pod.getMetadata().getDeletionTimestamp() != null) {
                    long grace =
                            Optional.ofNullable(pod.getMetadata().getDeletionGracePeriodSeconds())
                                    .orElse(
                                            Optional.ofNullable(
                                                            pod.getSpec()
                                                                    .getTerminationGracePeriodSeconds())
                                                    .orElse(30L));
                    stopAll(Duration.ofSeconds(grace), "Stopping container");
                    writeStatus(true);
                    finalizeDeletion(client, pod);
                    break;
                }
                if (!terminal) {
                    if (!prepared) {
                        prepare(pod);
                    }
                    if (prepared) {
                        drive(pod);
                    }
                    terminal = isTerminal();
                    writeStatus(false);
                    if (terminal) {
                        releaseSandbox();
                    }
                }
                wake.tryAcquire(terminal ? 5000 : nextWakeMillis(), TimeUnit.MILLISECONDS);
                wake.drainPermits();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException | IOException e) {
            System.err.println(
                    "[local-node] pod " + namespace + "/" + name + " worker failed: " + e);
            e.printStackTrace();
        } finally {
            if (!shuttingDown) {
                for (ContainerRun run : all()) {
                    if (run.process != null && run.process.isAlive()) {
                        run.process.kill();
                    }
                }
                releaseSandbox();
            }
            node.workerDone(this);
        }
    }

    private long nextWakeMillis() {
        long wait = 500;
        Instant now = Instant.now();
        for (ContainerRun run : all()) {
            if (run.backoffUntil != null) {
                wait =
                        Math.min(
                                wait,
                                Math.max(10, Duration.between(now, run.backoffUntil).toMillis()));
            }
            for (ProbeState probe : run.probes()) {
                if (probe != null && probe.nextAt != null) {
                    wait =
                            Math.min(
                                    wait,
                                    Math.max(10, Duration.between(now, probe.nextAt).toMillis()));
                }
            }
        }
        return prepared ? wait : 1000;
    }

    static void finalizeDeletion(KubernetesClient client, Pod pod) {
        try {
            Pod current =
                    client.pods()
                            .inNamespace(pod.getMetadata().getNamespace())
                            .withName(pod.getMetadata().getName())
                            .get();
            if (current != null
                    && current.getMetadata().getUid().equals(pod.getMetadata().getUid())) {
                client.pods()
                        .inNamespace(pod.getMetadata().getNamespace())
                        .withName(pod.getMetadata().getName())
                        .withGracePeriod(0)
                        .delete();
            }
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                System.err.println(
                        "[local-node] cannot finalize deletion of "
                                + pod.getMetadata().getName()
                                + ": "
                                + e.getMessage());
            }
        }
    }

    // ---------------------------------------------------------------- preparation

    private void prepare(Pod pod) {
        try {
            if (sandbox == null && podIp == null) {
                if (Boolean.TRUE.equals(pod.getSpec().getHostNetwork())) {
                    podIp = node.nodeIp();
                } else {
                    sandbox = node.controlPlane().network().allocate();
                    podIp = sandbox.ip();
                }
                writeEtcFiles(pod);
            }
            for (Volume volume :
                    Optional.ofNullable(pod.getSpec().getVolumes()).orElse(List.of())) {
                materialize(pod, volume);
            }
            prepared = true;
            prepareError = null;
        } catch (ConfigException e) {
            if (!Objects.equals(prepareError, e.getMessage())) {
                node.event(pod, "Warning", "FailedMount", e.getMessage());
            }
            prepareError = e.getMessage();
        }
    }

    /** /etc/hosts and /etc/hostname for the pod's namespace, as a container runtime writes them. */
    private void writeEtcFiles(Pod pod) {
        if (sandbox == null) {
            return;
        }
        String hostname =
                Optional.ofNullable(pod.getSpec().getHostname())
                        .orElse(pod.getMetadata().getName());
        Path etc = Path.of("/etc/netns", sandbox.namespace());
        try {
            Files.createDirectories(etc);
            Files.writeString(
                    etc.resolve("hosts"),
                    "127.0.0.1 localhost\n::1 localhost\n"
                            + podIp
                            + " "
                            + hostname
                            + "\n"
                            + node.controlPlane().serviceProxy().hostsEntries(namespace));
            Files.writeString(etc.resolve("hostname"), hostname + "\n");
        } catch (IOException e) {
            // name resolution inside the pod falls back to the host files
        }
    }

    private void materialize(Pod pod, Volume volume) {
        Path dir = podDir.resolve("volumes").resolve(volume.getName());
        try {
            if (volume.getHostPath() != null) {
                Path target = Path.of(volume.getHostPath().getPath());
                String type = Optional.ofNullable(volume.getHostPath().getType()).orElse("");
                if (type.equals("DirectoryOrCreate")) {
                    Files.createDirectories(target);
                }
                Files.createDirectories(dir.getParent());
                if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createSymbolicLink(dir, target);
                }
                return;
            }
            Files.createDirectories(dir);
            if (volume.getConfigMap() != null) {
                var source = volume.getConfigMap();
                Map<String, byte[]> data = configMapData(source.getName(), source.getOptional());
                writeItems(
                        dir,
                        data,
                        source.getItems(),
                        source.getDefaultMode(),
                        "configMap " + source.getName());
            } else if (volume.getSecret() != null) {
                var source = volume.getSecret();
                Map<String, byte[]> data = secretData(source.getSecretName(), source.getOptional());
                writeItems(
                        dir,
                        data,
                        source.getItems(),
                        source.getDefaultMode(),
                        "secret " + source.getSecretName());
            } else if (volume.getDownwardAPI() != null) {
                writeDownward(
                        pod,
                        dir,
                        volume.getDownwardAPI().getItems(),
                        volume.getDownwardAPI().getDefaultMode());
            } else if (volume.getProjected() != null) {
                Integer defaultMode = volume.getProjected().getDefaultMode();
                for (VolumeProjection p : volume.getProjected().getSources()) {
                    if (p.getServiceAccountToken() != null) {
                        writeToken(pod, dir, p.getServiceAccountToken(), defaultMode);
                    } else if (p.getConfigMap() != null) {
                        var source = p.getConfigMap();
                        writeItems(
                                dir,
                                configMapData(source.getName(), source.getOptional()),
                                source.getItems(),
                                defaultMode,
                                "configMap " + source.getName());
                    } else if (p.getSecret() != null) {
                        var source = p.getSecret();
                        writeItems(
                                dir,
                                secretData(source.getName(), source.getOptional()),
                                source.getItems(),
                                defaultMode,
                                "secret " + source.getName());
                    } else if (p.getDownwardAPI() != null) {
                        writeDownward(pod, dir, p.getDownwardAPI().getItems(), defaultMode);
                    }
                }
            } else if (volume.getEmptyDir() == null) {
                node.event(
                        pod,
                        "Warning",
                        "UnsupportedVolume",
                        "volume "
                                + volume.getName()
                                + " is not supported by the local node; using an empty directory");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The Node authorizer learns that this pod references an object asynchronously, so the first
     * read right after binding may be refused with 403; a kubelet keeps retrying, and so do we.
     */
    private static <T> T readAsNode(java.util.function.Supplier<T> read) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return read.get();
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() != 403 || System.nanoTime() > deadline) {
                    throw e;
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private Map<String, byte[]> configMapData(String cmName, Boolean optional) {
        ConfigMap cm =
                readAsNode(() -> client.configMaps().inNamespace(namespace).withName(cmName).get());
        if (cm == null) {
            if (Boolean.TRUE.equals(optional)) {
                return Map.of();
            }
            throw new ConfigException("configmap \"" + cmName + "\" not found");
        }
        Map<String, byte[]> data = new TreeMap<>();
        Optional.ofNullable(cm.getData())
                .orElse(Map.of())
                .forEach((k, v) -> data.put(k, v.getBytes(StandardCharsets.UTF_8)));
        Optional.ofNullable(cm.getBinaryData())
                .orElse(Map.of())
                .forEach((k, v) -> data.put(k, Base64.getDecoder().decode(v)));
        return data;
    }

    private Map<String, byte[]> secretData(String secretName, Boolean optional) {
        Secret secret =
                readAsNode(
                        () -> client.secrets().inNamespace(namespace).withName(secretName).get());
        if (secret == null) {
            if (Boolean.TRUE.equals(optional)) {
                return Map.of();
            }
            throw new ConfigException("secret \"" + secretName + "\" not found");
        }
        Map<String, byte[]> data = new TreeMap<>();
        Optional.ofNullable(secret.getData())
                .orElse(Map.of())
                .forEach((k, v) -> data.put(k, Base64.getDecoder().decode(v)));
        Optional.ofNullable(secret.getStringData())
                .orElse(Map.of())
                .forEach((k, v) -> data.put(k, v.getBytes(StandardCharsets.UTF_8)));
        return data;
    }

    private void writeItems(
            Path dir,
            Map<String, byte[]> data,
            List<KeyToPath> items,
            Integer defaultMode,
            String what)
            throws IOException {
        int mode = defaultMode == null ? 0644 : defaultMode;
        if (items == null || items.isEmpty()) {
            for (var e : data.entrySet()) {
                writeFile(dir.resolve(e.getKey()), e.getValue(), mode);
            }
            return;
        }
        for (KeyToPath item : items) {
            byte[] value = data.get(item.getKey());
            if (value == null) {
                throw new ConfigException(what + " has no key \"" + item.getKey() + "\"");
            }
            writeFile(
                    dir.resolve(item.getPath()),
                    value,
                    item.getMode() == null ? mode : item.getMode());
        }
    }

    private void writeDownward(
            Pod pod, Path dir, List<DownwardAPIVolumeFile> items, Integer defaultMode)
            throws IOException {
        int mode = defaultMode == null ? 0644 : defaultMode;
        for (DownwardAPIVolumeFile item : Optional.ofNullable(items).orElse(List.of())) {
            String value;
            if (item.getFieldRef() != null) {
                value = fieldValue(pod, item.getFieldRef(), true);
            } else {
                value =
                        resourceValue(
                                pod,
                                findContainer(pod, item.getResourceFieldRef().getContainerName()),
                                item.getResourceFieldRef());
            }
            writeFile(
                    dir.resolve(item.getPath()),
                    value.getBytes(StandardCharsets.UTF_8),
                    item.getMode() == null ? mode : item.getMode());
        }
    }

    private void writeToken(
            Pod pod, Path dir, ServiceAccountTokenProjection projection, Integer defaultMode)
            throws IOException {
        long expiration = Optional.ofNullable(projection.getExpirationSeconds()).orElse(3600L);
        String serviceAccount =
                Optional.ofNullable(pod.getSpec().getServiceAccountName()).orElse("default");
        TokenRequest request =
                new TokenRequestBuilder()
                        .withNewSpec()
                        .withAudiences(
                                projection.getAudience() == null
                                                || projection.getAudience().isEmpty()
                                        ? List.of()
                                        : List.of(projection.getAudience()))
                        .withExpirationSeconds(expiration)
                        .withNewBoundObjectRef()
                        .withApiVersion("v1")
                        .withKind("Pod")
                        .withName(name)
                        .withUid(uid)
                        .endBoundObjectRef()
                        .endSpec()
                        .build();
        TokenRequest response;
        try {
            response =
                    client.serviceAccounts()
                            .inNamespace(namespace)
                            .withName(serviceAccount)
                            .tokenRequest(request);
        } catch (KubernetesClientException e) {
            throw new ConfigException(
                    "cannot request a token for serviceaccount \""
                            + serviceAccount
                            + "\": "
                            + e.getMessage());
        }
        Path file = dir.resolve(projection.getPath());
        writeFile(
                file,
                response.getStatus().getToken().getBytes(StandardCharsets.UTF_8),
                defaultMode == null ? 0644 : defaultMode);
        Instant expires = Instant.parse(response.getStatus().getExpirationTimestamp());
        long refreshIn = (long) (Duration.between(Instant.now(), expires).toMillis() * 0.8);
        node.scheduler()
                .schedule(
                        () -> {
                            if (!removed
                                    && !shuttingDown
                                    && latest.getMetadata().getDeletionTimestamp() == null
                                    && !isTerminalQuick()) {
                                try {
                                    writeToken(latest, dir, projection, defaultMode);
                                } catch (IOException | RuntimeException e) {
                                    System.err.println(
                                            "[local-node] token refresh failed for "
                                                    + name
                                                    + ": "
                                                    + e);
                                }
                            }
                        },
                        Math.max(refreshIn, 1000),
                        TimeUnit.MILLISECONDS);
    }

    private boolean isTerminalQuick() {
        String phase = latest.getStatus() == null ? null : latest.getStatus().getPhase();
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    private static void writeFile(Path file, byte[] content, int mode) throws IOException {
        Files.createDirectories(file.getParent());
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.write(tmp, content);
        Files.setPosixFilePermissions(tmp, permissions(mode));
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] order = {
            PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
                    PosixFilePermission.OTHERS_READ,
            PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE,
                    PosixFilePermission.GROUP_READ,
            PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
                    PosixFilePermission.OWNER_READ
        };
        for (int bit = 0; bit < 9; bit++) {
            if ((mode & (1 << bit)) != 0) {
                set.add(order[bit]);
            }
        }
        return set;
    }

    // ---------------------------------------------------------------- containers

    private void drive(Pod pod) {
        Instant now = Instant.now();
        String policy = Optional.ofNullable(pod.getSpec().getRestartPolicy()).orElse("Always");
        if (!initDone && !initFailed) {
            for (ContainerRun run : initContainers) {
                boolean sidecar = "Always".equals(run.spec.getRestartPolicy());
                if (sidecar) {
                    reap(run, "Always", now);
                    if (run.process == null && run.restartDue(now)) {
                        startContainer(pod, run);
                    }
                    if (run.running()) {
                        continue;
                    }
                    return;
                }
                if (run.completedSuccessfully()) {
                    continue;
                }
                reap(run, policy.equals("Always") ? "OnFailure" : policy, now);
                if (run.completedSuccessfully()) {
                    continue;
                }
                if (run.terminatedFinal) {
                    initFailed = true;
                    return;
                }
                if (run.process == null && run.restartDue(now)) {
                    startContainer(pod, run);
                }
                return;
            }
            initDone = true;
        }
        if (initFailed) {
            return;
        }
        for (ContainerRun run : initContainers) {
            if ("Always".equals(run.spec.getRestartPolicy())) {
                reap(run, "Always", now);
                if (run.process == null && run.restartDue(now)) {
                    startContainer(pod, run);
                }
            }
        }
        for (ContainerRun run : containers) {
            reap(run, policy, now);
            if (run.process == null && !run.terminatedFinal && run.restartDue(now)) {
                startContainer(pod, run);
            }
        }
        for (ContainerRun run : all()) {
            if (run.running()) {
                probe(pod, run, now);
            }
        }
    }

    /** Records the exit of a container process and decides about its restart. */
    private void reap(ContainerRun run, String policy, Instant now) {
        if (run.process == null || run.process.isAlive()) {
            return;
        }
        int exit = run.process.process().exitValue();
        run.recordExit(exit, now, terminationMessage(run, exit));
        boolean restart = policy.equals("Always") || (policy.equals("OnFailure") && exit != 0);
        if (restart) {
            Duration backoff = run.nextBackoff(node.restartBackoff(), now);
            run.backoffUntil = now.plus(backoff);
            if (!backoff.isZero()) {
                node.event(
                        latest,
                        "Warning",
                        "BackOff",
                        "Back-off restarting failed container "
                                + run.spec.getName()
                                + " in pod "
                                + name);
            }
        } else {
            run.terminatedFinal = true;
        }
    }

    private String terminationMessage(ContainerRun run, int exit) {
        String path =
                Optional.ofNullable(run.spec.getTerminationMessagePath())
                        .orElse("/dev/termination-log");
        Path file = run.root == null ? null : reroot(run.root, path);
        try {
            if (file != null && Files.isRegularFile(file)) {
                String message = Files.readString(file);
                if (!message.isEmpty()) {
                    return message.length() > 4096 ? message.substring(0, 4096) : message;
                }
            }
        } catch (IOException e) {
            // fall through
        }
        if (exit != 0 && "FallbackToLogsOnError".equals(run.spec.getTerminationMessagePolicy())) {
            String tail = ChildProcess.tail(logFile(run), 80);
            return tail.length() > 2048 ? tail.substring(tail.length() - 2048) : tail;
        }
        return null;
    }

    private Path logFile(ContainerRun run) {
        return podDir.resolve("logs").resolve(run.spec.getName() + ".log");
    }

    private void startContainer(Pod pod, ContainerRun run) {
        Container c = run.spec;
        Optional<ImageMap.Mapping> mapping;
        try {
            mapping = node.images().resolve(c.getImage());
        } catch (RuntimeException e) {
            run.waiting(
                    "ErrImagePull",
                    "cannot provide image \"" + c.getImage() + "\": " + e.getMessage());
            run.backoffUntil = Instant.now().plus(node.restartBackoff());
            return;
        }
        if (mapping.isEmpty()) {
            run.waiting(
                    "ErrImagePull",
                    "image \"" + c.getImage() + "\" is not in the local node's image map");
            if (run.reportedWaiting == null || !run.reportedWaiting.equals("ErrImagePull")) {
                node.event(pod, "Warning", "Failed", run.waitingMessage);
                run.reportedWaiting = "ErrImagePull";
            }
            run.backoffUntil = Instant.now().plusSeconds(2);
            return;
        }
        try {
            Path root = Files.createDirectories(podDir.resolve("rootfs").resolve(c.getName()));
            run.root = root;
            Map<String, String> mounts = mount(pod, c, root);
            Map<String, String> env = environment(pod, c, mapping.get(), root, mounts);
            List<String> argv = new ArrayList<>();
            List<String> command = Optional.ofNullable(c.getCommand()).orElse(List.of());
            List<String> args = Optional.ofNullable(c.getArgs()).orElse(List.of());
            if (!command.isEmpty()) {
                command.forEach(s -> argv.add(expand(s, env)));
                args.forEach(s -> argv.add(expand(s, env)));
            } else {
                argv.addAll(mapping.get().entrypoint());
                if (!args.isEmpty()) {
                    args.forEach(s -> argv.add(expand(s, env)));
                } else {
                    argv.addAll(mapping.get().defaultArgs());
                }
            }
            if (argv.isEmpty()) {
                throw new ConfigException("no command specified for container " + c.getName());
            }
            Path workDir = c.getWorkingDir() == null ? root : reroot(root, c.getWorkingDir());
            Files.createDirectories(workDir);
            List<String> full = new ArrayList<>(sandbox == null ? List.of() : sandbox.execPrefix());
            full.addAll(argv);
            run.process = ChildProcess.start(c.getName(), full, env, true, workDir, logFile(run));
            run.env = env;
            if (run.restartedOnce) {
                run.restartCount++;
            }
            run.restartedOnce = true;
            run.running(Instant.now());
            run.resetProbes(Instant.now());
            run.process.process().onExit().thenRun(wake::release);
            node.event(pod, "Normal", "Started", "Started container " + c.getName());
        } catch (ConfigException e) {
            run.waiting("CreateContainerConfigError", e.getMessage());
            if (!Objects.equals(run.reportedWaiting, e.getMessage())) {
                node.event(pod, "Warning", "Failed", "Error: " + e.getMessage());
                run.reportedWaiting = e.getMessage();
            }
            run.backoffUntil = Instant.now().plusSeconds(1);
        } catch (IOException | UncheckedIOException e) {
            run.waiting("RunContainerError", e.getMessage());
            node.event(pod, "Warning", "Failed", "Error: " + e.getMessage());
            run.backoffUntil = Instant.now().plus(node.restartBackoff());
        }
    }

    static Path reroot(Path root, String absolute) {
        String relative = absolute.replaceFirst("^/+", "");
        return relative.isEmpty() ? root : root.resolve(relative);
    }

    static String mountEnvName(String mountPath) {
        String upper = mountPath.toUpperCase(java.util.Locale.ROOT).replaceAll("[^A-Z0-9]+", "_");
        return "IB_MOUNT_" + upper.replaceAll("^_+|_+$", "");
    }

    /** Links every volume mount into the container root; returns mountPath -> real path. */
    private Map<String, String> mount(Pod pod, Container c, Path root) throws IOException {
        Map<String, String> mounts = new LinkedHashMap<>();
        List<VolumeMount> list =
                new ArrayList<>(Optional.ofNullable(c.getVolumeMounts()).orElse(List.of()));
        list.sort(Comparator.comparingInt(m -> m.getMountPath().length()));
        for (VolumeMount m : list) {
            Path source = podDir.resolve("volumes").resolve(m.getName());
            String subPath = m.getSubPath();
            if (m.getSubPathExpr() != null && !m.getSubPathExpr().isEmpty()) {
                subPath = m.getSubPathExpr();
            }
            if (subPath != null && !subPath.isEmpty()) {
                source = source.resolve(subPath);
                if (!Files.exists(source)) {
                    Files.createDirectories(source);
                }
            }
            Path target = reroot(root, m.getMountPath());
            Files.createDirectories(target.getParent());
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                if (Files.isSymbolicLink(target)) {
                    Files.delete(target);
                } else {
                    ChildProcess.deleteRecursively(target);
                }
            }
            Files.createSymbolicLink(target, source.toAbsolutePath());
            mounts.put(m.getMountPath(), target.toString());
        }
        return mounts;
    }

    private Map<String, String> environment(
            Pod pod, Container c, ImageMap.Mapping mapping, Path root, Map<String, String> mounts) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put(
                "PATH",
                System.getenv()
                        .getOrDefault(
                                "PATH",
                                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
        String javaHome = System.getenv("JAVA_HOME");
        env.put("JAVA_HOME", javaHome != null ? javaHome : System.getProperty("java.home"));
        env.put("LANG", "C.UTF-8");
        env.putAll(mapping.env());
        env.put("HOSTNAME", Optional.ofNullable(pod.getSpec().getHostname()).orElse(name));
        env.put("HOME", root.toString());
        env.put("TMPDIR", podDir.resolve("tmp").toString());
        String host = node.controlPlane().apiServerHost();
        String port = String.valueOf(node.controlPlane().apiServerPort());
        env.put("KUBERNETES_SERVICE_HOST", host);
        env.put("KUBERNETES_SERVICE_PORT", port);
        env.put("KUBERNETES_SERVICE_PORT_HTTPS", port);
        env.put("KUBERNETES_PORT", "tcp://" + host + ":" + port);
        env.put("POD_IP", podIp);
        env.put("IB_VOLUME_ROOT", root.toString());
        mounts.forEach((path, real) -> env.put(mountEnvName(path), real));
        String sa = mounts.get(SERVICE_ACCOUNT_DIR);
        if (sa != null) {
            env.put("KUBERNETES_AUTH_SERVICEACCOUNT_TOKEN", sa + "/token");
            env.put("KUBERNETES_CERTS_CA_FILE", sa + "/ca.crt");
            env.put("KUBENAMESPACE", sa + "/namespace");
        }
        for (EnvFromSource from : Optional.ofNullable(c.getEnvFrom()).orElse(List.of())) {
            String prefix = Optional.ofNullable(from.getPrefix()).orElse("");
            Map<String, byte[]> data;
            if (from.getConfigMapRef() != null) {
                data =
                        configMapData(
                                from.getConfigMapRef().getName(),
                                from.getConfigMapRef().getOptional());
            } else if (from.getSecretRef() != null) {
                data = secretData(from.getSecretRef().getName(), from.getSecretRef().getOptional());
            } else {
                continue;
            }
            data.forEach((k, v) -> env.put(prefix + k, new String(v, StandardCharsets.UTF_8)));
        }
        for (EnvVar var : Optional.ofNullable(c.getEnv()).orElse(List.of())) {
            String value;
            if (var.getValueFrom() == null) {
                value = expand(Optional.ofNullable(var.getValue()).orElse(""), env);
            } else if (var.getValueFrom().getFieldRef() != null) {
                value = fieldValue(pod, var.getValueFrom().getFieldRef(), false);
            } else if (var.getValueFrom().getResourceFieldRef() != null) {
                var ref = var.getValueFrom().getResourceFieldRef();
                value =
                        resourceValue(
                                pod,
                                ref.getContainerName() == null || ref.getContainerName().isEmpty()
                                        ? c
                                        : findContainer(pod, ref.getContainerName()),
                                ref);
            } else if (var.getValueFrom().getConfigMapKeyRef() != null) {
                var ref = var.getValueFrom().getConfigMapKeyRef();
                byte[] v = configMapData(ref.getName(), ref.getOptional()).get(ref.getKey());
                if (v == null) {
                    if (Boolean.TRUE.equals(ref.getOptional())) {
                        continue;
                    }
                    throw new ConfigException(
                            "couldn't find key "
                                    + ref.getKey()
                                    + " in ConfigMap "
                                    + namespace
                                    + "/"
                                    + ref.getName());
                }
                value = new String(v, StandardCharsets.UTF_8);
            } else if (var.getValueFrom().getSecretKeyRef() != null) {
                var ref = var.getValueFrom().getSecretKeyRef();
                byte[] v = secretData(ref.getName(), ref.getOptional()).get(ref.getKey());
                if (v == null) {
                    if (Boolean.TRUE.equals(ref.getOptional())) {
                        continue;
                    }
                    throw new ConfigException(
                            "couldn't find key "
                                    + ref.getKey()
                                    + " in Secret "
                                    + namespace
                                    + "/"
                                    + ref.getName());
                }
                value = new String(v, StandardCharsets.UTF_8);
            } else {
                value = "";
            }
            env.put(var.getName(), value);
        }
        return env;
    }

    /** Kubernetes' $(VAR) expansion: defined names expand, $$ escapes, anything else stays. */
    static String expand(String input, Map<String, String> env) {
        Matcher m = VAR_REF.matcher(input);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String replacement;
            if (m.group().equals("$$")) {
                replacement = "$";
            } else {
                replacement = env.getOrDefault(m.group(1), m.group());
            }
            m.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(out);
        return out.toString();
    }

    private String fieldValue(Pod pod, ObjectFieldSelector selector, boolean volume) {
        String path = selector.getFieldPath();
        Matcher m = SUBSCRIPT.matcher(path);
        if (m.matches()) {
            Map<String, String> map =
                    m.group(1).equals("labels")
                            ? pod.getMetadata().getLabels()
                            : pod.getMetadata().getAnnotations();
            return Optional.ofNullable(map).map(x -> x.get(m.group(2))).orElse("");
        }
        return switch (path) {
            case "metadata.name" -> pod.getMetadata().getName();
            case "metadata.namespace" -> pod.getMetadata().getNamespace();
            case "metadata.uid" -> pod.getMetadata().getUid();
            case "metadata.labels" -> formatMap(pod.getMetadata().getLabels());
            case "metadata.annotations" -> formatMap(pod.getMetadata().getAnnotations());
            case "spec.nodeName" -> pod.getSpec().getNodeName();
            case "spec.serviceAccountName" ->
                    Optional.ofNullable(pod.getSpec().getServiceAccountName()).orElse("default");
            case "status.podIP", "status.podIPs" -> podIp;
            case "status.hostIP", "status.hostIPs" -> node.nodeIp();
            default -> throw new ConfigException("unsupported fieldRef " + path);
        };
    }

    private static String formatMap(Map<String, String> map) {
        StringBuilder out = new StringBuilder();
        new TreeMap<>(Optional.ofNullable(map).orElse(Map.of()))
                .forEach(
                        (k, v) ->
                                out.append(k)
                                        .append("=\"")
                                        .append(
                                                v.replace("\\", "\\\\")
                                                        .replace("\"", "\\\"")
                                                        .replace("\n", "\\n"))
                                        .append("\"\n"));
        return out.toString().strip();
    }

    private Container findContainer(Pod pod, String containerName) {
        return pod.getSpec().getContainers().stream()
                .filter(c -> c.getName().equals(containerName))
                .findFirst()
                .orElseThrow(() -> new ConfigException("no container " + containerName));
    }

    private String resourceValue(Pod pod, Container c, ResourceFieldSelector ref) {
        String resource = ref.getResource();
        String[] parts = resource.split("\\.", 2);
        Map<String, Quantity> values =
                c.getResources() == null
                        ? null
                        : parts[0].equals("limits")
                                ? c.getResources().getLimits()
                                : c.getResources().getRequests();
        Quantity q = values == null ? null : values.get(parts[1]);
        if (q == null && parts[0].equals("limits")) {
            q =
                    new Quantity(
                            parts[1].equals("cpu")
                                    ? "16"
                                    : parts[1].equals("memory") ? "64Gi" : "100Gi");
        }
        if (q == null) {
            return "0";
        }
        BigDecimal amount = Quantity.getAmountInBytes(q);
        BigDecimal divisor =
                ref.getDivisor() == null
                        ? BigDecimal.ONE
                        : Quantity.getAmountInBytes(ref.getDivisor());
        return amount.divide(divisor, 0, RoundingMode.CEILING).toPlainString();
    }

    // ---------------------------------------------------------------- probes

    private void probe(Pod pod, ContainerRun run, Instant now) {
        ProbeState startup = run.startup;
        if (startup != null && !run.started) {
            if (startup.due(now)) {
                boolean ok = execute(run, startup.spec);
                if (startup.record(ok, now)) {
                    run.started = true;
                } else if (startup.failed()) {
                    node.event(
                            pod,
                            "Warning",
                            "Unhealthy",
                            "Startup probe failed for " + run.spec.getName());
                    kill(pod, run);
                }
            }
            return;
        }
        run.started = true;
        if (run.liveness != null && run.liveness.due(now)) {
            run.liveness.record(execute(run, run.liveness.spec), now);
            if (run.liveness.failed()) {
                node.event(
                        pod,
                        "Warning",
                        "Unhealthy",
                        "Liveness probe failed for " + run.spec.getName());
                kill(pod, run);
                return;
            }
        }
        if (run.readiness == null) {
            run.ready = true;
        } else if (run.readiness.due(now)) {
            boolean ok = execute(run, run.readiness.spec);
            run.readiness.record(ok, now);
            run.ready = run.readiness.succeeded();
            if (!ok && run.readiness.consecutiveFailures == run.readiness.failureThreshold()) {
                node.event(
                        pod,
                        "Warning",
                        "Unhealthy",
                        "Readiness probe failed for " + run.spec.getName());
            }
        }
    }

    private void kill(Pod pod, ContainerRun run) {
        long grace =
                Optional.ofNullable(pod.getSpec().getTerminationGracePeriodSeconds()).orElse(30L);
        node.event(
                pod,
                "Normal",
                "Killing",
                "Container " + run.spec.getName() + " failed a probe, will be restarted");
        run.process.stop(Duration.ofSeconds(grace));
    }

    private boolean execute(ContainerRun run, Probe probe) {
        int timeout = Optional.ofNullable(probe.getTimeoutSeconds()).orElse(1);
        try {
            if (probe.getHttpGet() != null) {
                var get = probe.getHttpGet();
                String host =
                        get.getHost() == null || get.getHost().isEmpty() ? podIp : get.getHost();
                int port = port(run, get.getPort());
                String scheme =
                        Optional.ofNullable(get.getScheme())
                                .orElse("HTTP")
                                .toLowerCase(java.util.Locale.ROOT);
                String path = Optional.ofNullable(get.getPath()).orElse("/");
                HttpRequest.Builder request =
                        HttpRequest.newBuilder(
                                        URI.create(
                                                scheme
                                                        + "://"
                                                        + host
                                                        + ":"
                                                        + port
                                                        + (path.startsWith("/")
                                                                ? path
                                                                : "/" + path)))
                                .timeout(Duration.ofSeconds(timeout))
                                .header("User-Agent", "kube-probe/1.34");
                Optional.ofNullable(get.getHttpHeaders())
                        .orElse(List.of())
                        .forEach(h -> request.setHeader(h.getName(), h.getValue()));
                HttpResponse<Void> response =
                        probeClient(scheme)
                                .send(request.build(), HttpResponse.BodyHandlers.discarding());
                return response.statusCode() >= 200 && response.statusCode() < 400;
            }
            if (probe.getTcpSocket() != null) {
                String host =
                        probe.getTcpSocket().getHost() == null
                                        || probe.getTcpSocket().getHost().isEmpty()
                                ? podIp
                                : probe.getTcpSocket().getHost();
                try (Socket socket = new Socket()) {
                    socket.connect(
                            new InetSocketAddress(host, port(run, probe.getTcpSocket().getPort())),
                            timeout * 1000);
                    return true;
                }
            }
            if (probe.getExec() != null) {
                List<String> argv =
                        new ArrayList<>(sandbox == null ? List.of() : sandbox.execPrefix());
                argv.addAll(probe.getExec().getCommand());
                ProcessBuilder builder =
                        new ProcessBuilder(argv)
                                .directory(run.root.toFile())
                                .redirectErrorStream(true)
                                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
                builder.environment().clear();
                builder.environment().putAll(run.env);
                Process p = builder.start();
                if (!p.waitFor(timeout, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    return false;
                }
                return p.exitValue() == 0;
            }
            if (probe.getGrpc() != null) {
                try (Socket socket = new Socket()) {
                    socket.connect(
                            new InetSocketAddress(podIp, probe.getGrpc().getPort()),
                            timeout * 1000);
                    return true;
                }
            }
        } catch (IOException | RuntimeException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        return true;
    }

    private static HttpClient plainClient;
    private static HttpClient insecureClient;

    private static synchronized HttpClient probeClient(String scheme) {
        if (scheme.equals("https")) {
            if (insecureClient == null) {
                try {
                    // kubelet probes do not verify certificates either
                    SSLContext context = SSLContext.getInstance("TLS");
                    context.init(
                            null,
                            new TrustManager[] {
                                new X509TrustManager() {
                                    public void checkClientTrusted(
                                            java.security.cert.X509Certificate[] c, String a) {}

                                    public void checkServerTrusted(
                                            java.security.cert.X509Certificate[] c, String a) {}

                                    public java.security.cert.X509Certificate[]
                                            getAcceptedIssuers() {
                                        return new java.security.cert.X509Certificate[0];
                                    }
                                }
                            },
                            null);
                    insecureClient =
                            HttpClient.newBuilder()
                                    .sslContext(context)
                                    .connectTimeout(Duration.ofSeconds(2))
                                    .build();
                } catch (java.security.GeneralSecurityException e) {
                    throw new IllegalStateException(e);
                }
            }
            return insecureClient;
        }
        if (plainClient == null) {
            plainClient =
                    HttpClient.newBuilder()
                            .version(HttpClient.Version.HTTP_1_1)
                            .connectTimeout(Duration.ofSeconds(2))
                            .build();
        }
        return plainClient;
    }

    private static int port(ContainerRun run, IntOrString port) {
        if (port.getIntVal() != null) {
            return port.getIntVal();
        }
        for (ContainerPort p : Optional.ofNullable(run.spec.getPorts()).orElse(List.of())) {
            if (port.getStrVal().equals(p.getName())) {
                return p.getContainerPort();
            }
        }
        try {
            return Integer.parseInt(port.getStrVal());
        } catch (NumberFormatException e) {
            throw new ConfigException("unknown named port " + port.getStrVal());
        }
    }

    // ---------------------------------------------------------------- termination

    private void stopAll(Duration grace, String why) {
        List<Thread> stoppers = new ArrayList<>();
        for (ContainerRun run : all()) {
            if (run.process != null && run.process.isAlive()) {
                node.event(latest, "Normal", "Killing", why + " " + run.spec.getName());
                stoppers.add(Thread.ofVirtual().start(() -> run.process.stop(grace)));
            }
        }
        for (Thread t : stoppers) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Instant now = Instant.now();
        for (ContainerRun run : all()) {
            if (run.process != null && !run.process.isAlive() && run.state.equals("running")) {
                int exit = run.process.process().exitValue();
                run.recordExit(exit, now, terminationMessage(run, exit));
            }
            run.terminatedFinal = true;
            run.backoffUntil = null;
            if (run.state.equals("waiting")) {
                run.neverRan = run.startedAt == null;
            }
        }
        releaseSandbox();
    }

    private synchronized void releaseSandbox() {
        if (sandbox != null) {
            node.controlPlane().network().release(sandbox);
            try {
                ChildProcess.deleteRecursively(Path.of("/etc/netns", sandbox.namespace()));
            } catch (RuntimeException e) {
                // leftover hosts file is harmless
            }
            sandbox = null;
        }
    }

    // ---------------------------------------------------------------- status

    private boolean isTerminal() {
        if (initFailed) {
            return true;
        }
        if (!initDone || containers.isEmpty()) {
            return false;
        }
        return containers.stream().allMatch(r -> r.terminatedFinal);
    }

    private String phase() {
        if (initFailed) {
            return "Failed";
        }
        boolean allFinal = containers.stream().allMatch(r -> r.terminatedFinal);
        if (initDone && allFinal) {
            boolean anyRan = containers.stream().anyMatch(r -> r.exitCode != null);
            boolean allZero =
                    containers.stream().allMatch(r -> r.exitCode != null && r.exitCode == 0);
            return anyRan && allZero ? "Succeeded" : "Failed";
        }
        if (allFinal) {
            return "Failed";
        }
        if (!initDone) {
            return "Pending";
        }
        boolean anyStarted =
                containers.stream().anyMatch(r -> r.startedAt != null || r.restartCount > 0);
        return anyStarted ? "Running" : "Pending";
    }

    private void writeStatus(boolean finalWrite) {
        for (int attempt = 0; attempt < 6; attempt++) {
            Pod pod = latest;
            PodStatus status = buildStatus(pod);
            String json = Serialization.asJson(status);
            if (json.equals(lastWrittenStatus) && !finalWrite) {
                return;
            }
            Pod copy = Serialization.clone(pod);
            copy.setStatus(status);
            try {
                Pod written = client.pods().inNamespace(namespace).resource(copy).updateStatus();
                lastWrittenStatus = json;
                if (written != null) {
                    latest = written;
                }
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404) {
                    removed = true;
                    return;
                }
                if (e.getCode() == 409) {
                    Pod fresh = client.pods().inNamespace(namespace).withName(name).get();
                    if (fresh == null || !fresh.getMetadata().getUid().equals(uid)) {
                        removed = true;
                        return;
                    }
                    latest = fresh;
                    continue;
                }
                System.err.println(
                        "[local-node] status update of "
                                + namespace
                                + "/"
                                + name
                                + " failed: "
                                + e.getMessage());
                return;
            }
        }
    }

    private PodStatus buildStatus(Pod pod) {
        PodStatus status =
                pod.getStatus() == null ? new PodStatus() : Serialization.clone(pod.getStatus());
        String phase = phase();
        status.setPhase(phase);
        status.setHostIP(node.nodeIp());
        status.setHostIPs(List.of(new HostIPBuilder().withIp(node.nodeIp()).build()));
        if (podIp != null) {
            status.setPodIP(podIp);
            status.setPodIPs(List.of(new PodIPBuilder().withIp(podIp).build()));
        }
        status.setStartTime(startTime.toString());
        boolean terminal = phase.equals("Succeeded") || phase.equals("Failed");

        List<String> unready = new ArrayList<>();
        for (ContainerRun run : containers) {
            if (!run.ready || !run.running()) {
                unready.add(run.spec.getName());
            }
        }
        List<String> uninitialized = new ArrayList<>();
        for (ContainerRun run : initContainers) {
            boolean sidecar = "Always".equals(run.spec.getRestartPolicy());
            if (sidecar ? !run.running() && !initDone : !run.completedSuccessfully()) {
                uninitialized.add(run.spec.getName());
            }
        }
        Map<String, PodCondition> conditions = new LinkedHashMap<>();
        for (PodCondition c : Optional.ofNullable(status.getConditions()).orElse(List.of())) {
            conditions.put(c.getType(), c);
        }
        setCondition(
                conditions,
                "PodReadyToStartContainers",
                sandbox != null
                        || podIp != null && !terminal
                        || podIp != null && Boolean.TRUE.equals(pod.getSpec().getHostNetwork()),
                null,
                null);
        if (terminal) {
            setCondition(
                    conditions,
                    "Initialized",
                    initDone || !initFailed,
                    initDone ? "PodCompleted" : "ContainersNotInitialized",
                    initDone ? null : "containers with incomplete status: " + uninitialized);
            setCondition(conditions, "ContainersReady", false, "PodCompleted", null);
            setCondition(conditions, "Ready", false, "PodCompleted", null);
        } else {
            boolean initialized = initDone;
            setCondition(
                    conditions,
                    "Initialized",
                    initialized,
                    initialized ? null : "ContainersNotInitialized",
                    initialized ? null : "containers with incomplete status: " + uninitialized);
            boolean ready = initialized && unready.isEmpty();
            String reason = ready ? null : "ContainersNotReady";
            String message = ready ? null : "containers with unready status: " + unready;
            setCondition(conditions, "ContainersReady", ready, reason, message);
            setCondition(conditions, "Ready", ready, reason, message);
        }
        List<PodCondition> ordered = new ArrayList<>();
        for (String type :
                List.of(
                        "PodReadyToStartContainers",
                        "Initialized",
                        "Ready",
                        "ContainersReady",
                        "PodScheduled")) {
            if (conditions.containsKey(type)) {
                ordered.add(conditions.remove(type));
            }
        }
        ordered.addAll(conditions.values());
        status.setConditions(ordered);
        status.setInitContainerStatuses(
                initContainers.isEmpty()
                        ? null
                        : initContainers.stream().map(r -> r.status()).toList());
        status.setContainerStatuses(containers.stream().map(r -> r.status()).toList());
        status.setMessage(prepareError);
        status.setReason(null);
        return status;
    }

    private void setCondition(
            Map<String, PodCondition> conditions,
            String type,
            boolean value,
            String reason,
            String message) {
        String s = value ? "True" : "False";
        PodCondition existing = conditions.get(type);
        String transition;
        if (existing != null
                && s.equals(existing.getStatus())
                && existing.getLastTransitionTime() != null) {
            transition = existing.getLastTransitionTime();
        } else {
            transition =
                    transitions
                            .compute(type + "=" + s, (k, v) -> v != null ? v : Instant.now())
                            .truncatedTo(ChronoUnit.SECONDS)
                            .toString();
            transitions.remove(type + "=" + (value ? "False" : "True"));
        }
        conditions.put(
                type,
                new PodConditionBuilder()
                        .withType(type)
                        .withStatus(s)
                        .withReason(reason)
                        .withMessage(message)
                        .withLastTransitionTime(transition)
                        .build());
    }

    // ---------------------------------------------------------------- per container state

    private static final class ProbeState {
        final Probe spec;
        Instant nextAt;
        int consecutiveSuccesses;
        int consecutiveFailures;
        boolean everSucceeded;
        boolean currentlyOk;

        ProbeState(Probe spec, Instant containerStart) {
            this.spec = spec;
            this.nextAt =
                    containerStart.plusSeconds(
                            Optional.ofNullable(spec.getInitialDelaySeconds()).orElse(0));
        }

        boolean due(Instant now) {
            return !now.isBefore(nextAt);
        }

        /** Returns whether the probe is now in success state. */
        boolean record(boolean ok, Instant now) {
            nextAt = now.plusSeconds(Optional.ofNullable(spec.getPeriodSeconds()).orElse(10));
            if (ok) {
                consecutiveSuccesses++;
                consecutiveFailures = 0;
                if (consecutiveSuccesses
                        >= Optional.ofNullable(spec.getSuccessThreshold()).orElse(1)) {
                    currentlyOk = true;
                    everSucceeded = true;
                }
            } else {
                consecutiveFailures++;
                consecutiveSuccesses = 0;
                if (consecutiveFailures >= failureThreshold()) {
                    currentlyOk = false;
                }
            }
            return currentlyOk;
        }

        int failureThreshold() {
            return Optional.ofNullable(spec.getFailureThreshold()).orElse(3);
        }

        boolean failed() {
            return consecutiveFailures >= failureThreshold();
        }

        boolean succeeded() {
            return currentlyOk;
        }
    }

    private static final class ContainerRun {
        final Container spec;
        final boolean init;
        volatile ChildProcess process;
        Path root;
        Map<String, String> env = Map.of();
        String state = "waiting";
        String waitingReason = "ContainerCreating";
        String waitingMessage;
        String reportedWaiting;
        Instant startedAt;
        Integer exitCode;
        String terminatedReason;
        String terminatedMessage;
        Instant finishedAt;
        ContainerStateTerminated lastTerminated;
        int restartCount;
        boolean restartedOnce;
        boolean terminatedFinal;
        boolean neverRan;
        boolean ready;
        boolean started;
        Instant backoffUntil;
        Duration backoff;
        ProbeState readiness;
        ProbeState liveness;
        ProbeState startup;

        ContainerRun(Container spec, boolean init) {
            this.spec = spec;
            this.init = init;
        }

        List<ProbeState> probes() {
            List<ProbeState> list = new ArrayList<>(3);
            list.add(readiness);
            list.add(liveness);
            list.add(startup);
            return list;
        }

        boolean running() {
            return state.equals("running") && process != null && process.isAlive();
        }

        boolean completedSuccessfully() {
            return state.equals("terminated") && exitCode != null && exitCode == 0;
        }

        boolean restartDue(Instant now) {
            return backoffUntil == null || !now.isBefore(backoffUntil);
        }

        void waiting(String reason, String message) {
            if (state.equals("terminated")) {
                lastTerminated = terminatedState();
            }
            state = "waiting";
            waitingReason = reason;
            waitingMessage = message;
        }

        void running(Instant now) {
            if (state.equals("terminated")) {
                lastTerminated = terminatedState();
            }
            state = "running";
            startedAt = now;
            finishedAt = null;
            exitCode = null;
            backoffUntil = null;
            ready = false;
            started = spec.getStartupProbe() == null;
        }

        void resetProbes(Instant now) {
            readiness =
                    spec.getReadinessProbe() == null
                            ? null
                            : new ProbeState(spec.getReadinessProbe(), now);
            liveness =
                    spec.getLivenessProbe() == null
                            ? null
                            : new ProbeState(spec.getLivenessProbe(), now);
            startup =
                    spec.getStartupProbe() == null
                            ? null
                            : new ProbeState(spec.getStartupProbe(), now);
        }

        void recordExit(int exit, Instant now, String message) {
            state = "terminated";
            exitCode = exit;
            finishedAt = now;
            terminatedReason = exit == 0 ? "Completed" : "Error";
            terminatedMessage = message;
            ready = false;
            process = processOrNull();
        }

        private ChildProcess processOrNull() {
            // the exited process is dropped so a restart can start a new one
            return null;
        }

        Duration nextBackoff(Duration base, Instant now) {
            if (startedAt != null && Duration.between(startedAt, now).toMinutes() >= 10) {
                backoff = null;
            }
            if (backoff == null) {
                backoff = Duration.ZERO;
            } else if (backoff.isZero()) {
                backoff = base;
            } else {
                backoff = backoff.multipliedBy(2);
                if (backoff.compareTo(MAX_BACKOFF) > 0) {
                    backoff = MAX_BACKOFF;
                }
            }
            return backoff;
        }

        ContainerStateTerminated terminatedState() {
            return new ContainerStateTerminatedBuilder()
                    .withExitCode(exitCode)
                    .withReason(terminatedReason)
                    .withMessage(terminatedMessage)
                    .withStartedAt(
                            startedAt == null
                                    ? null
                                    : startedAt.truncatedTo(ChronoUnit.SECONDS).toString())
                    .withFinishedAt(
                            finishedAt == null
                                    ? null
                                    : finishedAt.truncatedTo(ChronoUnit.SECONDS).toString())
                    .withContainerID(containerId())
                    .build();
        }

        String containerId() {
            return startedAt == null
                    ? null
                    : "local-process://" + spec.getName() + "-" + restartCount;
        }

        ContainerStatus status() {
            ContainerState current;
            Instant now = Instant.now();
            if (state.equals("terminated")
                    && backoffUntil != null
                    && now.isBefore(backoffUntil)
                    && !terminatedFinal) {
                current =
                        new ContainerStateBuilder()
                                .withNewWaiting()
                                .withReason("CrashLoopBackOff")
                                .withMessage(
                                        "back-off "
                                                + backoff.toSeconds()
                                                + "s restarting failed container="
                                                + spec.getName())
                                .endWaiting()
                                .build();
            } else if (state.equals("terminated")) {
                current = new ContainerStateBuilder().withTerminated(terminatedState()).build();
            } else if (state.equals("running")) {
                current =
                        new ContainerStateBuilder()
                                .withNewRunning()
                                .withStartedAt(startedAt.truncatedTo(ChronoUnit.SECONDS).toString())
                                .endRunning()
                                .build();
            } else {
                current =
                        new ContainerStateBuilder()
                                .withNewWaiting()
                                .withReason(waitingReason)
                                .withMessage(waitingMessage)
                                .endWaiting()
                                .build();
            }
            ContainerStateTerminated last =
                    state.equals("terminated")
                                    && backoffUntil != null
                                    && !terminatedFinal
                                    && now.isBefore(backoffUntil)
                            ? terminatedState()
                            : lastTerminated;
            return new ContainerStatusBuilder()
                    .withName(spec.getName())
                    .withImage(spec.getImage())
                    .withImageID("local-process://" + spec.getImage())
                    .withContainerID(containerId())
                    .withReady(state.equals("running") && ready)
                    .withStarted(state.equals("running") && started)
                    .withRestartCount(restartCount)
                    .withState(current)
                    .withLastState(
                            last == null
                                    ? new ContainerState()
                                    : new ContainerStateBuilder().withTerminated(last).build())
                    .build();
        }
    }

    /** A pod configuration problem the user can fix (missing ConfigMap, key, ...). */
    static final class ConfigException extends RuntimeException {
        ConfigException(String message) {
            super(message);
        }
    }
}
