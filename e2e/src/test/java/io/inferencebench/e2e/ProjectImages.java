package io.inferencebench.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The container images {@code make images} builds (operator, runner, model-sim), named as the root
 * pom's {@code image.*} properties name them: their references and their tarballs.
 */
public final class ProjectImages {

    private final Path repo;
    private final Map<String, String> pom;

    private ProjectImages(Path repo) {
        this.repo = repo;
        this.pom = rootPomProperties(repo.resolve("pom.xml"));
    }

    /** The images of the repository the tests run in. */
    public static ProjectImages ofThisRepository() {
        return new ProjectImages(OperatorFixtures.findRepoRoot());
    }

    /** {@code <registry>/<name>:<project version>} of {@code image}. */
    public String reference(String image) {
        return pom.get("image.registry")
                + "/"
                + pom.get("image." + image)
                + ":"
                + pom.get("project.version");
    }

    /** The tarball {@code make images} wrote {@code image} to. */
    public Path tarball(String image) {
        return repo.resolve("target/images").resolve(pom.get("image." + image) + ".tar");
    }

    /** A root pom property ({@code image.*} or {@code project.version}). */
    public String property(String name) {
        return pom.get(name);
    }

    /**
     * The root pom's {@code image.*} properties ({@code ${project.version}} in them resolved) plus
     * {@code project.version}.
     */
    static Map<String, String> rootPomProperties(Path pomFile) {
        try {
            String pomText = Files.readString(pomFile);
            var props = new HashMap<String, String>();
            Matcher m = Pattern.compile("<(image\\.[a-z.-]+)>([^<]*)</\\1>").matcher(pomText);
            while (m.find()) {
                props.putIfAbsent(m.group(1), m.group(2));
            }
            Matcher v =
                    Pattern.compile(
                                    "<artifactId>inferencebench-parent</artifactId>\\s*<version>([^<]+)</version>")
                            .matcher(pomText);
            if (!v.find()) {
                throw new IllegalStateException("no project version in " + pomFile);
            }
            props.put("project.version", v.group(1));
            props.replaceAll((k, val) -> val.replace("${project.version}", v.group(1)));
            return props;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
