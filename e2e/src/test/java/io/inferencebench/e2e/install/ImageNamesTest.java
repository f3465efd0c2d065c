package io.inferencebench.e2e.install;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.inferencebench.e2e.OperatorFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The image names are one set of constants: the root pom's {@code image.*} properties. The
 * kustomize Deployment, the Helm chart (values.yaml, Chart.yaml appVersion), the operator's
 * application.properties (its default runner image) and the README use exactly those, and no other
 * name of ours (e.g. an old {@code inferencebench/operator:latest}) appears anywhere in them.
 */
class ImageNamesTest {

    private static final YAMLMapper YAML = new YAMLMapper();

    /**
     * Any reference to one of our images under any registry, with or without a tag ({@code
     * inferencebench/operator:latest}, {@code docker.io/inferencebench/runner}); a path such as
     * {@code io/inferencebench/operator/Foo.java} is not one (a slash follows).
     */
    private static final Pattern ANY_OF_OURS =
            Pattern.compile(
                    "(?<![\\w./:-])(?:[\\w.-]+(?::\\d+)?/)*inferencebench/"
                            + "(?:operator|runner|model-sim)(?::[\\w][\\w.-]*)?(?![\\w/.-])");

    private static Path root;
    private static String version;
    private static String registry;
    private static String tag;
    private static Map<String, String> images;

    @BeforeAll
    static void readRootPom() throws Exception {
        root = OperatorFixtures.findRepoRoot();
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(false);
        Document pom = factory.newDocumentBuilder().parse(root.resolve("pom.xml").toFile());
        Element project = pom.getDocumentElement();
        version = child(project, "version");
        Element properties = (Element) project.getElementsByTagName("properties").item(0);
        registry = child(properties, "image.registry");
        tag = child(properties, "image.tag").replace("${project.version}", version);
        images = new LinkedHashMap<>();
        for (String name : List.of("operator", "runner", "model-sim")) {
            images.put(name, registry + "/" + child(properties, "image." + name) + ":" + tag);
        }
        assertThat(registry).isNotBlank();
        assertThat(tag).isEqualTo(version);
    }

    private static String child(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e.getTextContent().strip();
            }
        }
        throw new AssertionError("pom.xml: no <" + name + "> in <" + parent.getTagName() + ">");
    }

    @Test
    void kustomizeDeploymentUsesTheOperatorAndRunnerImages() throws IOException {
        JsonNode deployment = null;
        for (JsonNode doc : documents(root.resolve("config/manager/manager.yaml"))) {
            if ("Deployment".equals(doc.path("kind").asText())) {
                deployment = doc;
            }
        }
        assertThat(deployment).as("Deployment in config/manager/manager.yaml").isNotNull();
        JsonNode container = deployment.at("/spec/template/spec/containers/0");
        assertThat(container.path("image").asText()).isEqualTo(images.get("operator"));
        assertThat(env(container).get("RUNNER_IMAGE")).isEqualTo(images.get("runner"));
    }

    @Test
    void chartValuesAndAppVersionAreTheProjectsNames() throws IOException {
        Path chart = root.resolve("charts/inferencebench");
        JsonNode chartYaml = YAML.readTree(chart.resolve("Chart.yaml").toFile());
        assertThat(chartYaml.path("appVersion").asText()).isEqualTo(version);
        assertThat(chartYaml.path("version").asText()).isEqualTo(version);
        JsonNode image = YAML.readTree(chart.resolve("values.yaml").toFile()).path("image");
        assertThat(image.path("registry").asText()).isEqualTo(registry);
        assertThat(image.path("registry").asText() + "/" + image.path("operator").asText())
                .isEqualTo(withoutTag(images.get("operator")));
        assertThat(image.path("registry").asText() + "/" + image.path("runner").asText())
                .isEqualTo(withoutTag(images.get("runner")));
        // Empty tag: the templates use .Chart.AppVersion, the project version checked above.
        assertThat(image.path("tag").asText()).isEmpty();
        assertThat(Files.readString(chart.resolve("templates/_helpers.tpl")))
                .contains(".Values.image.tag | default .Chart.AppVersion");
    }

    @Test
    void operatorDefaultRunnerImageIsFilteredFromThePom() throws IOException {
        Path source = root.resolve("operator/src/main/resources/application.properties");
        Properties properties = new Properties();
        try (var in = Files.newBufferedReader(source)) {
            properties.load(in);
        }
        assertThat(properties.getProperty("inferencebench.runner.image"))
                .isEqualTo("${RUNNER_IMAGE:@image.registry@/@image.runner@:@image.tag@}");
        // What the build made of it (the reactor builds the operator before this module).
        Path filtered = root.resolve("operator/target/classes/application.properties");
        assertThat(filtered).as("built operator resources").exists();
        Properties built = new Properties();
        try (var in = Files.newBufferedReader(filtered)) {
            built.load(in);
        }
        assertThat(built.getProperty("inferencebench.runner.image"))
                .isEqualTo("${RUNNER_IMAGE:" + images.get("runner") + "}");
    }

    @Test
    void readmeNamesEveryImageWithItsTag() throws IOException {
        String readme = Files.readString(root.resolve("README.md"));
        for (String image : images.values()) {
            assertThat(readme).as("README.md mentions %s", image).contains(image);
        }
    }

    @Test
    void noOtherNameForOurImagesAnywhere() throws IOException {
        Set<String> allowed = new java.util.HashSet<>();
        for (String image : images.values()) {
            allowed.add(image);
            allowed.add(withoutTag(image));
        }
        List<Path> files = new ArrayList<>();
        files.add(root.resolve("README.md"));
        files.add(root.resolve("operator/src/main/resources/application.properties"));
        for (String dir : List.of("config", "charts")) {
            try (Stream<Path> walk = Files.walk(root.resolve(dir))) {
                walk.filter(Files::isRegularFile)
                        .filter(p -> p.toString().matches(".*\\.(ya?ml|tpl|txt|md)$"))
                        .forEach(files::add);
            }
        }
        List<String> strays = new ArrayList<>();
        for (Path file : files) {
            String text = Files.readString(file);
            Matcher m = ANY_OF_OURS.matcher(text);
            while (m.find()) {
                if (!allowed.contains(m.group())) {
                    strays.add(root.relativize(file) + ": " + m.group());
                }
            }
        }
        assertThat(strays).as("image names other than %s", images.values()).isEmpty();
    }

    private static String withoutTag(String image) {
        return image.substring(0, image.lastIndexOf(':'));
    }

    private static Map<String, String> env(JsonNode container) {
        Map<String, String> env = new LinkedHashMap<>();
        for (JsonNode e : container.path("env")) {
            env.put(e.path("name").asText(), e.path("value").asText(null));
        }
        return env;
    }

    private static List<JsonNode> documents(Path file) throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (var parser = YAML.getFactory().createParser(file.toFile())) {
            var it = YAML.readValues(parser, JsonNode.class);
            while (it.hasNext()) {
                JsonNode doc = it.next();
                if (doc != null && !doc.isNull() && !doc.isMissingNode()) {
                    docs.add(doc);
                }
            }
        }
        return docs;
    }
}
