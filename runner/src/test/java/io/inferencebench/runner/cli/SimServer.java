package io.inferencebench.runner.cli;

import static io.inferencebench.testkit.Argv.argv;

import io.inferencebench.testkit.FreePorts;
import io.inferencebench.testkit.ModelSim;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A model-sim process on a free loopback port, stopped on close; and the CLI run in-process. */
final class SimServer implements AutoCloseable {

    record Outcome(int code, String out, String err) {}

    final Process process;
    final String baseUrl;

    SimServer(Path log, String... flags) throws Exception {
        int port = FreePorts.claim();
        process = ModelSim.startOnLoopback(port, log, "/v1/models", flags);
        baseUrl = "http://127.0.0.1:" + port;
    }

    /**
     * The {@code run} flags of a small random workload against this server, plus {@code extra}; the
     * requests ask for exact output lengths ({@code --ignore-eos}, which model-sim honours).
     */
    String[] run(Path results, String... extra) {
        return args(results, true, extra);
    }

    /**
     * As {@link #run}, with requests of OpenAI's API fields only (the openai backend's default).
     */
    String[] runOpenAiFieldsOnly(Path results, String... extra) {
        return args(results, false, extra);
    }

    private String[] args(Path results, boolean ignoreEos, String... extra) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                argv(
                                        "run --base-url %s --backend openai --model sim"
                                                + " --random-input-len 16 --random-output-len 16"
                                                + " --progress none --cooldown 0 --result-dir %s",
                                        baseUrl, results.toString())));
        if (ignoreEos) {
            args.add("--ignore-eos");
        }
        args.addAll(Arrays.asList(extra));
        return args.toArray(String[]::new);
    }

    /** The sum of the samples of {@code name} (all label sets) on the server's metrics page now. */
    double counter(String name) throws Exception {
        String page =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create(baseUrl + "/metrics")).build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
        return page.lines()
                .filter(l -> l.startsWith(name + "{") || l.startsWith(name + " "))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    /** What the server's {@code --request-log} recorded of one request. */
    record Seen(long arrivalNanos, int promptTokens, int maxTokens, String model) {}

    /**
     * The requests a server started with {@code --request-log log} recorded after its first {@code
     * skip}, by arrival; none when it wrote no log.
     */
    static List<Seen> requestLog(Path log, int skip) throws Exception {
        if (!java.nio.file.Files.exists(log)) {
            return List.of();
        }
        com.fasterxml.jackson.databind.ObjectMapper json =
                new com.fasterxml.jackson.databind.ObjectMapper();
        List<Seen> seen = new ArrayList<>();
        List<String> lines = java.nio.file.Files.readAllLines(log);
        for (String line : lines.subList(skip, lines.size())) {
            com.fasterxml.jackson.databind.JsonNode n = json.readTree(line);
            seen.add(
                    new Seen(
                            n.get("arrival_unix_ns").asLong(),
                            n.get("prompt_tokens").asInt(),
                            n.get("max_tokens").asInt(),
                            n.path("model").asText()));
        }
        seen.sort(java.util.Comparator.comparingLong(Seen::arrivalNanos));
        return seen;
    }

    static Outcome cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Outcome(code, out.toString(), err.toString());
    }

    @Override
    public void close() throws Exception {
        ModelSim.stop(process);
    }
}
