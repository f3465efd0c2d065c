package io.inferencebench.operator.dependent;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.inferencebench.crds.v1alpha1.Balance;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.BenchmarkRunSpec;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.crds.v1alpha1.TargetSpec;
import io.inferencebench.crds.workorder.RunnerWorkOrder;
import io.inferencebench.crds.workorder.StageShares;
import io.inferencebench.operator.Labels;
import io.inferencebench.operator.metrics.MetricsEndpoints;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/** The runner work order, ConfigMap {@code <run>-runner}: what every runner pod reads at start. */
@KubernetesDependent(informer = @Informer(labelSelector = Labels.WORK_ORDER_SELECTOR))
public class RunnerWorkOrderDependent
        extends CRUDKubernetesDependentResource<ConfigMap, BenchmarkRun> {

    static final ObjectMapper JSON = new ObjectMapper();

    /** How often runners publish live progress; keeps status at most ~10 s old. */
    public static final int REPORT_INTERVAL_SECONDS = 3;

    public RunnerWorkOrderDependent() {
        super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(BenchmarkRun run, Context<BenchmarkRun> context) {
        if (run.getSpec().getTarget().getBalance() != Balance.ENDPOINTS
                || run.getSpec().getTarget().getService() == null) {
            return desired(run, (List<String>) null);
        }
        // The endpoints as listed when the work order was first written: the runner pods read it
        // once, at start; later lists reach them through the control ConfigMap
        // (ControlConfigMapDependent), which they follow.
        List<String> addresses =
                getSecondaryResource(run, context)
                        .map(RunnerWorkOrderDependent::connectTo)
                        .orElseGet(
                                () ->
                                        new MetricsEndpoints(context.getClient())
                                                .trafficAddresses(run));
        return desired(run, addresses);
    }

    /** The addresses an existing work order spreads over, or {@code null}. */
    private static List<String> connectTo(ConfigMap existing) {
        String json =
                existing.getData() == null ? null : existing.getData().get(RunnerWorkOrder.KEY);
        if (json == null) {
            return null;
        }
        try {
            return JSON.readValue(json, RunnerWorkOrder.class).connectTo();
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    @Override
    protected ResourceID targetSecondaryResourceID(
            BenchmarkRun run, Context<BenchmarkRun> context) {
        return new ResourceID(
                ResourceNames.runner(run.getMetadata().getName()),
                run.getMetadata().getNamespace());
    }

    /**
     * The desired work-order ConfigMap.
     *
     * @param run the run
     * @return the ConfigMap
     */
    public static ConfigMap desired(BenchmarkRun run) {
        return desired(run, (List<String>) null);
    }

    /**
     * The desired work-order ConfigMap whose runners spread over {@code connectTo} ({@code
     * ip:port}), or send to the base URL's host when it is {@code null}.
     */
    public static ConfigMap desired(BenchmarkRun run, List<String> connectTo) {
        try {
            return new ConfigMapBuilder()
                    .withNewMetadata()
                    .withName(ResourceNames.runner(run.getMetadata().getName()))
                    .withNamespace(run.getMetadata().getNamespace())
                    .withLabels(Labels.of(run, Labels.RUNNER))
                    .endMetadata()
                    .withData(
                            Map.of(
                                    RunnerWorkOrder.KEY,
                                    JSON.writerWithDefaultPrettyPrinter()
                                            .writeValueAsString(workOrder(run, connectTo))))
                    .build();
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The work order of a run.
     *
     * @param run the run
     * @return the work order (no secrets)
     */
    public static RunnerWorkOrder workOrder(BenchmarkRun run) {
        return workOrder(run, null);
    }

    /**
     * The work order of a run whose runners spread over {@code connectTo}.
     *
     * @param connectTo {@code ip:port} of each endpoint, or {@code null} for the base URL's host
     */
    public static RunnerWorkOrder workOrder(BenchmarkRun run, List<String> connectTo) {
        BenchmarkRunSpec spec = run.getSpec();
        TargetSpec target = spec.getTarget();
        int parallelism = spec.getRunner().getParallelism();
        String runName = run.getMetadata().getName();
        return new RunnerWorkOrder(
                runName,
                run.getMetadata().getNamespace(),
                run.getMetadata().getUid(),
                parallelism,
                baseUrl(run),
                // Unset: the runner derives it from backend and api by the same rule as its
                // command line (e.g. TGI's native /generate_stream for backend tgi).
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
                ResourceNames.control(runName),
                runName + "-part-",
                REPORT_INTERVAL_SECONDS,
                tls(target),
                connectTo,
                target.getRequestsPerConnection());
    }

    private static io.inferencebench.crds.workorder.TlsOrder tls(TargetSpec target) {
        var tls = target.getTls();
        if (tls == null) {
            return null;
        }
        boolean ca = tls.getCaConfigMapRef() != null || tls.getCaSecretRef() != null;
        return new io.inferencebench.crds.workorder.TlsOrder(
                ca ? RunnerJobDependent.TLS_CA_FILE : null,
                Boolean.TRUE.equals(tls.getInsecureSkipVerify()),
                tls.getServerName());
    }

    /**
     * The target's base URL: the given URL, or the Service's cluster DNS name and port.
     *
     * @param run the run
     * @return e.g. {@code http://vllm.bench.svc:8000}
     */
    public static String baseUrl(BenchmarkRun run) {
        TargetSpec target = run.getSpec().getTarget();
        if (target.getUrl() != null) {
            return target.getUrl();
        }
        return target.getService().getScheme()
                + "://"
                + target.getService().getName()
                + "."
                + run.getMetadata().getNamespace()
                + ".svc:"
                + target.getService().getPort();
    }
}
