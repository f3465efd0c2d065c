package io.inferencebench.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code make help} is the list of what a user may call: every target of the Makefile's {@code
 * .PHONY} is in it, it names no target that does not exist, and every rule of the Makefile is
 * {@code .PHONY} (a target added without it would be missed by the first check).
 */
class MakeHelpTest {

    private static final Pattern RULE = Pattern.compile("(?m)^([a-z][a-z0-9-]*)\\s*:(?!=)");
    private static final Pattern HELP_ENTRY = Pattern.compile("(?m)^\\s*make ([a-z][a-z0-9-]*)\\s");

    private static Path makefile;
    private static String text;

    @BeforeAll
    static void readTheMakefile() throws Exception {
        Path script = RealNode.findScript("Makefile");
        assumeTrue(script != null, "the repository's Makefile above the working directory");
        makefile = script;
        text = Files.readString(makefile);
    }

    /** The targets of .PHONY, continuation lines joined. */
    static Set<String> phony(String makefileText) {
        Matcher m =
                Pattern.compile("(?m)^\\.PHONY:((?:[^\\n]*\\\\\\n)*[^\\n]*)").matcher(makefileText);
        Set<String> targets = new LinkedHashSet<>();
        while (m.find()) {
            for (String t : m.group(1).replace("\\\n", " ").trim().split("\\s+")) {
                if (!t.isEmpty()) {
                    targets.add(t);
                }
            }
        }
        return targets;
    }

    static Set<String> helpEntries(String help) {
        Set<String> entries = new LinkedHashSet<>();
        Matcher m = HELP_ENTRY.matcher(help);
        while (m.find()) {
            entries.add(m.group(1));
        }
        return entries;
    }

    private static String makeHelp() throws Exception {
        Process p =
                new ProcessBuilder("make", "-s", "-f", makefile.toString(), "help")
                        .directory(makefile.getParent().toFile())
                        .redirectErrorStream(true)
                        .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("make help finished").isTrue();
        assertThat(p.exitValue()).as("make help:\n" + out).isZero();
        return out;
    }

    @Test
    void everyPhonyTargetIsInHelpAndHelpNamesOnlyPhonyTargets() throws Exception {
        assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/make"))
                        || Files.isExecutable(Path.of("/bin/make")),
                "make installed");
        Set<String> phony = phony(text);
        assertThat(phony).contains("help", "demo", "test", "node", "kind", "clean");
        Set<String> help = helpEntries(makeHelp());

        List<String> missing = new ArrayList<>(phony);
        missing.remove("help");
        missing.removeAll(help);
        assertThat(missing).as("targets of .PHONY that `make help` leaves out").isEmpty();
        List<String> unknown = new ArrayList<>(help);
        unknown.removeAll(phony);
        assertThat(unknown).as("`make help` entries that are not .PHONY targets").isEmpty();
    }

    @Test
    void everyRuleOfTheMakefileIsPhony() {
        Set<String> phony = phony(text);
        List<String> rules = new ArrayList<>();
        Matcher m = RULE.matcher(text);
        while (m.find()) {
            rules.add(m.group(1));
        }
        assertThat(rules).isNotEmpty();
        assertThat(rules).as("rules missing from .PHONY").allMatch(phony::contains);
    }

    @Test
    void theParsersReadWhatTheyShould() {
        String sample = ".PHONY: a b \\\n\tc d\n\nhelp:\n\t@echo \"  make a   - x\"\n";
        assertThat(phony(sample)).containsExactly("a", "b", "c", "d");
        assertThat(helpEntries("Intro:\n  make a   - x\n  make b-c - y\nmake d\n"))
                .containsExactly("a", "b-c", "d");
    }
}
