package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner jar ramps 5 -> 50 req/s over 4 s with constant arrivals against model-sim: the
 * requests the server saw in each tenth of the stage follow the ramp (counted from the server's own
 * request counter, polled while the stage runs), and so do the profile's windows and the schedule
 * LoadDelivered judges.
 */
class RampUpJarTest {

    private static final double START = 5;
    private static final double END = 50;
    private static final double SECONDS = 4;
    private static final int WINDOWS = 10;

    /** The ramp's integrated rate: requests due from 0 to {@code t} seconds. */
    private static double integral(double t) {
        return START * t + (END - START) * t * t / (2 * SECONDS);
    }

    /** Constant arrivals due in [a, b): arrival k is due where the integral reaches k. */
    private static long dueBetween(double a, double b) {
        return (long) Math.ceil(integral(b) - 1e-9) - (long) Math.ceil(integral(a) - 1e-9);
    }

    /** One reading of the server's completed-request counter. */
    private record Reading(Instant at, double completed) {}

    @Test
    void theServerSeesTheRampWindowByWindow(@TempDir Path dir) throws Exception {
        // No service time: a request completes (and counts on the server) as it arrives.
        try (SimServer sim =
                new SimServer(
                        dir.resolve("sim.log"),
                        argv(
                                "--time-to-first-token 0 --inter-token-latency 0"
                                        + " --max-num-seqs 500"))) {
            ConcurrentLinkedQueue<Reading> readings = new ConcurrentLinkedQueue<>();
            AtomicBoolean polling = new AtomicBoolean(true);
            Thread poller = new Thread(() -> poll(sim.baseUrl, readings, polling), "metrics-poll");
            poller.setDaemon(true);
            poller.start();
            Path results = dir.resolve("results");
            RunnerJarTest.Result r;
            try {
                r =
                        RunnerJarTest.runJar(
                                dir,
                                sim.run(
                                        results,
                                        argv(
                                                "--ramp-up-strategy linear --ramp-up-start-rate 5"
                                                        + " --ramp-up-end-rate 50 --duration 4s"
                                                        + " --arrival constant")));
            } finally {
                polling.set(false);
                poller.join(5_000);
            }
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("5.0->50.0");
            JsonNode profile = onlyProfile(results);
            JsonNode metrics = profile.path("metrics");
            JsonNode ramp = profile.path("config").path("ramp_up");
            assertThat(ramp.path("strategy").asText()).isEqualTo("linear");
            assertThat(ramp.path("start_rate").asDouble()).isEqualTo(START);
            assertThat(ramp.path("end_rate").asDouble()).isEqualTo(END);
            assertThat(ramp.path("over").asText()).isEqualTo("duration");
            // the ramp's mean rate, (5 + 50) / 2, stands in LPG's request_rate
            assertThat(metrics.path("request_rate").asDouble()).isCloseTo(27.5, within(1e-9));

            // LoadDelivered judges the drawn ramp, not a constant rate: 110 due in [0, 4 s), the
            // last at the root of integral(t) = 109
            long total = dueBetween(0, SECONDS);
            assertThat(total).isEqualTo(110);
            assertThat(metrics.path("requests_due").asLong()).isEqualTo(total);
            double a = (END - START) / (2 * SECONDS);
            double last = (-START + Math.sqrt(START * START + 4 * a * (total - 1))) / (2 * a);
            assertThat(metrics.path("scheduled_rate").asDouble())
                    .isCloseTo((total - 1) / last, within(0.01));
            assertThat(metrics.path("requests_sent").asLong()).isEqualTo(total);
            assertThat(metrics.path("completed").asLong()).isEqualTo(total);

            JsonNode windows = metrics.path("ramp_up_windows");
            assertThat(windows).hasSize(WINDOWS);
            Instant start = startOf(profile);
            List<Reading> seen = List.copyOf(readings);
            long sentInWindows = 0;
            for (int w = 0; w < WINDOWS; w++) {
                JsonNode window = windows.get(w);
                double from = SECONDS * w / WINDOWS;
                double to = SECONDS * (w + 1) / WINDOWS;
                long due = dueBetween(from, to);
                String at = "window " + w + " [" + from + ", " + to + ")";
                assertThat(window.path("start_s").asDouble()).as(at).isCloseTo(from, within(1e-9));
                assertThat(window.path("end_s").asDouble()).as(at).isCloseTo(to, within(1e-9));
                assertThat(window.path("requests_due").asLong()).as(at).isEqualTo(due);
                assertThat(window.path("ramp_rate").asDouble())
                        .as(at)
                        .isCloseTo((integral(to) - integral(from)) / (to - from), within(1e-9));
                // a send a few ms late may cross into the next window, never further
                long sent = window.path("requests_sent").asLong();
                assertThat(sent).as(at).isBetween(due - 1, due + 1);
                sentInWindows += sent;
                assertThat(window.path("achieved_rate").asDouble())
                        .as(at)
                        .isCloseTo(sent / (to - from), within(1e-9));
                assertThat(window.path("completed").asLong()).as(at).isEqualTo(sent);
                assertThat(window.path("e2el_ms_p50").asDouble()).as(at).isPositive();
                assertThat(window.path("e2el_ms_p99").asDouble())
                        .as(at)
                        .isGreaterThanOrEqualTo(window.path("e2el_ms_p50").asDouble());
                assertThat(window.path("ttft_ms_p99").isNumber()).as(at).isTrue();
                // what the server counted in the window: its counter polled every ~10 ms, so a
                // boundary may be off by the request or two due near it
                double served =
                        counterAt(seen, start.plusNanos((long) (to * 1e9)))
                                - counterAt(seen, start.plusNanos((long) (from * 1e9)));
                assertThat(served)
                        .as(at + " served by the simulator")
                        .isBetween(due - 2.0, due + 2.0);
            }
            assertThat(sentInWindows).isEqualTo(total);
            // the ramp is visible: the last tenth carries six times the first's requests
            assertThat(windows.get(WINDOWS - 1).path("requests_sent").asLong())
                    .isGreaterThan(5 * windows.get(0).path("requests_sent").asLong());
        }
    }

