package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.inferencebench.runner.stub.StubServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code search} runs every probe in this process on one session: the client is set up (prompts,
 * model, self warm-up, warm-up requests) once for the whole search, not once per probe, and each
 * probe still writes its own profile with the run flags' output settings.
 */
class SearchSessionTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theProbesShareOneSetUp(@TempDir Path tmp) throws Exception {
        Path results = tmp.resolve("results");
        CliTest.Outcome o;
        try (StubServer server = new StubServer(new CliTest.ModelServer(0, 0))) {
            o =
                    CliTest.run(
                            argv(
                                    "search --base-url %s --num-prompts 20 --random-input-len 8 --random-output-len 4 --num-warmups 3 --goodput e2el:60000 --min-rate 20 --max-rate 40 --max-probes 3 --pause 0 --lpg-dialect final --result-dir %s",
                                    server.baseUrl(), results.toString()));
        }
        String context = o.out() + o.err();
        JsonNode capacity = JSON.readTree(results.resolve("capacity.json").toFile());
        JsonNode probes = capacity.get("probes");
        assertThat(probes.size()).as(context).isGreaterThanOrEqualTo(2);
        // set up once: the model asked for once, one self warm-up, one round of warm-up requests
        assertThat(count(o.err(), "target ")).as(context).isEqualTo(1);
        assertThat(count(o.err(), "client warm-up:")).as(context).isEqualTo(1);
        assertThat(count(o.err(), "warm-up: 3 requests")).as(context).isEqualTo(1);
        for (JsonNode p : probes) {
            // every probe's own profile, in the dialect of the run flags
            JsonNode profile = JSON.readTree(results.resolve(p.get("profile").asText()).toFile());
            assertThat(profile.get("dimensions").get("lpg_dialect").asText())
                    .as(context)
                    .isEqualTo("final");
            assertThat(profile.get("metrics").get("request_rate").asDouble())
                    .isEqualTo(p.get("request_rate").asDouble());
        }
        // the warm-up requests are left out of the first probe only
        for (int i = 0; i < probes.size(); i++) {
            JsonNode metrics =
                    JSON.readTree(results.resolve(probes.get(i).get("profile").asText()).toFile())
                            .get("metrics");
            assertThat(metrics.get("warmup_requests_excluded").asLong())
                    .as(context)
                    .isEqualTo(i == 0 ? 3 : 0);
        }
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
