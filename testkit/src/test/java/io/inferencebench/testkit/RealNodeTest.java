package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RealNodeTest {

    @Test
    void iptablesRulesSplitIntoArgumentsWithQuotedCommentsWhole() {
        assertThat(
                        HostRestore.splitRule(
                                "KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment"
                                        + " \"block incoming localnet connections\" -m conntrack !"
                                        + " --ctstate RELATED,ESTABLISHED,DNAT -j DROP"))
                .containsExactly(
                        "KUBE-FIREWALL",
                        "!",
                        "-s",
                        "127.0.0.0/8",
                        "-d",
                        "127.0.0.0/8",
                        "-m",
                        "comment",
                        "--comment",
                        "block incoming localnet connections",
                        "-m",
                        "conntrack",
                        "!",
                        "--ctstate",
                        "RELATED,ESTABLISHED,DNAT",
                        "-j",
                        "DROP");
    }

    @Test
    void hostStateDifferencesNameTheSectionAndTheLine() {
        var before = java.util.Map.of("sysctls", java.util.List.of("kernel.panic = 0"));
        var after = java.util.Map.of("sysctls", java.util.List.of("kernel.panic = 10"));
        assertThat(HostState.differences(before, after))
                .containsExactly("sysctls: - kernel.panic = 0", "sysctls: + kernel.panic = 10");
        assertThat(HostState.differences(before, before)).isEmpty();
    }

    @Test
    void aSectionOfAToolInstalledAfterTheFirstCaptureIsNotALeftOver() {
        // provision-node.sh installs iptables on a fresh host: before it, there is no section
        var before = java.util.Map.of("sysctls", java.util.List.of("kernel.panic = 0"));
        var after =
                java.util.Map.of(
                        "sysctls", java.util.List.of("kernel.panic = 0"),
                        "iptables -t filter", java.util.List.of("-P INPUT ACCEPT"));
        assertThat(HostState.differences(before, after)).isEmpty();
        assertThat(HostState.onPath("sh")).isTrue();
        assertThat(HostState.onPath("no-such-tool-" + System.nanoTime())).isFalse();
        assertThat(HostState.capture(java.nio.file.Path.of("/nonexistent")))
                .as("iptables sections only where iptables is installed")
                .containsKeys("sysctls", "links", "paths", "mounts")
                .matches(
                        state ->
                                state.containsKey("iptables -t filter")
                                        == HostState.onPath("iptables"));
    }
}
