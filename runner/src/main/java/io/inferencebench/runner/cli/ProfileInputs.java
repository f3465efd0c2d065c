package io.inferencebench.runner.cli;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.inferencebench.profile.compare.LabeledProfile;
import io.inferencebench.runner.peers.PeerResults;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Reads the runs that {@code compare} and {@code report} take: an LPG profile file, another tool's
 * result file, or a result directory of one run.
 */
final class ProfileInputs {

    static final ObjectMapper JSON = new ObjectMapper();

    /** Reads JSON as the peers write it: NaN and Infinity as bare words (Python's json). */
    private static final ObjectMapper LENIENT =
            JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

    private static final ObjectMapper YAML = new YAMLMapper();

    private ProfileInputs() {}

    /** A JSON file of a run: parsed, with its path. */
    record JsonFile(Path path, JsonNode document) {}

    /**
     * The stages of one run: our profiles, or another tool's result files mapped onto the stage
     * model ({@link PeerResults}).
     *
     * <p>A file is read by its content. A directory is one run: its LPG profiles ({@code *.json}
     * with a {@code metrics} object) when it has any, else the result files of one other tool
     * ({@code *.json}, {@code *.yaml}, {@code *.yml}); files of no known kind are passed over, and
     * where a tool wrote a Benchmark Report v0.2 beside its own report of the same stages, its own
     * is read.
     *
     * @param what how the argument is named in messages (e.g. {@code BASELINE})
     * @param path a result file or a result directory
     * @throws Main.UsageError naming {@code what} and the path when nothing usable is there
     */
    static List<LabeledProfile> profiles(String what, Path path) {
        if (Files.isDirectory(path)) {
            Map<PeerResults.Kind, List<JsonFile>> byKind = new EnumMap<>(PeerResults.Kind.class);
            for (JsonFile f : resultFiles(what, path)) {
                PeerResults.Kind kind = PeerResults.detect(f.document());
                String name = f.path().getFileName().toString();
                if (kind == null
                        || kind == PeerResults.Kind.INFERENCE_PERF_SUMMARY
                        || (kind.isLpg() && name.endsWith("-partial.json"))) {
                    continue;
                }
                byKind.computeIfAbsent(kind, k -> new ArrayList<>()).add(f);
            }
            List<JsonFile> chosen = null;
            for (PeerResults.Kind lpg :
                    List.of(PeerResults.Kind.INFERENCEBENCH, PeerResults.Kind.LPG)) {
                if (byKind.containsKey(lpg)) {
                    chosen = chosen == null ? new ArrayList<>() : chosen;
                    chosen.addAll(byKind.get(lpg));
                }
            }
            if (chosen == null) {
                List<PeerResults.Kind> own =
                        byKind.keySet().stream().filter(k -> k != PeerResults.Kind.BR02).toList();
                if (own.size() > 1) {
                    throw new Main.UsageError(
                            what
                                    + ": "
                                    + path
                                    + " holds the results of more than one tool ("
                                    + String.join(
                                            ", ",
                                            own.stream()
                                                    .map(
                                                            k ->
                                                                    k.description()
                                                                            + ": "
                                                                            + names(byKind.get(k)))
                                                    .toList())
                                    + "); give a directory of one run or the files you mean");
                }
                chosen =
                        own.size() == 1
                                ? byKind.get(own.get(0))
                                : byKind.get(PeerResults.Kind.BR02);
            }
            if (chosen == null || chosen.isEmpty()) {
                throw new Main.UsageError(
                        what
                                + ": no LPG profile or other tool's result file in "
                                + path
                                + " (read: "
                                + KNOWN
                                + ")");
            }
            List<LabeledProfile> out = new ArrayList<>();
            for (JsonFile f : chosen) {
                out.addAll(map(what, f));
            }
            return out;
        }
        return map(what, read(what, path));
    }

    /** What {@code compare} and {@code report} read, for messages. */
    static final String KNOWN =
            "LPG profiles of either dialect, vllm bench serve --save-result JSON, AIPerf's"
                    + " profile_export_aiperf.json, inference-perf's stage_N_lifecycle_metrics.json"
                    + " or Benchmark Report v0.2, GuideLLM's benchmarks.json";

    private static List<LabeledProfile> map(String what, JsonFile f) {
        PeerResults.Kind kind = PeerResults.detect(f.document());
        if (kind == null) {
            throw new Main.UsageError(
                    what
                            + ": "
                            + f.path()
                            + " is not an LPG profile (no \"metrics\" object) nor another"
                            + " result file that compare and report read ("
                            + KNOWN
                            + ")");
        }
        try {
            return PeerResults.stages(kind, f.document(), f.path().getFileName().toString());
        } catch (IllegalArgumentException e) {
            throw new Main.UsageError(what + ": " + f.path() + ": " + e.getMessage());
        }
    }

    private static String names(List<JsonFile> files) {
        return String.join(
                ", ", files.stream().map(f -> f.path().getFileName().toString()).toList());
    }

    /**
     * What a command reads: a file, or a directory whose {@code *.json} files it reads.
     *
     * @param what how the argument is named in messages (e.g. {@code BASELINE})
     * @param path the file or directory
     */
    record Input(String what, Path path) {}

