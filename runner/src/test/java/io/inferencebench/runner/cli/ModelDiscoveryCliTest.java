package io.inferencebench.runner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.runner.stub.StubServer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without --model the model is discovered from /v1/models; a server that lists none (as Hugging
 * Face's transformers serve does), answers something else, or redirects is told apart, and the user
 * asked for what helps (exit 2), never shown the raw answer.
 */
class ModelDiscoveryCliTest {

    private static TrueNumbersTest.Outcome discover(StubServer server, Path dir) {
        List<String> args =
                TrueNumbersTest.withoutModel(
                        TrueNumbersTest.quick(
                                server.baseUrl(), dir.resolve("r-" + System.nanoTime()), 2));
        return StartupErrorsTest.usage(args.toArray(String[]::new));
    }

    private static StubServer answering(String models) throws Exception {
        return new StubServer(
                (request, exchange) -> {
                    if (request.path().equals("/v1/models")) {
                        exchange.raw(models);
                    } else {
                        exchange.respond(404, "application/json", "{\"detail\":\"Not Found\"}");
                    }
                });
    }

    private static String response(int status, String headers, String body) {
        return "HTTP/1.1 "
                + status
                + " X\r\n"
                + headers
                + "Content-Length: "
                + body.getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                + "\r\n\r\n"
                + body;
    }

    @Test
    void anEmptyModelListAsksForTheModelByName(@TempDir Path dir) throws Exception {
        try (StubServer server =
                answering(
                        response(
                                200,
                                "Content-Type: application/json\r\n",
                                "{\"object\":\"list\",\"data\":[]}"))) {
            assertThat(discover(server, dir).err())
                    .contains("--model: not given, and GET " + server.baseUrl() + "/v1/models")
                    .contains("lists no model (its \"data\" array is empty)")
                    .contains("give --model NAME (the model name the server serves)");
        }
    }

    @Test
    void anAnswerThatIsNotTheExpectedJsonIsSaidToBeSoWithoutQuotingIt(@TempDir Path dir)
            throws Exception {
        try (StubServer server =
                answering(
                        response(
                                200,
                                "Content-Type: text/html\r\n",
                                "<html>sign in \u001b[2J token=abc123</html>"))) {
            assertThat(discover(server, dir).err())
                    .contains("answered with something that is not JSON (text/html, ")
                    .contains("not the expected {\"data\": [{\"id\": MODEL}, ...]}")
                    .contains("give --model NAME")
                    .doesNotContain("abc123")
                    .doesNotContain("<html>");
        }
        try (StubServer server =
                answering(
                        response(
                                200,
                                "Content-Type: application/json\r\n",
                                "{\"models\":[\"m\"]}"))) {
            assertThat(discover(server, dir).err())
                    .contains("answered JSON that is not the expected")
                    .contains("(no \"data\" array)")
                    .contains("give --model NAME");
        }
    }

    @Test
    void aRedirectNamesWhereItPointsAndAsksForThatBaseUrl(@TempDir Path dir) throws Exception {
        try (StubServer server =
                answering(
                        response(
                                301,
                                "Location: https://llm.example.net/v1/models\u001b]0;x\u0007\r\n",
                                ""))) {
            assertThat(discover(server, dir).err())
                    .contains(
                            "--base-url: GET " + server.baseUrl() + "/v1/models answered HTTP 301")
                    .contains(
                            "the server redirected to https://llm.example.net/v1/models; use that"
                                    + " URL as the base URL (redirects are not followed)")
                    .doesNotContain("\u001b");
        }
    }
}
