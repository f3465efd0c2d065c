package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Maps container images to local commands for {@link LocalNode}, like an image's ENTRYPOINT and
 * CMD: a container's {@code command} replaces the mapping's entrypoint and its {@code args} replace
 * the mapping's default arguments, exactly as Kubernetes treats an image.
 *
 * <p>Keys match, in order: the full image reference ({@code repo:tag}); the repository without tag
 * or digest; the longest key ending in {@code *} that is a prefix of the image.
 *
 * <p>File form ({@link #parse}): one mapping per line, {@code image = command arg arg...},
 * whitespace-separated (no quoting); {@code #} starts a comment; {@code env.NAME=value} tokens
 * before the command set extra environment variables.
 */
public final class ImageMap {

    /** What a matched image runs. */
    public record Mapping(
            List<String> entrypoint, List<String> defaultArgs, Map<String, String> env) {
        public Mapping {
            entrypoint = List.copyOf(entrypoint);
            defaultArgs = List.copyOf(defaultArgs);
            env = Map.copyOf(env);
        }

        public static Mapping of(String... entrypoint) {
            return new Mapping(List.of(entrypoint), List.of(), Map.of());
        }

        public Mapping withDefaultArgs(String... args) {
            return new Mapping(entrypoint, List.of(args), env);
        }

        public Mapping withEnv(String name, String value) {
            Map<String, String> copy = new LinkedHashMap<>(env);
            copy.put(name, value);
            return new Mapping(entrypoint, defaultArgs, copy);
        }
    }

    private final Map<String, Mapping> entries = new java.util.concurrent.ConcurrentHashMap<>();
    private final Map<String, java.util.function.Supplier<Mapping>> lazy =
            new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Mappings useful everywhere: common base images ({@code busybox}, {@code alpine}, {@code
     * ubuntu}, {@code debian}) run their {@code command} with the host's tools; the runner image
     * ({@code ghcr.io/inferencebench/runner*}, {@code inferencebench/runner*}) runs {@code java
     * -jar $IB_RUNNER_JAR} when that env var is set; the llm-d-inference-sim image runs the
     * project's simulator (see {@link ModelSim}), located when first needed.
     */
    public static ImageMap defaults() {
        ImageMap map = new ImageMap();
        for (String base :
                List.of(
                        "busybox*",
                        "docker.io/library/busybox*",
                        "alpine*",
                        "docker.io/library/alpine*",
                        "ubuntu*",
                        "debian*")) {
            map.passThrough(base);
        }
        String runnerJar = System.getenv("IB_RUNNER_JAR");
        if (runnerJar != null && !runnerJar.isBlank()) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            map.put("ghcr.io/inferencebench/runner*", java, "-jar", runnerJar);
            map.put("inferencebench/runner*", java, "-jar", runnerJar);
        }
        for (String sim : List.of("ghcr.io/llm-d/llm-d-inference-sim*", "llm-d-inference-sim*")) {
            map.putLazy(sim, () -> Mapping.of(ModelSim.binary().toString()));
        }
        return map;
    }

    public ImageMap put(String imageOrPrefix, Mapping mapping) {
        lazy.remove(imageOrPrefix);
        entries.put(imageOrPrefix, mapping);
        return this;
    }

    public ImageMap put(String imageOrPrefix, String... entrypoint) {
        return put(imageOrPrefix, Mapping.of(entrypoint));
    }

    /** A mapping computed on first use (e.g. a binary that may need building). */
    public ImageMap putLazy(String imageOrPrefix, java.util.function.Supplier<Mapping> mapping) {
        entries.remove(imageOrPrefix);
        lazy.put(imageOrPrefix, mapping);
        return this;
    }

    public ImageMap putAll(ImageMap other) {
        entries.putAll(other.entries);
        lazy.putAll(other.lazy);
        return this;
    }

    /** An image that only runs what the container's {@code command} says (like busybox). */
    public ImageMap passThrough(String imageOrPrefix) {
        return put(imageOrPrefix, Mapping.of());
    }

    public Optional<Mapping> resolve(String image) {
        if (image == null) {
            return Optional.empty();
        }
        for (String key : List.copyOf(lazy.keySet())) {
            if (matches(key, image)) {
                var supplier = lazy.remove(key);
                if (supplier != null) {
                    try {
                        entries.put(key, supplier.get());
                    } catch (RuntimeException e) {
                        lazy.putIfAbsent(key, supplier);
                        throw e;
                    }
                }
            }
        }
        Mapping exact = entries.get(image);
        if (exact != null) {
            return Optional.of(exact);
        }
        Mapping repository = entries.get(repository(image));
        if (repository != null) {
            return Optional.of(repository);
        }
        return entries.entrySet().stream()
                .filter(e -> e.getKey().endsWith("*"))
                .filter(e -> image.startsWith(e.getKey().substring(0, e.getKey().length() - 1)))
                .max(Comparator.comparingInt(e -> e.getKey().length()))
                .map(Map.Entry::getValue);
    }

    private static boolean matches(String key, String image) {
        return key.equals(image)
                || key.equals(repository(image))
                || key.endsWith("*") && image.startsWith(key.substring(0, key.length() - 1));
    }

    public Map<String, Mapping> entries() {
        return Map.copyOf(entries);
    }

    static String repository(String image) {
        String withoutDigest = image.contains("@") ? image.substring(0, image.indexOf('@')) : image;
        int slash = withoutDigest.lastIndexOf('/');
        int colon = withoutDigest.lastIndexOf(':');
        return colon > slash ? withoutDigest.substring(0, colon) : withoutDigest;
    }

    /** Reads the file form described in the class comment. */
    public static ImageMap parse(Path file) {
        try {
            return parse(Files.readAllLines(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read image map " + file, e);
        }
    }

    public static ImageMap parse(List<String> lines) {
        ImageMap map = new ImageMap();
        int number = 0;
        for (String raw : lines) {
            number++;
            String line = raw.contains("#") ? raw.substring(0, raw.indexOf('#')) : raw;
            if (line.isBlank()) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(
                        "image map line "
                                + number
                                + ": expected 'image = command args...', got: "
                                + raw);
            }
            String image = line.substring(0, eq).strip();
            List<String> tokens =
                    new ArrayList<>(List.of(line.substring(eq + 1).strip().split("\\s+")));
            tokens.removeIf(String::isEmpty);
            Map<String, String> env = new LinkedHashMap<>();
            while (!tokens.isEmpty()
                    && tokens.get(0).startsWith("env.")
                    && tokens.get(0).contains("=")) {
                String token = tokens.remove(0);
                int e = token.indexOf('=');
                env.put(token.substring(4, e), token.substring(e + 1));
            }
            map.put(image, new Mapping(tokens, List.of(), env));
        }
        return map;
    }
}
