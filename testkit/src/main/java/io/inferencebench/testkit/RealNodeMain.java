package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the control plane plus a {@link RealNode} in the foreground until SIGTERM (the shutdown hook
 * tears it down and restores the host). {@code e2e/scripts/control-plane.sh up --real-node} starts
 * it; {@code make demo} through that script.
 *
 * <p>Arguments: {@code --dir <state dir>} (optional: then {@code <dir>/kubeconfig} is a copy of the
 * admin kubeconfig and {@code <dir>/ready} lists kubeconfig, API server, kubectl, node directory
 * and start-up times once the node is Ready and the images are imported), {@code --import <image
 * tarball>} (repeatable: imported into the node's containerd, CRI namespace, before ready).
 */
public final class RealNodeMain {

    private RealNodeMain() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        Path dir = null;
        List<Path> imports = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--dir" -> dir = Path.of(value(args, ++i, "--dir"));
                case "--import" -> imports.add(Path.of(value(args, ++i, "--import")));
                default -> {
                    System.err.println(
                            "unknown argument "
                                    + args[i]
                                    + "; allowed: --dir <dir>, --import <image tarball>");
                    System.exit(2);
                }
            }
        }
        for (Path tar : imports) {
            if (!Files.isRegularFile(tar)) {
                System.err.println("image tarball " + tar + " not found (run `make images`)");
                System.exit(2);
            }
        }
        if (dir != null) {
            Files.createDirectories(dir);
            Files.deleteIfExists(dir.resolve("ready"));
        }
        long start = System.nanoTime();
        RealNode node = RealNode.start();
        long nodeMillis = (System.nanoTime() - start) / 1_000_000;
        StringBuilder imported = new StringBuilder();
        for (Path tar : imports) {
            long t = System.nanoTime();
            Command.Result r = node.importImage(tar);
            if (!r.ok()) {
                System.err.println("ctr images import " + tar + " failed:\n" + r.output());
                node.close();
                System.exit(1);
            }
            imported.append(tar.getFileName())
                    .append(':')
                    .append((System.nanoTime() - t) / 1_000_000)
                    .append("ms ");
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        Path kubeconfig = node.controlPlane().adminKubeconfig();
        if (dir != null) {
            Path copy = dir.resolve("kubeconfig");
            Files.copy(kubeconfig, copy, StandardCopyOption.REPLACE_EXISTING);
            kubeconfig = copy;
            Files.writeString(
                    dir.resolve("ready"),
                    "kubeconfig="
                            + kubeconfig
                            + "\napiserver="
                            + node.controlPlane().apiServerUrl()
                            + "\nnode="
                            + node.nodeName()
                            + "\nnode_root="
                            + node.directory()
                            + "\nlogs="
                            + node.directory().resolve("logs")
                            + "\nkubectl="
                            + K8sBinaries.binary("kubectl")
                            + "\nnode_ready_ms="
                            + nodeMillis
                            + "\nimported="
                            + imported.toString().strip()
                            + "\nstartup_ms="
                            + millis
                            + "\n");
        }
        System.out.println(
                "real node ready in "
                        + millis
                        + " ms; kubeconfig: "
                        + kubeconfig
                        + "; phases: "
                        + node.startupPhases()
                        + (imports.isEmpty() ? "" : "; imported: " + imported.toString().strip()));
        System.out.flush();
        new CountDownLatch(1).await();
    }

    private static String value(String[] args, int index, String flag) {
        if (index >= args.length) {
            System.err.println(flag + " needs a value");
            System.exit(2);
        }
        return args[index];
    }
}
