package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.cli.SimServer.Outcome;
import io.inferencebench.testkit.TempDirCheck;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code report} rendered by a real headless Chromium: the plots exist in the browser's DOM with
 * one point per stage carrying the profile's numbers, the capacity bracket and SLO line of a real
 * search are drawn at their rates, the page fetches nothing, and the screenshot shows the series.
 */
@TempDirCheck({"chromium*.err", "provision-chromium*.log"})
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class ReportBrowserTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern ELEMENT = Pattern.compile("<(circle|line|section|tr)\\b([^>]*)>");
    private static final Pattern ATTRIBUTE = Pattern.compile("([\\w-]+)=\"([^\"]*)\"");

    @Test
    void theBrowserShowsEveryStageOfTwoRunsAndASearch(@TempDir Path tmp) throws Exception {
        Assumptions.assumeTrue(
                Chromium.binary() != null, () -> "skipped: " + Chromium.whyUnavailable());
        Path first = tmp.resolve("first");
        Path second = tmp.resolve("second");
        Path search = tmp.resolve("search");
        try (SimServer sim =
                new SimServer(
                        tmp.resolve("sim.log"),
                        argv(
                                "--time-to-first-token 20 --inter-token-latency 10 --max-num-seqs 1"))) {
            String[] load = {
                "--request-rate",
                "3,6,9",
                "--num-prompts",
                "24",
                "--arrival",
                "constant",
                "--scrape-metrics",
                "--scrape-interval",
                "500ms"
            };
            assertThat(SimServer.cli(sim.run(first, load)).code()).isZero();
            assertThat(SimServer.cli(sim.run(second, load)).code()).isZero();
            Outcome s =
                    SimServer.cli(
                            "search",
                            "--base-url",
                            sim.baseUrl,
                            "--backend",
                            "openai",
                            // model-sim honours ignore_eos: exact output lengths (openai leaves it
                            // out unless asked)
                            "--ignore-eos",
                            "--model",
                            "sim",
                            "--random-input-len",
                            "16",
                            "--random-output-len",
                            "8",
                            "--goodput",
                            "ttft:110",
                            "--slo-min-attainment",
                            "0.8",
                            "--arrival",
                            "constant",
                            "--duration",
                            "3s",
                            "--min-rate",
                            "4",
                            "--max-rate",
                            "32",
                            "--precision",
                            "0.2",
                            "--pause",
                            "200ms",
                            "--progress",
                            "none",
                            "--result-dir",
                            search.toString());
            assertThat(s.code()).as(s.out() + s.err()).isZero();
        }
        Path page = tmp.resolve("report.html");
        Outcome o =
                SimServer.cli("report", first.toString(), second.toString(), "-o", page.toString());
        assertThat(o.code()).as(o.err()).isZero();
        Path searchPage = tmp.resolve("search.html");
        assertThat(SimServer.cli("report", search.toString(), "-o", searchPage.toString()).code())
                .isZero();

        String html = Files.readString(page);
        assertThat(html).doesNotContain("<script").doesNotContain("<link").doesNotContain(" src=");
        assertThat(html.replace("http://www.w3.org/2000/svg", ""))
                .doesNotContain("http://")
                .doesNotContain("https://");

        String dom = Chromium.run(page, tmp.resolve("chrome-1"), "--dump-dom");
        List<Map<String, String>> points = elements(dom, "circle", "point");
        List<JsonNode> profiles = profiles(first);
        assertThat(profiles).hasSize(3);
        for (String series : List.of("ttft_p50", "ttft_p99", "itl_p50", "e2el_p50", "e2el_p99")) {
            String key =
                    (series.endsWith("p50") ? "median_" : "p99_")
                            + series.substring(0, series.indexOf('_'))
                            + "_ms";
            List<Map<String, String>> ofRun =
                    points.stream()
                            .filter(
                                    p ->
                                            series.equals(p.get("data-series"))
                                                    && "0".equals(p.get("data-run")))
                            .toList();
            assertThat(ofRun).as(series).hasSize(profiles.size());
            for (JsonNode profile : profiles) {
                JsonNode m = profile.get("metrics");
                Map<String, String> point =
                        ofRun.stream()
                                .filter(
                                        p ->
                                                p.get("data-stage")
                                                        .equals(
                                                                Integer.toString(
                                                                        m.get("stage_index").asInt()
                                                                                + 1)))
                                .findFirst()
                                .orElseThrow();
                assertThat(Double.parseDouble(point.get("data-value")))
                        .as(series)
                        .isEqualTo(m.get(key).asDouble());
                assertThat(Double.parseDouble(point.get("data-achieved-rate")))
                        .isEqualTo(m.get("achieved_rate").asDouble());
            }
        }
        assertThat(
                        points.stream()
                                .filter(
                                        p ->
                                                "1".equals(p.get("data-run"))
                                                        && "ttft_p50".equals(p.get("data-series"))))
                .hasSize(3);
        List<Map<String, String>> sections = elements(dom, "section", "comparison");
        assertThat(sections).hasSize(1);
        assertThat(sections.get(0).get("data-verdict"))
                .isIn("no significant change", "regression", "improvement");
        assertThat(dom).contains("Server metrics").contains("vllm:num_requests_running");

        String searchDom = Chromium.run(searchPage, tmp.resolve("chrome-2"), "--dump-dom");
        JsonNode capacity = JSON.readTree(search.resolve("capacity.json").toFile());
        List<Map<String, String>> passing = elements(searchDom, "line", "capacity-passing");
        assertThat(passing).hasSize(3); // one per chart
        assertThat(Double.parseDouble(passing.get(0).get("data-rate")))
                .isEqualTo(capacity.get("passing_rate").asDouble());
        List<Map<String, String>> slo = elements(searchDom, "line", "slo-line");
        assertThat(slo).isNotEmpty();
        assertThat(Double.parseDouble(slo.get(0).get("data-slo-ms"))).isEqualTo(110.0);
        assertThat(
                        elements(searchDom, "circle", "point").stream()
                                .filter(p -> "ttft_p50".equals(p.get("data-series"))))
                .hasSize(capacity.get("probes").size());
        // the probe table: a row per probe with the search's own verdict, and each attainment
        // with its 95 % interval
        Map<String, Integer> verdicts = new HashMap<>();
        for (JsonNode p : capacity.get("probes")) {
            verdicts.merge(p.get("verdict").asText().replace(' ', '-'), 1, Integer::sum);
            JsonNode interval = p.get("slo_attainment_interval");
            assertThat(searchDom)
                    .contains(
                            String.format(
                                    java.util.Locale.ROOT,
                                    "(%.1f %%–%.1f %%)",
                                    100 * interval.get(0).asDouble(),
                                    100 * interval.get(1).asDouble()));
        }
        verdicts.forEach(
                (verdict, count) ->
                        assertThat(elements(searchDom, "tr", verdict)).as(verdict).hasSize(count));

        // Painted, not only parsed, even where two runs measured the very same numbers: the
        // report of one run twice shows each copy's colour on more of the screen than the same
        // page without its SVG content (where only the legend swatches have it). The later copy
        // is drawn beneath the earlier, wider, so neither hides the other.
        Path twice = tmp.resolve("twice.html");
        assertThat(
                        SimServer.cli(
                                        "report",
                                        first.toString(),
                                        first.toString(),
                                        "-o",
                                        twice.toString())
                                .code())
                .isZero();
        String twiceHtml = Files.readString(twice);
        Path withoutPlots = tmp.resolve("without-plots.html");
        Files.writeString(
                withoutPlots, twiceHtml.replaceAll("(?s)(<svg[^>]*>).*?</svg>", "$1</svg>"));
        Chromium.run(twice, tmp.resolve("chrome-3"), screenshot(tmp, "a"));
        Chromium.run(withoutPlots, tmp.resolve("chrome-4"), screenshot(tmp, "b"));
        List<Map<String, String>> twicePoints = elements(twiceHtml, "circle", "point");
        for (int run = 0; run < 2; run++) {
            String copy = Integer.toString(run);
            int rgb = RUN_COLOURS[run];
            int painted = colourPixels(tmp.resolve("a.png"), rgb);
            int unpainted = colourPixels(tmp.resolve("b.png"), rgb);
            long copyPoints =
                    twicePoints.stream().filter(p -> copy.equals(p.get("data-run"))).count();
            assertThat(copyPoints)
                    .isEqualTo(points.stream().filter(p -> "0".equals(p.get("data-run"))).count());
            // at least a pixel per point of that copy, whatever the renderer's anti-aliasing
            // leaves of the exact colour (hundreds, seen on two machines' Chromium)
            assertThat(painted - unpainted)
                    .as("pixels of copy %d's colour, %d points", run, copyPoints)
                    .isGreaterThanOrEqualTo((int) copyPoints);
        }
        // the passing line marks the passing rate; the capacity is that rate or, when its probes
        // achieved less, what they achieved
        assertThat(Double.parseDouble(passing.get(0).get("data-rate")))
                .isCloseTo(capacity.get("passing_rate").asDouble(), within(1e-9));
        assertThat(capacity.get("max_request_rate").asDouble())
                .isLessThanOrEqualTo(capacity.get("passing_rate").asDouble());
    }

    @Test
    void badInputExitsTwo(@TempDir Path tmp) throws Exception {
        Outcome o =
                SimServer.cli(
                        "report",
                        tmp.resolve("none").toString(),
                        "-o",
                        tmp.resolve("r.html").toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("RUN 1: no such file or directory");
        Path capacity = tmp.resolve("capacity.json");
        Files.writeString(
                capacity, "{\"max_request_rate\": 1, \"probes\": [{\"profile\": \"gone.json\"}]}");
        o = SimServer.cli("report", capacity.toString(), "-o", tmp.resolve("r.html").toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("gone.json");
        o = SimServer.cli("report", capacity.toString());
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--output");
    }

    // The window is taller than the page ever is, so that every chart is in the picture: a
    // screenshot holds only the window, and more notes above the charts (a slow machine's
    // verdicts) once pushed them below a 1600-pixel window.
    private static String[] screenshot(Path tmp, String name) {
        return new String[] {
            "--screenshot=" + tmp.resolve(name + ".png"),
            "--window-size=1400,12000",
            "--hide-scrollbars"
        };
    }

    /** The first two runs' colours in the report's charts and legend. */
    private static final int[] RUN_COLOURS = {0x1f77b4, 0xd62728};

    private static int colourPixels(Path png, int colour) throws Exception {
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isEqualTo(1400);
        int count = 0;
        for (int yy = 0; yy < image.getHeight(); yy++) {
            for (int xx = 0; xx < image.getWidth(); xx++) {
                int rgb = image.getRGB(xx, yy);
                if (Math.abs(((rgb >> 16) & 0xff) - ((colour >> 16) & 0xff)) < 16
                        && Math.abs(((rgb >> 8) & 0xff) - ((colour >> 8) & 0xff)) < 16
                        && Math.abs((rgb & 0xff) - (colour & 0xff)) < 16) {
                    count++;
                }
            }
        }
        return count;
    }

    private static List<Map<String, String>> elements(String dom, String tag, String cls) {
        List<Map<String, String>> out = new ArrayList<>();
        Matcher m = ELEMENT.matcher(dom);
        while (m.find()) {
            if (!m.group(1).equals(tag)) {
                continue;
            }
            Map<String, String> attributes = new HashMap<>();
            Matcher a = ATTRIBUTE.matcher(m.group(2));
            while (a.find()) {
                attributes.put(a.group(1), a.group(2).replace("&amp;", "&"));
            }
            if (cls.equals(attributes.get("class"))) {
                out.add(attributes);
            }
        }
        return out;
    }

    private static List<JsonNode> profiles(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            List<JsonNode> out = new ArrayList<>();
            for (Path p : files.filter(f -> f.toString().endsWith(".json")).toList()) {
                out.add(JSON.readTree(p.toFile()));
            }
            return out;
        }
    }
}