    /**
     * Refuses an output file that would overwrite an input, or that lies in an input directory
     * where the next {@code compare} or {@code report} of it would read it as a profile.
     *
     * @param flag the output's flag, for the message
     * @param output the file to be written
     * @param inputs what the command reads
     * @throws Main.UsageError naming {@code flag} and the input
     */
    static void refuseOutputOverInput(String flag, Path output, List<Input> inputs) {
        Path target = resolved(output);
        for (Input input : inputs) {
            Path in = resolved(input.path());
            if (Files.isDirectory(in)) {
                if (in.equals(target.getParent())
                        && target.getFileName().toString().endsWith(".json")) {
                    throw new Main.UsageError(
                            flag
                                    + ": "
                                    + output
                                    + " is in the directory of "
                                    + input.what()
                                    + " ("
                                    + input.path()
                                    + "), whose *.json files are read as the run's profiles;"
                                    + " write it to another directory or under a name not"
                                    + " ending in .json");
                }
            } else if (in.equals(target) || sameFile(in, target)) {
                throw new Main.UsageError(
                        flag
                                + ": "
                                + output
                                + " is "
                                + input.what()
                                + " ("
                                + input.path()
                                + "), an input: writing it would overwrite it; choose another"
                                + " file");
            }
        }
    }

    /**
     * The path with links and {@code ..} resolved as far as it exists, so that two names of one
     * file (a link to a directory, a relative path) compare equal.
     */
    private static Path resolved(Path path) {
        Path absolute = path.toAbsolutePath().normalize();
        Path existing = absolute;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return absolute;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(absolute));
        } catch (IOException | RuntimeException e) {
            return absolute;
        }
    }

    /** Whether two existing paths are one file (also through hard links). */
    private static boolean sameFile(Path a, Path b) {
        try {
            return Files.exists(a) && Files.exists(b) && Files.isSameFile(a, b);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    static boolean isProfile(JsonNode document) {
        return document != null && document.path("metrics").isObject();
    }

    static boolean isCapacity(JsonNode document) {
        return document != null
                && document.path("probes").isArray()
                && document.has("max_request_rate");
    }

    /**
     * The result files of a directory, sorted by name: every {@code *.json}, and the {@code *.yaml}
     * / {@code *.yml} files that parse (other tools keep their configuration in YAML beside their
     * results).
     */
    static List<JsonFile> resultFiles(String what, Path dir) {
        List<JsonFile> out = new ArrayList<>();
        for (Path p : list(what, dir, ".json", ".yaml", ".yml")) {
            if (isYaml(p)) {
                try {
                    out.add(read(what, p));
                } catch (Main.UsageError e) {
                    // not a report: YAML configuration
                }
            } else {
                out.add(read(what, p));
            }
        }
        return out;
    }

    /** The JSON files of a directory, sorted by name. */
    static List<JsonFile> jsonFiles(String what, Path dir) {
        List<JsonFile> out = new ArrayList<>();
        for (Path p : list(what, dir, ".json")) {
            out.add(read(what, p));
        }
        return out;
    }

    private static List<Path> list(String what, Path dir, String... endings) {
        try (Stream<Path> list = Files.list(dir)) {
            return list.filter(
                            p -> {
                                String name = p.getFileName().toString();
                                for (String e : endings) {
                                    if (name.endsWith(e)) {
                                        return true;
                                    }
                                }
                                return false;
                            })
                    .filter(Files::isRegularFile)
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new Main.UsageError(what + ": cannot list " + dir + ": " + Main.describe(e));
        }
    }

    private static boolean isYaml(Path p) {
        String name = p.getFileName().toString();
        return name.endsWith(".yaml") || name.endsWith(".yml");
    }

    /**
     * Parses one JSON file.
     *
     * @throws Main.UsageError naming {@code what} and the file when it is missing or not JSON
     */
    static JsonFile read(String what, Path path) {
        if (!Files.exists(path)) {
            throw new Main.UsageError(what + ": no such file or directory: " + path);
        }
        try {
            // LPG's last code and vllm bench serve write a bare Infinity for an unbounded rate.
            JsonNode node = (isYaml(path) ? YAML : LENIENT).readTree(path.toFile());
            if (node == null || node.isMissingNode()) {
                throw new Main.UsageError(what + ": " + path + " is empty");
            }
            return new JsonFile(path, node);
        } catch (JsonProcessingException e) {
            // Where, never what: the parser's message quotes the file (whatever file it is).
            JsonLocation at = e.getLocation();
            throw new Main.UsageError(
                    what
                            + ": "
                            + path
                            + (isYaml(path) ? " is not valid YAML" : " is not valid JSON")
                            + (at == null
                                    ? ""
                                    : " (line "
                                            + at.getLineNr()
                                            + ", column "
                                            + at.getColumnNr()
                                            + ")"));
        } catch (IOException e) {
            throw new Main.UsageError(
                    what + ": cannot read " + path + ": " + e.getClass().getSimpleName());
        }
    }
}
