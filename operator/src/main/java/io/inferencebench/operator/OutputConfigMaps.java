package io.inferencebench.operator;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.inferencebench.crds.v1alpha1.BenchmarkRun;
import io.inferencebench.crds.v1alpha1.ResourceNames;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SequencedMap;
import java.util.TreeMap;

/**
 * The output ConfigMaps of a run: every stage's LPG profile, one key per stage (named like LPG
 * files), and its Benchmark Report v0.2 beside it when the run asks for one, in stage order, in
 * {@code spec.output.configMapName} (default {@code <run>-profile}) and, when a run's profiles
 * outgrow one ConfigMap, in {@code <name>-2}, {@code <name>-3}, ...
 *
 * <p>Why split: the API server refuses a ConfigMap whose data exceeds 1 MiB, and a 50-stage run
 * with two scraped replicas writes about 1.4 MB of profiles. Each ConfigMap is filled in stage
 * order up to {@link #MAX_DATA_BYTES} of keys plus values (UTF-8, as the API server counts them),
 * so a stage never moves once written and only the last ConfigMap changes when a stage is added.
 * With {@code spec.output.retain} they carry no owner reference and outlive the run.
 *
 * <p>These ConfigMaps, not {@code status}, are where full profiles are kept: status keeps them too
 * only while they fit its budget (see {@code BenchmarkRunReconciler.STATUS_PROFILES_BUDGET_BYTES}).
 */
public final class OutputConfigMaps {

    /** Data bytes per ConfigMap: under the 1 MiB limit, leaving room for metadata. */
    static final int MAX_DATA_BYTES = 900 * 1024;

    /**
     * Most bytes of profiles status keeps (their compact JSON). etcd refuses objects above 1.5 MiB,
     * and status also holds the per-stage summaries (about 1 KB each), conditions and progress; a
     * profile with two scraped replicas is about 19 KB, so runs of up to about 25 such stages keep
     * their profiles in status and larger ones in the output ConfigMaps only.
     */
    static final long STATUS_PROFILES_BUDGET_BYTES = 512 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubernetesClient client;

    /**
     * Where a run's profiles are after a stage was added.
     *
     * @param statusProfiles every profile, for status, or {@code null} when they exceed {@link
     *     #STATUS_PROFILES_BUDGET_BYTES}
     * @param configMaps the output ConfigMaps, in stage order
     * @param reason {@code InStatus} or {@code ConfigMapsOnly}, for the ResultsStored condition
     * @param message what is where, naming the ConfigMaps
     */
    public record Stored(
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            String reason,
            String message) {}

    public OutputConfigMaps(KubernetesClient client) {
        this.client = client;
    }

    /** Name of the {@code index}-th (0-based) output ConfigMap. */
    static String name(BenchmarkRun run, int index) {
        String first = ResourceNames.profile(run);
        return index == 0 ? first : first + "-" + (index + 1);
    }

    static long bytes(String key, String value) {
        return key.getBytes(StandardCharsets.UTF_8).length
                + (long) value.getBytes(StandardCharsets.UTF_8).length;
    }

    /**
     * Packs profiles, in stage order, into as few ConfigMaps as the size guard allows.
     *
     * @param run the run
     * @param profiles profile key to pretty JSON, in stage order
     * @return the ConfigMaps, the first named {@code spec.output.configMapName}
     * @throws IllegalArgumentException when one profile alone exceeds {@link #MAX_DATA_BYTES}
     */
    static List<ConfigMap> pack(BenchmarkRun run, SequencedMap<String, String> profiles) {
        List<Map<String, String>> groups = new ArrayList<>();
        Map<String, String> current = new TreeMap<>();
        long size = 0;
        for (Map.Entry<String, String> e : profiles.entrySet()) {
            long entry = bytes(e.getKey(), e.getValue());
            if (entry > MAX_DATA_BYTES) {
                throw new IllegalArgumentException(
                        "profile "
                                + e.getKey()
                                + " is "
                                + entry
                                + " bytes, over the "
                                + MAX_DATA_BYTES
                                + " bytes one ConfigMap may hold");
            }
            if (size + entry > MAX_DATA_BYTES && !current.isEmpty()) {
                groups.add(current);
                current = new TreeMap<>();
                size = 0;
            }
            current.put(e.getKey(), e.getValue());
            size += entry;
        }
        groups.add(current);
        List<ConfigMap> maps = new ArrayList<>();
        for (int i = 0; i < groups.size(); i++) {
            maps.add(configMap(run, name(run, i), groups.get(i)));
        }
        return maps;
    }

