package io.inferencebench.runner.cli;

import static io.inferencebench.runner.cli.Argv.argv;

import io.inferencebench.testkit.FreePorts;
import io.inferencebench.testkit.ModelSim;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A model-sim process on a free loopback port, stopped on close; and the CLI run in-process. */
final class SimServer implements AutoCloseable {

    record Outcome(int code, String out, String err) {}

    final Process process;
    final String baseUrl;

    SimServer(Path log, String... flags) throws Exception {
        int port = FreePorts.claim();
        List<String> command = new ArrayList<>();
        command.add(ModelSim.binary().toString());
        command.addAll(
                List.of(
                        argv(
                                "--model sim --host 127.0.0.1 --port %s"
                                        + " --force-dummy-tokenizer",
                                Integer.toString(port))));
        command.addAll(Arrays.asList(flags));
        process =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        baseUrl = "http://127.0.0.1:" + port;
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("model-sim exited: " + Files.readString(log));
            }
            try {
                HttpResponse<Void> r =
                        client.send(
                                HttpRequest.newBuilder(URI.create(baseUrl + "/v1/models")).build(),
                                HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // still starting
            }
            Thread.sleep(50);
        }
        throw new IllegalStateException("model-sim not ready: " + Files.readString(log));
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

    static Outcome cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Outcome(code, out.toString(), err.toString());
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
