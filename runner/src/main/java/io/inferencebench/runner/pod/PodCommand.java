package io.inferencebench.runner.pod;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.profile.text.TerminalText;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code pod}: the runner inside a runner Job pod. Identity comes from the environment the Job sets
 * ({@code RUN_NAME} or {@code IB_RUN_NAME}, {@code POD_NAMESPACE}, {@code POD_NAME}, {@code
 * JOB_COMPLETION_INDEX}); the API server is reached with the pod's ServiceAccount.
 */
@Command(
        name = "pod",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Runs as one pod of a BenchmarkRun's runner Job.",
            "Reads the work order, reports through the part ConfigMap and starts each stage at"
                    + " the operator's barrier instant.",
            "Exit 0 when done or cancelled, 1 on failure, 2 on bad settings."
        })
public final class PodCommand implements Callable<Integer> {

    /** Exit code for missing or malformed settings (the same as the CLI's usage errors). */
    public static final int EXIT_USAGE = 2;

    @Spec CommandSpec spec;

    @Option(
            names = "--work-order",
            description =
                    "Work order file (default: $INFERENCEBENCH_WORK_ORDER, else "
                            + PodSettings.DEFAULT_WORK_ORDER
                            + "); when missing, ConfigMap <run>-runner is read.")
    String workOrder;

    @Option(names = "--run-name", description = "BenchmarkRun name (default: $RUN_NAME).")
    String runName;

    @Option(names = "--namespace", description = "Namespace (default: $POD_NAMESPACE).")
    String namespace;

    @Option(names = "--index", description = "Completion index (default: $JOB_COMPLETION_INDEX).")
    Integer index;

    @Option(
            names = "--no-self-warmup",
            description = "Skip warming the client against a local throw-away server.")
    boolean noSelfWarmup;

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        Map<String, String> env = System.getenv();
        PodSettings settings;
        try {
            configureWritableCaches(env);
            settings = settings(env);
        } catch (IllegalArgumentException | IOException e) {
            err.println("error: " + TerminalText.multiLine(e.getMessage()));
            return EXIT_USAGE;
        }
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler(
                (thread, e) -> {
                    // A cancelled stage's dispatcher meets the closed transport; the process is
                    // about to exit 0, so one line instead of a stack trace in the pod log.
                    if (e instanceof java.util.concurrent.RejectedExecutionException
                            && thread.getName().startsWith("ib-dispatcher-")) {
                        err.println("stopped dispatching on " + thread.getName());
                    } else if (previous != null) {
                        previous.uncaughtException(thread, e);
                    } else {
                        e.printStackTrace(err);
                    }
                });
        try (KubernetesClient client = new KubernetesClientBuilder().build()) {
            if (settings.namespace() == null && client.getNamespace() != null) {
                settings = withNamespace(settings, client.getNamespace());
            }
            return new PodRun(settings, client, err, Clock.systemUTC()).run();
        }
    }

    PodSettings settings(Map<String, String> env) throws IOException {
        String run =
                first(
                        runName,
                        env.get(PodSettings.RUN_NAME_ENV),
                        env.get(PodSettings.RUN_NAME_ENV_ALT));
        String ns = first(namespace, env.get(PodSettings.NAMESPACE_ENV));
        int idx;
        String indexText = env.get(PodSettings.INDEX_ENV);
        if (index != null) {
            idx = index;
        } else if (indexText != null && !indexText.isBlank()) {
            try {
                idx = Integer.parseInt(indexText.strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        PodSettings.INDEX_ENV + ": '" + indexText + "' is not an integer");
            }
        } else {
            idx = 0;
        }
        if (idx < 0) {
            throw new IllegalArgumentException("--index: must be >= 0, got " + idx);
        }
        String orderPath =
                first(
                        workOrder,
                        env.get(PodSettings.WORK_ORDER_ENV),
                        PodSettings.DEFAULT_WORK_ORDER);
        String apiKey = env.get(RunnerWorkOrder.API_KEY_ENV);
        String keyFile = env.get(PodSettings.API_KEY_FILE_ENV);
        if ((apiKey == null || apiKey.isBlank()) && keyFile != null && !keyFile.isBlank()) {
            Path file = Path.of(keyFile);
            if (!Files.isReadable(file)) {
                throw new IllegalArgumentException(
                        PodSettings.API_KEY_FILE_ENV + ": cannot read " + keyFile);
            }
            apiKey = Files.readString(file, StandardCharsets.UTF_8).strip();
        }
        String dataset = env.get(PodSettings.DATASET_FILE_ENV);
        String tokenizer = env.get(PodSettings.TOKENIZER_FILE_ENV);
        return new PodSettings(
                run,
                ns,
                env.get(PodSettings.POD_NAME_ENV),
                idx,
                Path.of(orderPath),
                apiKey == null || apiKey.isBlank() ? null : apiKey,
                dataset == null || dataset.isBlank() ? null : Path.of(dataset),
                tokenizer == null || tokenizer.isBlank() ? null : Path.of(tokenizer),
                scratch(),
                !noSelfWarmup,
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                null);
    }

    private static PodSettings withNamespace(PodSettings s, String ns) {
        return new PodSettings(
                s.runName(),
                ns,
                s.podName(),
                s.index(),
                s.workOrderFile(),
                s.apiKey(),
                s.datasetFile(),
                s.tokenizerFile(),
                s.scratchDir(),
                s.selfWarmup(),
                s.pollInterval(),
                s.runCheckInterval(),
                s.progressInterval());
    }

    /** The writable emptyDir at /tmp, where the JVM's temp dir is (a pod's /tmp). */
    static Path scratch() {
        return tmp().resolve("inferencebench");
    }

    private static Path tmp() {
        return Path.of(System.getProperty("java.io.tmpdir", "/tmp"));
    }

    /**
     * With a read-only root file system only the /tmp emptyDir is writable: the tokenizer library
     * unpacks its native code into DJL's cache, so point that cache there unless set.
     */
    static void configureWritableCaches(Map<String, String> env) throws IOException {
        for (String name : new String[] {"DJL_CACHE_DIR", "ENGINE_CACHE_DIR"}) {
            if (env.get(name) == null && System.getProperty(name) == null) {
                Path dir = tmp().resolve("djl");
                Files.createDirectories(dir);
                System.setProperty(name, dir.toString());
            }
        }
    }

    private static String first(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return null;
    }
}