    private static JsonNode onlyProfile(Path results) throws Exception {
        List<Path> files;
        try (Stream<Path> s = Files.list(results)) {
            files = s.filter(p -> p.toString().endsWith(".json")).toList();
        }
        assertThat(files).hasSize(1);
        // the ramp names the file, where a constant rate would stand
        assertThat(files.get(0).getFileName().toString())
                .matches("openai-5\\.0-50\\.0qps-sim-\\d{8}-\\d{6}\\.json");
        return new ObjectMapper().readTree(files.get(0).toFile());
    }

    private static Instant startOf(JsonNode profile) {
        JsonNode t = profile.path("config").path("start_time");
        return Instant.ofEpochSecond(t.path("seconds").asLong(), t.path("nanos").asLong());
    }

    /** The counter's value at {@code at}: the last reading taken at or before it. */
    private static double counterAt(List<Reading> readings, Instant at) {
        double value = Double.NaN;
        for (Reading r : readings) {
            if (r.at().isAfter(at)) {
                break;
            }
            value = r.completed();
        }
        assertThat(value).as("a reading of the server's counter before " + at).isNotNaN();
        return value;
    }

    /** Reads the server's completed-request counter every 10 ms until told to stop. */
    private static void poll(
            String baseUrl, ConcurrentLinkedQueue<Reading> readings, AtomicBoolean polling) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest request =
                HttpRequest.newBuilder(URI.create(baseUrl + "/metrics"))
                        .timeout(Duration.ofSeconds(2))
                        .build();
        while (polling.get()) {
            try {
                String body = client.send(request, HttpResponse.BodyHandlers.ofString()).body();
                // the instant after the answer: every request counted in it was served by then
                Instant at = Instant.now();
                readings.add(new Reading(at, completed(body)));
                Thread.sleep(10);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                // the server not up yet or busy: the next poll reads it
            }
        }
    }

    /** The sum of {@code vllm:request_success_total} over its label sets. */
    private static double completed(String metricsPage) {
        double sum = 0;
        for (String line : metricsPage.split("\n")) {
            if (line.startsWith("vllm:request_success_total")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }
}
