package io.inferencebench.runner.cli;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.profile.compare.LabeledProfile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Reads the runs that {@code compare} and {@code report} take: an LPG profile file, or a result
 * directory whose LPG profiles (JSON files with a {@code metrics} object) are one run.
 */
final class ProfileInputs {

    static final ObjectMapper JSON = new ObjectMapper();

    private ProfileInputs() {}

    /** A JSON file of a run: parsed, with its path. */
    record JsonFile(Path path, JsonNode document) {}

    /**
     * The profiles of one run.
     *
     * @param what how the argument is named in messages (e.g. {@code BASELINE})
     * @param path a profile file or a result directory
     * @throws Main.UsageError naming {@code what} and the path when nothing usable is there
     */
    static List<LabeledProfile> profiles(String what, Path path) {
        List<LabeledProfile> out = new ArrayList<>();
        if (Files.isDirectory(path)) {
            for (JsonFile f : jsonFiles(what, path)) {
                if (isProfile(f.document())
                        && !f.path().getFileName().toString().endsWith("-partial.json")) {
                    out.add(new LabeledProfile(f.path().getFileName().toString(), f.document()));
                }
            }
            if (out.isEmpty()) {
                throw new Main.UsageError(
                        what
                                + ": no LPG profile (a *.json file with a \"metrics\" object) in "
                                + path);
            }
            return out;
        }
        JsonFile f = read(what, path);
        if (!isProfile(f.document())) {
            throw new Main.UsageError(
                    what + ": " + path + " is not an LPG profile (no \"metrics\" object)");
        }
        out.add(new LabeledProfile(path.getFileName().toString(), f.document()));
        return out;
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

    /** The JSON files of a directory, sorted by name. */
    static List<JsonFile> jsonFiles(String what, Path dir) {
        List<Path> paths;
        try (Stream<Path> list = Files.list(dir)) {
            paths =
                    list.filter(p -> p.getFileName().toString().endsWith(".json"))
                            .filter(Files::isRegularFile)
                            .sorted()
                            .toList();
        } catch (IOException e) {
            throw new Main.UsageError(what + ": cannot list " + dir + ": " + Main.describe(e));
        }
        List<JsonFile> out = new ArrayList<>();
        for (Path p : paths) {
            out.add(read(what, p));
        }
        return out;
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
            JsonNode node = JSON.readTree(path.toFile());
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
                            + " is not valid JSON"
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
