package io.inferencebench.e2e.programs;

import java.nio.file.Files;
import java.nio.file.Path;

/** Job pod program: reports its completion index and a file from its mounted ConfigMap. */
public final class IndexProbe {
    private IndexProbe() {}

    public static void main(String[] args) throws Exception {
        Path greeting = Path.of(System.getenv("IB_MOUNT_ETC_PROBE"), "greeting");
        Path viaRoot = Path.of(System.getenv("IB_VOLUME_ROOT"), "etc/probe/greeting");
        System.out.println(
                "pod="
                        + System.getenv("POD_NAME")
                        + " index="
                        + System.getenv("INDEX")
                        + " jobIndex="
                        + System.getenv("JOB_COMPLETION_INDEX")
                        + " greeting="
                        + Files.readString(greeting).strip()
                        + " sameViaRoot="
                        + Files.isSameFile(greeting, viaRoot)
                        + " podIP="
                        + System.getenv("POD_IP"));
    }
}
