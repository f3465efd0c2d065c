package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.runner.stub.StubServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a server says reaches the terminal without its escape sequences: a model id that retitles
 * the window, an error that writes to the clipboard or clears the screen.
 */
class TerminalSafetyTest {

    /** JSON string escapes: the parsed text carries real ESC and BEL characters. */
    static final String HOSTILE_MODEL = "evil\\u001b]0;pwned\\u0007-model\\u001b[2J";

    static final String HOSTILE_ERROR =
            "overloaded \\u001b]52;c;c2VjcmV0\\u0007\\u001b[31mred\\u009b1m\\u0007 now";

    @Test
    void modelIdsAndErrorTextFromTheServerArePrintedWithoutControlCharacters(@TempDir Path dir)
            throws Exception {
        StubServer.Handler handler =
                (request, exchange) -> {
                    if (request.path().equals("/v1/models")) {
                        exchange.respond(
                                200,
                                "application/json",
                                "{\"data\":[{\"id\":\"" + HOSTILE_MODEL + "\"}]}");
                        return;
                    }
                    exchange.startSse();
                    exchange.chunk("data: {\"error\":{\"message\":\"" + HOSTILE_ERROR + "\"}}\n\n");
                    exchange.endChunked();
                };
        try (StubServer server = new StubServer(handler)) {
            // discover the model instead of naming it
            List<String> args =
                    TrueNumbersTest.withoutModel(
                            TrueNumbersTest.quick(server.baseUrl(), dir.resolve("r"), 2));
            TrueNumbersTest.Outcome o = TrueNumbersTest.run(args.toArray(String[]::new));
            assertThat(o.code()).as(o.err()).isEqualTo(1);
            String printed = o.out() + o.err();
            assertThat(printed)
                    .contains("model evil-model ")
                    .contains("error_payload x2, first: overloaded red\\x07 now")
                    .doesNotContain("\u001b")
                    .doesNotContain("\u0007")
                    .doesNotContain("\u009b")
                    .doesNotContain("pwned")
                    .containsPattern("profile: .*openai-infqps-evil-model-[0-9-]+\\.json");
        }
    }
}
