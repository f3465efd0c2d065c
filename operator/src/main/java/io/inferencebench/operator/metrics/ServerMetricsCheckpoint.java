package io.inferencebench.operator.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import io.inferencebench.operator.Labels;
import io.inferencebench.profile.prom.MetricFamily;
import io.inferencebench.profile.prom.MetricType;
import io.inferencebench.profile.prom.ParsedPage;
import io.inferencebench.profile.prom.PrometheusTextParser;
import io.inferencebench.profile.prom.Sample;
import io.inferencebench.profile.server.Scrape;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.jboss.logging.Logger;

/**
 * The {@code <run>-server-metrics} ConfigMap: the directly scraped samples of the current stage
 * window, so that an operator restart keeps them and the stage's statistics and coverage include
 * the scrapes taken before the restart. Owned by the run (garbage-collected with it), labelled with
 * component {@code server-metrics} so no dependent's informer watches it.
 *
 * <p>Content: key {@code runUid} (a run recreated under the same name must not inherit samples) and
 * binary key {@code scrapes.json.gz}: gzip'd columnar JSON, {@code series} listing every distinct
 * series once (family, type, sample name, labels) and {@code scrapes} holding per scrape the
 * replica {@code r}, epoch ms {@code t}, and either the series indexes {@code s} with their values
 * {@code v} (of the page already trimmed to the catalog) or the scrape error {@code e}. Metric
 * values only: the operator sends no credentials to the scraped endpoints, so nothing secret can
 * end up here.
 *
 * <p>Size: consecutive scrapes repeat the same indexes, so a trimmed vLLM page (12 histograms)
 * costs about a kilobyte per scrape once compressed (measured in ServerMetricsCheckpointTest); a
 * 10-minute stage of two replicas at 5 s stays far below the limit. Above {@link #MAX_SCRAPES}
 * scrapes or {@link #MAX_COMPRESSED_BYTES} compressed bytes the stored copy is thinned: every
 * replica's first and last scrape are kept and the ones between are dropped evenly. Only a restart
 * makes that visible: the stage's gauges then have fewer samples, its coverage counts only the kept
 * scrapes, and a counter reset inside a dropped stretch is missed; the scrapes held in memory are
 * never thinned.
 */
public class ServerMetricsCheckpoint {

    private static final Logger LOG = Logger.getLogger(ServerMetricsCheckpoint.class);

    static final String RUN_UID_KEY = "runUid";
    static final String SCRAPES_KEY = "scrapes.json.gz";

    /** Well under the 1 MiB object limit once base64-encoded (4/3) with metadata. */
    static final int MAX_COMPRESSED_BYTES = 512 * 1024;

    /** Bounds the JSON a reload parses, whatever the compression ratio. */
    static final int MAX_SCRAPES = 4000;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesClient client;

    public ServerMetricsCheckpoint(KubernetesClient client) {
        this.client = client;
    }

    /**
     * Replaces the checkpoint with these scrapes. Failures are logged, never thrown: losing a
     * checkpoint only matters if the operator also restarts.
     *
     * @param run the run (name, namespace and uid are used)
     * @param scrapes the scrapes of the current window
     * @return the compressed size written, or -1 when the write failed
     */
    public int save(BenchmarkRun run, List<Scrape> scrapes) {
        byte[] data = encode(scrapes);
        ConfigMap configMap =
                new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName(ResourceNames.serverMetrics(run.getMetadata().getName()))
                        .withNamespace(run.getMetadata().getNamespace())
                        .withLabels(Labels.of(run, Labels.SERVER_METRICS))
                        .withOwnerReferences(
                                new OwnerReferenceBuilder()
                                        .withApiVersion(run.getApiVersion())
                                        .withKind(run.getKind())
                                        .withName(run.getMetadata().getName())
                                        .withUid(run.getMetadata().getUid())
                                        .withController(true)
                                        .build())
                        .endMetadata()
                        .withData(Map.of(RUN_UID_KEY, run.getMetadata().getUid()))
                        .withBinaryData(
                                Map.of(SCRAPES_KEY, Base64.getEncoder().encodeToString(data)))
                        .build();
        try {
            client.configMaps()
                    .inNamespace(run.getMetadata().getNamespace())
                    .resource(configMap)
                    .createOr(c -> c.update());
            return data.length;
        } catch (KubernetesClientException e) {
            LOG.debugf(
                    "%s/%s: server-metrics checkpoint not written (HTTP %d)",
                    run.getMetadata().getNamespace(), run.getMetadata().getName(), e.getCode());
            return -1;
        }
    }

