package io.inferencebench.testkit;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Locates model-sim, the project's llm-d-inference-sim compatible simulator: env {@code
 * IB_MODEL_SIM} when it names an executable, else the path printed by {@code
 * e2e/scripts/provision-model-sim.sh} (found by walking up from the working directory; it builds on
 * a cache miss), else {@code model-sim} on the PATH.
 */
public final class ModelSim {

    private static volatile Path cached;

    private ModelSim() {}

    public static synchronized Path binary() {
        if (cached != null) {
            return cached;
        }
        String env = System.getenv("IB_MODEL_SIM");
        if (env != null && Files.isExecutable(Path.of(env))) {
            return cached = Path.of(env);
        }
        Path script = ProjectScripts.find("e2e/scripts/provision-model-sim.sh");
        return cached =
                script != null
                        ? ProjectScripts.provision(script, Duration.ofMinutes(30))
                        : Path.of("model-sim");
    }

    /**
     * Starts model-sim serving model {@code sim} (dummy tokenizer) on {@code 127.0.0.1:port} with
     * {@code flags}, its output into {@code log}, and waits up to 30 s until {@code readyPath}
     * answers 200; fails with the log when it exits or is not ready by then (and stops it).
     */
    public static Process startOnLoopback(int port, Path log, String readyPath, String... flags)
            throws IOException, InterruptedException {
        return startOn("127.0.0.1", port, log, readyPath, flags);
    }

    /**
     * As {@link #startOnLoopback}, listening on {@code host} (another 127/8 address, for a client
     * that spreads over several servers).
     */
    public static Process startOn(
            String host, int port, Path log, String readyPath, String... flags)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(binary().toString(), "--model", "sim"));
        command.addAll(List.of("--host", host, "--port", Integer.toString(port)));
        command.add("--force-dummy-tokenizer");
        command.addAll(List.of(flags));
        Process process =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        URI ready = URI.create("http://" + host + ":" + port + readyPath);
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("model-sim exited: " + Files.readString(log));
            }
            try {
                HttpResponse<Void> r =
                        client.send(
                                HttpRequest.newBuilder(ready).build(),
                                HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return process;
                }
            } catch (IOException notYet) {
                // still starting
            }
            Thread.sleep(50);
        }
        process.destroyForcibly();
        throw new IllegalStateException("model-sim not ready: " + Files.readString(log));
    }

    /** Stops a model-sim {@link #startOnLoopback} started: gently, then after 5 s by force. */
    public static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
