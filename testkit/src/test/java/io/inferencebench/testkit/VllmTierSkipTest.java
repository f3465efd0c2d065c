package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The vLLM tier runs only where the vLLM CPU wheel does (AVX-512 F/BW/VL/DQ and VNNI); on another
 * CPU - these projects' AMD EPYC machines have AVX2 only - it is skipped with the missing flags
 * named, before anything is provisioned or installed: {@code vllm-cpu.sh check-cpu}, {@code make
 * test-vllm} and the JUnit side ({@link VllmCpu#unsupportedCpu()}). The CPU is a stand-in {@code
 * /proc/cpuinfo} ({@code IB_VLLM_CPUINFO}), so this runs the same on any machine.
 */
class VllmTierSkipTest {

    static final String EPYC_AVX2 =
            """
            processor	: 0
            vendor_id	: AuthenticAMD
            model name	: AMD EPYC 7B13 64-Core Processor
            flags		: fpu vme de pse tsc msr pae mce cx8 apic sse sse2 ht syscall nx mmxext \
            lm pni ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand \
            hypervisor lahf_lm abm sse4a bmi1 avx2 smep bmi2 erms invpcid rdseed adx smap \
            clflushopt clwb sha_ni xsaveopt xsavec xgetbv1 xsaves clzero vaes vpclmulqdq

            processor	: 1
            flags		: fpu avx512f avx512bw avx512vl avx512dq avx512_vnni
            """;

    static final String XEON_AVX512 =
            """
            processor	: 0
            vendor_id	: GenuineIntel
            model name	: Intel(R) Xeon(R) Processor
            flags		: fpu sse sse2 avx avx2 fma avx512f avx512dq avx512ifma avx512cd \
            avx512bw avx512vl avx512_bf16 avx512vbmi avx512_vbmi2 avx512_vnni avx512_bitalg
            """;

    private static Path cpuinfo(Path dir, String text) throws Exception {
        Path file = dir.resolve("cpuinfo");
        Files.writeString(file, text);
        return file;
    }

    record Outcome(int exit, String out) {}

    private static Outcome run(Path cwd, Map<String, String> env, String... command)
            throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(cwd.toFile());
        pb.redirectErrorStream(true);
        // Run as a top-level make even when this test runs under `make test`.
        pb.environment().keySet().removeAll(java.util.List.of("MAKELEVEL", "MAKEFLAGS", "MFLAGS"));
        pb.environment().putAll(env);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " still running after 60 s");
        }
        return new Outcome(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    private static boolean x86() {
        return "amd64".equals(System.getProperty("os.arch"))
                || "x86_64".equals(System.getProperty("os.arch"));
    }

    @Test
    void checkCpuNamesEveryMissingFlagOfAnAvx2OnlyCpu(@TempDir Path dir) throws Exception {
        assumeTrue(x86(), "the script checks the machine's architecture first");
        Path script = VllmCpu.script();
        // Only the first processor's flags count (the second one's line is a decoy).
        Outcome o =
                run(
                        dir,
                        Map.of("IB_VLLM_CPUINFO", cpuinfo(dir, EPYC_AVX2).toString()),
                        "bash",
                        script.toString(),
                        "check-cpu");
        assertThat(o.exit()).as(o.out()).isEqualTo(1);
        assertThat(o.out())
                .contains("this CPU lacks avx512f avx512bw avx512vl avx512dq avx512_vnni")
                .contains("make test-vllm")
                .contains("make test-transformers");
    }

    @Test
    void checkCpuPassesWithAvx512AndVnni(@TempDir Path dir) throws Exception {
        assumeTrue(x86(), "the script checks the machine's architecture first");
        Outcome o =
                run(
                        dir,
                        Map.of("IB_VLLM_CPUINFO", cpuinfo(dir, XEON_AVX512).toString()),
                        "bash",
                        VllmCpu.script().toString(),
                        "check-cpu");
        assertThat(o.exit()).as(o.out()).isZero();
        assertThat(o.out()).isEmpty();
    }

    /**
     * {@code make test-vllm} on an AVX2 machine: the reason and SKIPPED, exit 0, and nothing of the
     * tier's provisioning (tools, node, install, images, Maven) starts. Before, it provisioned the
     * tools and the node, then stopped with an error at the install.
     */
    @Test
    void makeTestVllmSkipsBeforeProvisioningAnything(@TempDir Path dir) throws Exception {
        assumeTrue(x86(), "the script checks the machine's architecture first");
        assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/make"))
                        || Files.isExecutable(Path.of("/bin/make")),
                "make installed");
        Path makefile = RealNode.findScript("Makefile");
        assumeTrue(makefile != null, "the repository's Makefile above the working directory");
        // Safety nets should the check ever let this through: an install would find no Python
        // and write nothing outside the test's directory.
        Outcome o =
                run(
                        makefile.getParent(),
                        Map.of(
                                "IB_VLLM_CPUINFO",
                                cpuinfo(dir, EPYC_AVX2).toString(),
                                "IB_VLLM_PYTHON",
                                dir.resolve("no-python").toString(),
                                "IB_CACHE_DIR",
                                dir.resolve("cache").toString()),
                        "make",
                        "test-vllm");
        assertThat(o.exit()).as(o.out()).isZero();
        assertThat(o.out())
                .contains("this CPU lacks avx512f")
                .contains("make test-vllm: SKIPPED")
                .doesNotContain("provision")
                .doesNotContain("mvnw")
                .doesNotContainPattern("make\\[\\d+\\]");
    }

    @Test
    void theJunitSideSkipsWithTheScriptsReason(@TempDir Path dir) throws Exception {
        assumeTrue(x86(), "the script checks the machine's architecture first");
        assertThat(
                        VllmCpu.unsupportedCpu(
                                Map.of("IB_VLLM_CPUINFO", cpuinfo(dir, EPYC_AVX2).toString())))
                .hasValueSatisfying(
                        why ->
                                assertThat(why)
                                        .startsWith("this CPU lacks avx512f")
                                        .doesNotContain("[vllm-cpu]"));
        assertThat(
                        VllmCpu.unsupportedCpu(
                                Map.of("IB_VLLM_CPUINFO", cpuinfo(dir, XEON_AVX512).toString())))
                .isEmpty();
    }
}
