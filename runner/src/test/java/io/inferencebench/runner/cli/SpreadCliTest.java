package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.cli.SimServer.Outcome;
import io.inferencebench.testkit.FreePorts;
import io.inferencebench.testkit.ModelSim;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --connect-to}: one run's requests spread over two real model-sim servers on their own
 * loopback addresses, each request to the next in turn; the profile's count per address equals what
 * each server says it served, and bad addresses are refused naming the flag.
 */
class SpreadCliTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aRunSpreadOverTwoServersSendsEachHalfAndSaysSo(@TempDir Path tmp) throws Exception {
        int portA = FreePorts.claim();
        int portB = FreePorts.claim();
        Process a = ModelSim.startOn("127.0.0.2", portA, tmp.resolve("a.log"), "/v1/models");
        try {
            Process b = ModelSim.startOn("127.0.0.3", portB, tmp.resolve("b.log"), "/v1/models");
            try {
                Path results = tmp.resolve("results");
                Outcome o =
                        SimServer.cli(
                                argv(
                                        "run --base-url http://127.0.0.2:%s --connect-to"
                                                + " 127.0.0.2:%s,127.0.0.3:%s --backend openai"
                                                + " --model sim --ignore-eos --random-input-len 16"
                                                + " --random-output-len 4 --request-rate 20,40"
                                                + " --num-prompts 30 --arrival constant"
                                                + " --num-warmups 0 --requests-per-connection 5"
                                                + " --progress none --cooldown 0 --result-dir %s",
                                        Integer.toString(portA),
                                        Integer.toString(portA),
                                        Integer.toString(portB),
                                        results.toString()));
                assertThat(o.code()).as(o.err()).isZero();
                List<JsonNode> profiles = profiles(results);
                assertThat(profiles).hasSize(2);
                long toA = 0;
                long toB = 0;
                for (JsonNode profile : profiles) {
                    JsonNode m = profile.path("metrics");
                    JsonNode perAddress = m.path("requests_per_address");
                    long stageA = perAddress.path("127.0.0.2:" + portA).asLong(-1);
                    long stageB = perAddress.path("127.0.0.3:" + portB).asLong(-1);
                    assertThat(perAddress.size()).isEqualTo(2);
                    assertThat(stageA + stageB).isEqualTo(m.path("requests_sent").asLong());
                    assertThat(List.of(stageA, stageB)).containsExactly(15L, 15L);
                    assertThat(m.path("address_balance").path("max_min_ratio").asDouble())
                            .isEqualTo(1.0);
                    assertThat(
                                    m.path("address_balance")
                                            .path("coefficient_of_variation")
                                            .asDouble())
                            .isZero();
                    toA += stageA;
                    toB += stageB;
                }
                // what each server itself counts as served
                assertThat(served("127.0.0.2", portA)).isEqualTo(toA);
                assertThat(served("127.0.0.3", portB)).isEqualTo(toB);
            } finally {
                ModelSim.stop(b);
            }
        } finally {
            ModelSim.stop(a);
        }
    }

    @Test
    void badSpreadFlagsNameTheFlagAndSendNothing(@TempDir Path tmp) {
        String run = "run --base-url http://127.0.0.1:9 --model sim --num-prompts 1 --result-dir ";
        Outcome o = SimServer.cli(argv(run + tmp + " --connect-to 127.0.0.2:99999"));
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--connect-to: 127.0.0.2:99999: bad port");
        o = SimServer.cli(argv(run + tmp + " --connect-to no-such-host.invalid"));
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--connect-to: no-such-host.invalid does not resolve");
        o = SimServer.cli(argv(run + tmp + " --balance round"));
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--balance: expected url or addresses, got round");
        o = SimServer.cli(argv(run + tmp + " --balance addresses --connect-to 127.0.0.2"));
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("give one of them");
        o = SimServer.cli(argv(run + tmp + " --requests-per-connection 0"));
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.err()).contains("--requests-per-connection: must be at least 1, got 0");
    }

    private static List<JsonNode> profiles(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".json"))
                    .filter(p -> p.getFileName().toString().contains("qps"))
                    .sorted()
                    .map(
                            p -> {
                                try {
                                    return JSON.readTree(p.toFile());
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            })
                    .toList();
        }
    }

    private static long served(String host, int port) throws Exception {
        String page =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(
                                                URI.create(
                                                        "http://" + host + ":" + port + "/metrics"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
        double sum = 0;
        for (String line : page.split("\n")) {
            if (line.startsWith("vllm:request_success_total")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return (long) sum;
    }
}
