package io.inferencebench.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Runs a local control plane plus a local node in the foreground until SIGTERM, for manual use
 * ({@code e2e/scripts/control-plane.sh up}). Arguments: {@code --dir <state dir>} (required),
 * {@code --image-map <file>} (optional, see {@link ImageMap#parse}), {@code --node-name <name>}.
 * Writes {@code <dir>/kubeconfig} and, once everything is up, {@code <dir>/ready}.
 */
public final class ControlPlaneMain {

    private ControlPlaneMain() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        Path dir = null;
        Path imageMap = null;
        String nodeName = "local-node";
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--dir" -> dir = Path.of(requireValue(args, ++i, "--dir"));
                case "--image-map" -> imageMap = Path.of(requireValue(args, ++i, "--image-map"));
                case "--node-name" -> nodeName = requireValue(args, ++i, "--node-name");
                default -> {
                    System.err.println(
                            "unknown argument "
                                    + args[i]
                                    + "; allowed: --dir <dir>, --image-map <file>, --node-name <name>");
                    System.exit(2);
                }
            }
        }
        if (dir == null) {
            System.err.println("--dir <state directory> is required");
            System.exit(2);
        }
        Files.deleteIfExists(dir.resolve("ready"));
        long start = System.nanoTime();
        LocalControlPlane controlPlane = LocalControlPlane.start(dir.resolve("cluster"));
        ImageMap images = ImageMap.defaults();
        if (imageMap != null) {
            images.putAll(ImageMap.parse(imageMap));
        }
        LocalNode node =
                LocalNode.builder(controlPlane)
                        .name(nodeName)
                        .images(images)
                        .root(dir.resolve("node"))
                        .start();
        Path kubeconfig = dir.resolve("kubeconfig");
        Files.copy(
                controlPlane.adminKubeconfig(),
                kubeconfig,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        long millis = (System.nanoTime() - start) / 1_000_000;
        Files.writeString(
                dir.resolve("ready"),
                "kubeconfig="
                        + kubeconfig
                        + "\napiserver="
                        + controlPlane.apiServerUrl()
                        + "\nnode="
                        + node.name()
                        + "\nnode_root="
                        + node.root()
                        + "\nlogs="
                        + controlPlane.directory().resolve("logs")
                        + "\nkubectl="
                        + K8sBinaries.binary("kubectl")
                        + "\nstartup_ms="
                        + millis
                        + "\n");
        System.out.println(
                "local control plane ready in " + millis + " ms; kubeconfig: " + kubeconfig);
        new CountDownLatch(1).await();
    }

    private static String requireValue(String[] args, int index, String flag) {
        if (index >= args.length) {
            System.err.println(flag + " needs a value");
            System.exit(2);
        }
        return args[index];
    }
}
