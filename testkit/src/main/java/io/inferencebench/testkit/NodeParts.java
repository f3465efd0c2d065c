package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Paths of the parts of a real node that provision-node.sh provides. */
record NodeParts(Path k8sBin, Path coredns, Path pauseTar, String pauseRef) {

    /** Runs provision-node.sh (or reads IB_NODE_PARTS) and checks that every part is there. */
    static NodeParts provision() {
        Map<String, String> kv = new LinkedHashMap<>();
        String envBin = System.getenv("IB_NODE_PARTS");
        Path script = RealNode.findScript("e2e/scripts/provision-node.sh");
        if (envBin != null && !envBin.isBlank()) {
            // KEY=VALUE lines as provision-node.sh prints them
            try {
                for (String l : Files.readAllLines(Path.of(envBin))) {
                    int eq = l.indexOf('=');
                    if (eq > 0) {
                        kv.put(l.substring(0, eq), l.substring(eq + 1).strip());
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        } else if (script != null) {
            try {
                Process p =
                        new ProcessBuilder("bash", script.toString())
                                .redirectError(ProcessBuilder.Redirect.INHERIT)
                                .start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(60, TimeUnit.MINUTES) || p.exitValue() != 0) {
                    throw new IllegalStateException(
                            script + " failed (exit " + p.exitValue() + "); its output is above");
                }
                for (String l : out.split("\n")) {
                    int eq = l.indexOf('=');
                    if (eq > 0) {
                        kv.put(l.substring(0, eq), l.substring(eq + 1).strip());
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot run " + script, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        } else {
            throw new IllegalStateException(
                    "e2e/scripts/provision-node.sh not found above "
                            + Path.of("").toAbsolutePath()
                            + " and IB_NODE_PARTS not set");
        }
        for (String key : List.of("K8S_BIN", "COREDNS", "PAUSE_TAR", "PAUSE_REF")) {
            if (!kv.containsKey(key)) {
                throw new IllegalStateException("provision-node.sh did not report " + key);
            }
        }
        NodeParts parts =
                new NodeParts(
                        Path.of(kv.get("K8S_BIN")),
                        Path.of(kv.get("COREDNS")),
                        Path.of(kv.get("PAUSE_TAR")),
                        kv.get("PAUSE_REF"));
        for (Path p :
                List.of(
                        parts.k8sBin().resolve("kubelet"),
                        parts.k8sBin().resolve("kube-proxy"),
                        parts.coredns(),
                        parts.pauseTar())) {
            if (!Files.exists(p)) {
                throw new IllegalStateException(
                        "missing " + p + ": run e2e/scripts/provision-node.sh");
            }
        }
        for (String tool : List.of("containerd", "ctr", "runc", "nft", "iptables", "ip")) {
            if (!Command.run(List.of("sh", "-c", "command -v " + tool), Duration.ofSeconds(5))
                    .ok()) {
                throw new IllegalStateException(
                        "missing " + tool + " on PATH: run e2e/scripts/provision-node.sh");
            }
        }
        return parts;
    }
}
