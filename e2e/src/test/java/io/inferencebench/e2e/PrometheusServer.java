package io.inferencebench.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Prometheus server (the binary {@code e2e/scripts/provision-prometheus.sh} provides, the
 * Debian package when none is on the PATH) on the host's loopback, scraping model-server pods by
 * their pod IPs every second, as a cluster's Prometheus would scrape them. Each target carries the
 * labels {@code pod}, {@code namespace} and {@code service}.
 */
public final class PrometheusServer implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final String url;
    private final Path log;
    private final String namespace;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private PrometheusServer(Process process, String url, Path log, String namespace) {
        this.process = process;
        this.url = url;
        this.log = log;
        this.namespace = namespace;
    }

    /**
     * Starts Prometheus with its own config and storage under {@code dir}.
     *
     * @param targets pod name to {@code "<pod IP>|<service>"}; each is scraped at {@code :8000}
     */
    public static PrometheusServer start(Path dir, String namespace, Map<String, String> targets)
            throws IOException {
        Path binary = provision();
        Files.createDirectories(dir);
        StringBuilder config =
                new StringBuilder(
                        """
                        global:
                          scrape_interval: 1s
                          scrape_timeout: 1s
                        scrape_configs:
                          - job_name: model-servers
                            static_configs:
                        """);
        targets.forEach(
                (pod, ipAndService) -> {
                    String[] parts = ipAndService.split("\\|");
                    config.append(
                            """
                                  - targets: ['%s:%d']
                                    labels: {pod: '%s', namespace: '%s', service: '%s'}
                            """
                                    .formatted(
                                            parts[0],
                                            SimulatorDeployment.PORT,
                                            pod,
                                            namespace,
                                            parts[1]));
                });
        Path configFile = dir.resolve("prometheus.yml");
        Files.writeString(configFile, config);
        int port = freePort();
        Path log = dir.resolve("prometheus.log");
        Process process =
                new ProcessBuilder(
                                binary.toString(),
                                "--config.file=" + configFile,
                                "--storage.tsdb.path=" + dir.resolve("data"),
                                "--web.listen-address=127.0.0.1:" + port,
                                "--log.level=warn")
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        return new PrometheusServer(process, "http://127.0.0.1:" + port, log, namespace);
    }

    /** Base URL of the HTTP API. */
    public String url() {
        return url;
    }

    /** Waits until Prometheus has scraped {@code count} targets of the namespace successfully. */
    public void awaitTargetsUp(int count, Duration atMost) throws InterruptedException {
        String query = "count(up{namespace=\"" + namespace + "\"} == 1)";
        long deadline = System.nanoTime() + atMost.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("Prometheus exited: " + logText());
            }
            try {
                HttpResponse<String> r =
                        http.send(
                                HttpRequest.newBuilder(
                                                URI.create(
                                                        url
                                                                + "/api/v1/query?query="
                                                                + URLEncoder.encode(
                                                                        query,
                                                                        StandardCharsets.UTF_8)))
                                        .timeout(Duration.ofSeconds(5))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                last = r.body();
                if (r.statusCode() == 200) {
                    JsonNode result = JSON.readTree(r.body()).path("data").path("result");
                    if (result.size() == 1
                            && result.get(0).path("value").path(1).asText().equals("" + count)) {
                        return;
                    }
                }
            } catch (IOException notYet) {
                last = notYet.toString();
            }
            Thread.sleep(250);
        }
        throw new IllegalStateException(
                "Prometheus did not scrape "
                        + count
                        + " targets within "
                        + atMost
                        + ": "
                        + last
                        + "\n"
                        + logText());
    }

    private String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static int freePort() throws IOException {
        return io.inferencebench.testkit.FreePorts.claim();
    }

    /** The provisioning script's binary; fails (never skips) when none can be had. */
    private static Path provision() {
        Path script =
                OperatorFixtures.findRepoRoot().resolve("e2e/scripts/provision-prometheus.sh");
        try {
            Process p =
                    new ProcessBuilder("bash", script.toString())
                            .redirectError(ProcessBuilder.Redirect.INHERIT)
                            .start();
            String out =
                    new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(15, TimeUnit.MINUTES) || p.exitValue() != 0 || out.isBlank()) {
                throw new IllegalStateException(script + " found or installed no Prometheus");
            }
            String[] lines = out.split("\n");
            return Path.of(lines[lines.length - 1].strip());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
