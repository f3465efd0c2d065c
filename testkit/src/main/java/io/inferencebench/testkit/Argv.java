package io.inferencebench.testkit;

import java.util.ArrayList;
import java.util.List;

/**
 * A runner command line as the tests write it: one string, so that a test reads like the shell line
 * it stands for, and not one argument a line.
 */
public final class Argv {

    private Argv() {}

    /**
     * The arguments of {@code commandLine}: split at spaces, then each {@code %s} in a word
     * replaced by the next of {@code values} (a value may hold spaces: it stays within its word).
     *
     * <pre>{@code
     * argv("run --base-url %s --model m --result-dir %s", server.baseUrl(), dir)
     * }</pre>
     */
    public static String[] argv(String commandLine, Object... values) {
        List<String> args = new ArrayList<>();
        int next = 0;
        for (String word : commandLine.strip().split(" +")) {
            StringBuilder arg = new StringBuilder();
            int from = 0;
            for (int at = word.indexOf("%s"); at >= 0; at = word.indexOf("%s", from)) {
                if (next == values.length) {
                    throw new IllegalArgumentException(
                            "more %s than the " + values.length + " values: " + commandLine);
                }
                arg.append(word, from, at).append(values[next++]);
                from = at + 2;
            }
            args.add(arg.append(word.substring(from)).toString());
        }
        if (next != values.length) {
            throw new IllegalArgumentException(
                    values.length + " values for " + next + " %s: " + commandLine);
        }
        return args.toArray(String[]::new);
    }
}