    private static ConfigMap configMap(BenchmarkRun run, String name, Map<String, String> data) {
        ConfigMapBuilder builder =
                new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName(name)
                        .withNamespace(run.getMetadata().getNamespace())
                        .withLabels(Labels.of(run, Labels.PROFILE))
                        .endMetadata()
                        .withData(data);
        if (!Boolean.TRUE.equals(run.getSpec().getOutput().getRetain())) {
            builder.editMetadata()
                    .withOwnerReferences(
                            new OwnerReferenceBuilder()
                                    .withApiVersion(run.getApiVersion())
                                    .withKind(run.getKind())
                                    .withName(run.getMetadata().getName())
                                    .withUid(run.getMetadata().getUid())
                                    .withController(true)
                                    .withBlockOwnerDeletion(true)
                                    .build())
                    .endMetadata();
        }
        return builder.build();
    }

    /**
     * Writes the ConfigMaps holding {@code profiles}: those from the one that holds {@code
     * firstChanged} on (earlier ones are full and unchanged, since stages are only appended).
     *
     * @param run the run
     * @param profiles every stage's profile so far, key to pretty JSON, in stage order
     * @param firstChanged the key of the earliest profile not yet written, or {@code null} to write
     *     all
     * @return the names of all output ConfigMaps, in order
     */
    public List<String> write(
            BenchmarkRun run, SequencedMap<String, String> profiles, String firstChanged) {
        List<ConfigMap> maps = pack(run, profiles);
        boolean reached = firstChanged == null;
        List<String> names = new ArrayList<>();
        for (ConfigMap map : maps) {
            names.add(map.getMetadata().getName());
            reached |= map.getData().containsKey(firstChanged);
            if (reached) {
                client.configMaps()
                        .inNamespace(run.getMetadata().getNamespace())
                        .resource(map)
                        .createOr(c -> c.update());
            }
        }
        return names;
    }

    /**
     * Adds one stage's profile, and what goes beside it: writes the output ConfigMaps it changes
     * and decides whether status keeps the profiles.
     *
     * @param run the run
     * @param statusProfiles status.profiles before this stage (may be {@code null})
     * @param configMaps status.profileConfigMaps before this stage (may be {@code null})
     * @param resultsBefore status.results before this stage, in stage order
     * @param key the new stage's profile key
     * @param profile the new stage's profile
     * @param besides keys stored after the profile (its Benchmark Report), key to text; earlier
     *     stages' are kept where their results name them ({@code benchmarkReportKey})
     * @return where the profiles are now
     */
    public Stored add(
            BenchmarkRun run,
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            List<io.inferencebench.crds.v1alpha1.StageSummary> resultsBefore,
            String key,
            JsonNode profile,
            Map<String, String> besides) {
        SequencedMap<String, String> stored =
                stored(run, statusProfiles, configMaps, resultsBefore, true);
        stored.put(key, pretty(profile));
        if (besides != null) {
            besides.forEach(stored::put);
        }
        List<String> names = write(run, stored, key);
        List<String> profileKeys = new ArrayList<>();
        resultsBefore.forEach(r -> profileKeys.add(r.getProfileKey()));
        profileKeys.add(key);
        List<JsonNode> all =
                parseAll(
                        profileKeys.stream()
                                .map(stored::get)
                                .filter(java.util.Objects::nonNull)
                                .toList());
        long bytes = 0;
        for (JsonNode node : all) {
            bytes += compact(node).getBytes(StandardCharsets.UTF_8).length;
        }
        String where = String.join(", ", names);
        if (bytes <= STATUS_PROFILES_BUDGET_BYTES) {
            return new Stored(
                    all,
                    names,
                    "InStatus",
                    all.size() + " stage profile(s) in status.profiles and ConfigMap(s) " + where);
        }
        return new Stored(
                null,
                names,
                "ConfigMapsOnly",
                String.format(
                        java.util.Locale.ROOT,
                        "the %d stage profiles (%d bytes) exceed the %d bytes status keeps:"
                                + " status.results keeps each stage's summary and profileKey,"
                                + " the profiles are in ConfigMap(s) %s",
                        all.size(),
                        bytes,
                        STATUS_PROFILES_BUDGET_BYTES,
                        where));
    }