    /**
     * The checkpointed scrapes of this run.
     *
     * @param run the run
     * @return the scrapes, empty when there is no checkpoint of this run (or it is unreadable)
     */
    public Optional<List<Scrape>> load(BenchmarkRun run) {
        ConfigMap configMap;
        try {
            configMap =
                    client.configMaps()
                            .inNamespace(run.getMetadata().getNamespace())
                            .withName(ResourceNames.serverMetrics(run.getMetadata().getName()))
                            .get();
        } catch (KubernetesClientException e) {
            return Optional.empty();
        }
        if (configMap == null
                || configMap.getData() == null
                || !run.getMetadata().getUid().equals(configMap.getData().get(RUN_UID_KEY))
                || configMap.getBinaryData() == null
                || configMap.getBinaryData().get(SCRAPES_KEY) == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(
                    decode(Base64.getDecoder().decode(configMap.getBinaryData().get(SCRAPES_KEY))));
        } catch (RuntimeException e) {
            LOG.warnf(
                    "%s/%s: server-metrics checkpoint unreadable, ignored: %s",
                    run.getMetadata().getNamespace(), run.getMetadata().getName(), e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Deletes the checkpoint once the run no longer needs it.
     *
     * @param run the run
     */
    public void delete(BenchmarkRun run) {
        try {
            client.configMaps()
                    .inNamespace(run.getMetadata().getNamespace())
                    .withName(ResourceNames.serverMetrics(run.getMetadata().getName()))
                    .delete();
        } catch (KubernetesClientException e) {
            // owned by the run: garbage collection removes it with the run anyway
        }
    }

    /**
     * The stored form of some scrapes, thinned to the limits.
     *
     * @param scrapes the scrapes
     * @return gzip'd JSON
     */
    static byte[] encode(List<Scrape> scrapes) {
        List<Scrape> kept = scrapes.size() > MAX_SCRAPES ? thin(scrapes, MAX_SCRAPES) : scrapes;
        byte[] data = gzip(kept);
        while (data.length > MAX_COMPRESSED_BYTES && kept.size() > 2) {
            int target = Math.max(2, kept.size() * 3 / 4);
            List<Scrape> thinner = thin(kept, target);
            if (thinner.size() == kept.size()) {
                break;
            }
            kept = thinner;
            data = gzip(kept);
        }
        return data;
    }

    /**
     * Reads the stored form.
     *
     * @param data gzip'd JSON as written by {@link #encode}
     * @return the scrapes
     */
    static List<Scrape> decode(byte[] data) {
        JsonNode root;
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(data))) {
            root = JSON.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<SeriesKey> series = new ArrayList<>();
        for (JsonNode k : root.path("series")) {
            Map<String, String> labels = new LinkedHashMap<>();
            k.path("l")
                    .fields()
                    .forEachRemaining(e -> labels.put(e.getKey(), e.getValue().asText()));
            series.add(
                    new SeriesKey(
                            k.path("f").asText(),
                            MetricType.valueOf(k.path("y").asText()),
                            k.path("n").asText(),
                            java.util.Collections.unmodifiableMap(labels)));
        }
        List<Scrape> scrapes = new ArrayList<>();
        for (JsonNode s : root.path("scrapes")) {
            if (scrapes.size() >= MAX_SCRAPES) {
                break;
            }
            String replica = s.path("r").asText();
            long t = s.path("t").asLong();
            if (s.hasNonNull("e")) {
                scrapes.add(Scrape.failure(replica, t, s.get("e").asText()));
                continue;
            }
            JsonNode index = s.path("s");
            JsonNode values = s.path("v");
            JsonNode times = s.path("ts");
            Map<String, List<Sample>> byFamily = new LinkedHashMap<>();
            Map<String, MetricType> types = new LinkedHashMap<>();
            for (int i = 0; i < index.size(); i++) {
                SeriesKey key = series.get(index.get(i).asInt());
                JsonNode v = values.get(i);
                double value =
                        v.isNumber()
                                ? v.asDouble()
                                : switch (v.asText()) {
                                    case "NaN" -> Double.NaN;
                                    case "+Inf" -> Double.POSITIVE_INFINITY;
                                    default -> Double.NEGATIVE_INFINITY;
                                };
                Long ts = times.isArray() && times.get(i).isNumber() ? times.get(i).asLong() : null;
                byFamily.computeIfAbsent(key.family(), f -> new ArrayList<>())
                        .add(new Sample(key.name(), key.labels(), value, ts));
                types.put(key.family(), key.type());
            }
            Map<String, MetricFamily> families = new LinkedHashMap<>();
            int count = 0;
            for (Map.Entry<String, List<Sample>> e : byFamily.entrySet()) {
                families.put(
                        e.getKey(),
                        new MetricFamily(
                                e.getKey(), types.get(e.getKey()), null, null, e.getValue()));
                count += e.getValue().size();
            }
            PrometheusTextParser.Format format =
                    s.path("o").asBoolean(false)
                            ? PrometheusTextParser.Format.OPENMETRICS_1_0
                            : PrometheusTextParser.Format.TEXT_0_0_4;
            scrapes.add(
                    Scrape.success(
                            replica, t, new ParsedPage(format, families, List.of(), 0, count)));
        }
        return scrapes;
    }

    /** One series: its family, the family's type, the sample name and the labels. */
    private record SeriesKey(
            String family, MetricType type, String name, Map<String, String> labels) {}

    /**
     * Columnar JSON: every distinct series once, then per scrape only series indexes and values,
     * which compress to a few bytes per sample since consecutive scrapes repeat the indexes.
     */
    private static byte[] gzip(List<Scrape> scrapes) {
        Map<SeriesKey, Integer> ids = new LinkedHashMap<>();
        ObjectNode root = JSON.createObjectNode();
        root.put("format", 1);
        ArrayNode seriesNode = root.putArray("series");
        ArrayNode scrapesNode = root.putArray("scrapes");
        for (Scrape s : scrapes) {
            ObjectNode o = scrapesNode.addObject();
            o.put("r", s.replica());
            o.put("t", s.timestampMillis());
            if (!s.succeeded()) {
                o.put("e", s.error());
                continue;
            }
            if (s.page().format() == PrometheusTextParser.Format.OPENMETRICS_1_0) {
                o.put("o", true);
            }
            ArrayNode index = o.putArray("s");
            ArrayNode values = o.putArray("v");
            ArrayNode times = null;
            for (MetricFamily f : s.page().families().values()) {
                for (Sample sample : f.samples()) {
                    SeriesKey key =
                            new SeriesKey(f.name(), f.type(), sample.name(), sample.labels());
                    Integer id = ids.get(key);
                    if (id == null) {
                        id = ids.size();
                        ids.put(key, id);
                        ObjectNode k = seriesNode.addObject();
                        k.put("f", key.family());
                        k.put("y", key.type().name());
                        k.put("n", key.name());
                        ObjectNode l = k.putObject("l");
                        key.labels().forEach(l::put);
                    }
                    index.add(id);
                    double v = sample.value();
                    if (Double.isNaN(v)) {
                        values.add("NaN");
                    } else if (Double.isInfinite(v)) {
                        values.add(v > 0 ? "+Inf" : "-Inf");
                    } else {
                        values.add(v);
                    }
                    if (sample.timestampMillis() != null && times == null) {
                        times = o.putArray("ts");
                        for (int i = 0; i < values.size() - 1; i++) {
                            times.addNull();
                        }
                    }
                    if (times != null) {
                        if (sample.timestampMillis() == null) {
                            times.addNull();
                        } else {
                            times.add(sample.timestampMillis());
                        }
                    }
                }
            }
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(bytes)) {
            JSON.writeValue(out, root);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * Keeps every replica's first and last scrape and drops evenly among the others.
     *
     * @param scrapes in time order
     * @param target roughly how many to keep
     * @return the kept scrapes, in their original order
     */
    static List<Scrape> thin(List<Scrape> scrapes, int target) {
        Map<String, int[]> edges = new LinkedHashMap<>();
        for (int i = 0; i < scrapes.size(); i++) {
            int index = i;
            edges.computeIfAbsent(scrapes.get(i).replica(), r -> new int[] {index, index})[1] =
                    index;
        }
        boolean[] keep = new boolean[scrapes.size()];
        int fixed = 0;
        for (int[] e : edges.values()) {
            keep[e[0]] = true;
            keep[e[1]] = true;
            fixed += e[0] == e[1] ? 1 : 2;
        }
        int middle = scrapes.size() - fixed;
        int wanted = Math.max(0, target - fixed);
        if (middle > 0 && wanted > 0) {
            double every = (double) middle / wanted;
            double next = 0;
            int seen = 0;
            for (int i = 0; i < scrapes.size(); i++) {
                if (keep[i]) {
                    continue;
                }
                if (seen >= next) {
                    keep[i] = true;
                    next += every;
                }
                seen++;
            }
        }
        List<Scrape> kept = new ArrayList<>();
        for (int i = 0; i < scrapes.size(); i++) {
            if (keep[i]) {
                kept.add(scrapes.get(i));
            }
        }
        return kept;
    }
}
