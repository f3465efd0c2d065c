package io.inferencebench.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class that leaves entries in {@code java.io.tmpdir}: those matching the given globs
 * that were not there before the class ran and are there after it (its {@code @AfterAll} methods
 * and the extensions registered after this one included). {@code {pid}} in a glob stands for this
 * JVM's pid, so that the names the project makes with {@link TempDirs} are told apart from another
 * JVM's:
 *
 * <pre>{@code
 * @TempDirCheck({"ib-images-{pid}-*", "chromium*.err"})
 * class ImagesIT { ... }
 * }</pre>
 *
 * Put it before annotations that register other extensions (e.g. {@code @QuarkusTest}): extensions
 * are registered in the order they are declared, and this one must look before they start. Globs
 * without {@code {pid}} name what a library or tool makes; a concurrent JVM making the same name
 * while the class runs would be counted too (not an issue where one build runs at a time).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(TempDirCheck.Extension.class)
public @interface TempDirCheck {

    /** File-name globs in {@code java.io.tmpdir}; {@code {pid}} is this JVM's pid. */
    String[] value();

    /** The check itself. */
    final class Extension implements BeforeAllCallback, AfterAllCallback {

        private static final ExtensionContext.Namespace NAMESPACE =
                ExtensionContext.Namespace.create(TempDirCheck.class);

        /** The matching entries of {@code java.io.tmpdir} present now, by file name. */
        static Set<String> present(List<String> globs) {
            String pid = Long.toString(ProcessHandle.current().pid());
            List<PathMatcher> matchers =
                    globs.stream()
                            .map(g -> g.replace("{pid}", pid))
                            .map(g -> FileSystems.getDefault().getPathMatcher("glob:" + g))
                            .toList();
            Set<String> names = new TreeSet<>();
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(TempDirs.root())) {
                for (Path entry : entries) {
                    Path name = entry.getFileName();
                    if (matchers.stream().anyMatch(m -> m.matches(name))) {
                        names.add(name.toString());
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return names;
        }

        private static List<String> globs(ExtensionContext context) {
            TempDirCheck check = context.getRequiredTestClass().getAnnotation(TempDirCheck.class);
            return check == null ? List.of() : List.of(check.value());
        }

        @Override
        public void beforeAll(ExtensionContext context) {
            context.getStore(NAMESPACE).put("before", present(globs(context)));
        }

        @Override
        public void afterAll(ExtensionContext context) {
            @SuppressWarnings("unchecked")
            Set<String> before = context.getStore(NAMESPACE).get("before", Set.class);
            List<String> left = new ArrayList<>(present(globs(context)));
            if (before != null) {
                left.removeAll(before);
            }
            if (!left.isEmpty()) {
                throw new AssertionError(
                        context.getDisplayName()
                                + " left in "
                                + TempDirs.root()
                                + ": "
                                + left
                                + " (tests delete what they create, private keys first)");
            }
        }
    }
}