    /**
     * Every stage's profile document so far, from status while it holds them all, else from the
     * output ConfigMaps.
     */
    public List<JsonNode> profiles(
            BenchmarkRun run,
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            List<io.inferencebench.crds.v1alpha1.StageSummary> results) {
        if (statusProfiles != null && statusProfiles.size() == results.size()) {
            return statusProfiles;
        }
        return parseAll(stored(run, statusProfiles, configMaps, results, false).values());
    }

    /**
     * What the output ConfigMaps hold, in stage order: each stage's profile (from status while it
     * holds them all) and, with {@code withBesides}, the keys stored beside it (read back from the
     * ConfigMaps, so that rewriting one keeps them).
     */
    private SequencedMap<String, String> stored(
            BenchmarkRun run,
            List<JsonNode> statusProfiles,
            List<String> configMaps,
            List<io.inferencebench.crds.v1alpha1.StageSummary> results,
            boolean withBesides) {
        boolean inStatus = statusProfiles != null && statusProfiles.size() == results.size();
        List<String> wanted = new ArrayList<>();
        for (io.inferencebench.crds.v1alpha1.StageSummary r : results) {
            if (!inStatus) {
                wanted.add(r.getProfileKey());
            }
            if (withBesides && r.getBenchmarkReportKey() != null) {
                wanted.add(r.getBenchmarkReportKey());
            }
        }
        Map<String, String> read =
                wanted.isEmpty()
                        ? Map.of()
                        : read(
                                run,
                                configMaps == null || configMaps.isEmpty()
                                        ? List.of(name(run, 0))
                                        : configMaps,
                                wanted);
        SequencedMap<String, String> stored = new LinkedHashMap<>();
        for (int i = 0; i < results.size(); i++) {
            io.inferencebench.crds.v1alpha1.StageSummary r = results.get(i);
            String profile = inStatus ? pretty(statusProfiles.get(i)) : read.get(r.getProfileKey());
            if (profile != null) {
                stored.put(r.getProfileKey(), profile);
            }
            if (withBesides && r.getBenchmarkReportKey() != null) {
                String beside = read.get(r.getBenchmarkReportKey());
                if (beside != null) {
                    stored.put(r.getBenchmarkReportKey(), beside);
                }
            }
        }
        return stored;
    }

    static String pretty(JsonNode profile) {
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(profile);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String compact(JsonNode profile) {
        try {
            return JSON.writeValueAsString(profile);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<JsonNode> parseAll(java.util.Collection<String> jsons) {
        List<JsonNode> nodes = new ArrayList<>();
        for (String json : jsons) {
            try {
                nodes.add(JSON.readTree(json));
            } catch (JsonProcessingException e) {
                throw new UncheckedIOException(e);
            }
        }
        return nodes;
    }

    /**
     * Reads the profiles back.
     *
     * @param run the run
     * @param names the output ConfigMaps, as {@link #write} returned them
     * @param keys the profile keys, in stage order
     * @return key to JSON, in the order of {@code keys}; a key found nowhere is missing
     */
    public SequencedMap<String, String> read(
            BenchmarkRun run, List<String> names, List<String> keys) {
        Map<String, String> all = new TreeMap<>();
        for (String name : names) {
            ConfigMap map =
                    client.configMaps()
                            .inNamespace(run.getMetadata().getNamespace())
                            .withName(name)
                            .get();
            if (map != null && map.getData() != null) {
                all.putAll(map.getData());
            }
        }
        SequencedMap<String, String> ordered = new LinkedHashMap<>();
        for (String key : keys) {
            if (all.containsKey(key)) {
                ordered.put(key, all.get(key));
            }
        }
        return ordered;
    }
}
