package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.file.Path;

/** A Prometheus server the tests start on loopback, with their own config and storage. */
public final class PrometheusServer {

    private PrometheusServer() {}

    /**
     * Starts {@code binary} with {@code config}, its data under {@code dataDir}, listening on
     * {@code 127.0.0.1:port}, warnings and errors into {@code log}; the caller waits for it and
     * stops it.
     */
    public static Process start(Path binary, Path config, Path dataDir, int port, Path log)
            throws IOException {
        return new ProcessBuilder(
                        binary.toString(),
                        "--config.file=" + config,
                        "--storage.tsdb.path=" + dataDir,
                        "--web.listen-address=127.0.0.1:" + port,
                        "--log.level=warn")
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
    }
}
