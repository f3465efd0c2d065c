package io.inferencebench.operator;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/** Emits core/v1 Events about a BenchmarkRun; failures to emit are logged, never thrown. */
public class EventRecorder {

    private static final Logger LOG = Logger.getLogger(EventRecorder.class);

    public static final String NORMAL = "Normal";
    public static final String WARNING = "Warning";

    /** The same event for the same run is recorded at most once in this window. */
    static final long DEDUPLICATION_MILLIS = 60_000;

    private final KubernetesClient client;
    private final Map<String, Long> recent = new ConcurrentHashMap<>();

    public EventRecorder(KubernetesClient client) {
        this.client = client;
    }

    /**
     * Whether an event is new (not recorded for this run within the window); remembers it.
     *
     * @param key run uid, type, reason and message
     * @param nowMillis current time
     * @return {@code true} when it should be recorded
     */
    boolean firstInWindow(String key, long nowMillis) {
        if (recent.size() > 10_000) {
            recent.entrySet().removeIf(e -> nowMillis - e.getValue() > DEDUPLICATION_MILLIS);
        }
        Long previous = recent.get(key);
        if (previous != null && nowMillis - previous < DEDUPLICATION_MILLIS) {
            return false;
        }
        recent.put(key, nowMillis);
        return true;
    }

    /**
     * Records an event.
     *
     * @param run the run or schedule the event is about
     * @param type {@link #NORMAL} or {@link #WARNING}
     * @param reason CamelCase reason
     * @param message details (never secrets)
     */
    public void record(HasMetadata run, String type, String reason, String message) {
        String key = run.getMetadata().getUid() + "|" + type + "|" + reason + "|" + message;
        if (!firstInWindow(key, System.currentTimeMillis())) {
            return;
        }
        String now = DateTimeFormatter.ISO_INSTANT.format(Instant.now());
        try {
            client.v1()
                    .events()
                    .inNamespace(run.getMetadata().getNamespace())
                    .resource(
                            new EventBuilder()
                                    .withNewMetadata()
                                    .withName(
                                            run.getMetadata().getName()
                                                    + "."
                                                    + UUID.randomUUID().toString().substring(0, 8))
                                    .withNamespace(run.getMetadata().getNamespace())
                                    .withLabels(
                                            run instanceof BenchmarkRun benchmarkRun
                                                    ? Labels.of(benchmarkRun, Labels.CONTROL)
                                                    : java.util.Map.of(
                                                            Labels.MANAGED_BY, Labels.OPERATOR))
                                    .endMetadata()
                                    .withInvolvedObject(
                                            new ObjectReferenceBuilder()
                                                    .withApiVersion(run.getApiVersion())
                                                    .withKind(run.getKind())
                                                    .withName(run.getMetadata().getName())
                                                    .withNamespace(run.getMetadata().getNamespace())
                                                    .withUid(run.getMetadata().getUid())
                                                    .withResourceVersion(
                                                            run.getMetadata().getResourceVersion())
                                                    .build())
                                    .withType(type)
                                    .withReason(reason)
                                    .withMessage(message)
                                    .withFirstTimestamp(now)
                                    .withLastTimestamp(now)
                                    .withCount(1)
                                    .withNewSource()
                                    .withComponent(Labels.OPERATOR)
                                    .endSource()
                                    .build())
                    .create();
        } catch (KubernetesClientException e) {
            LOG.warnf(
                    "could not record %s event %s for %s/%s: %s",
                    type,
                    reason,
                    run.getMetadata().getNamespace(),
                    run.getMetadata().getName(),
                    e.getMessage());
        }
    }
}
