package io.inferencebench.testkit;

import java.util.concurrent.CountDownLatch;

/**
 * Runs the control plane plus a {@link RealNode} in the foreground until SIGTERM (the shutdown hook
 * tears it down and restores the host). Prints the admin kubeconfig path and the startup phases
 * once the node is Ready. For manual use and crash-recovery checks; {@code control-plane.sh} will
 * start it.
 */
public final class RealNodeMain {

    private RealNodeMain() {}

    public static void main(String[] args) throws InterruptedException {
        long start = System.nanoTime();
        RealNode node = RealNode.start();
        System.out.println(
                "real node ready in "
                        + (System.nanoTime() - start) / 1_000_000
                        + " ms; kubeconfig: "
                        + node.controlPlane().adminKubeconfig()
                        + "; phases: "
                        + node.startupPhases());
        System.out.flush();
        new CountDownLatch(1).await();
    }
}
