package io.inferencebench.runner.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A response's events read through its learned {@link EventShape} give exactly what the full parse
 * gives, event by event, and the shortcut is really taken for repeated layouts.
 */
class EventShapeTest {

    static class ShapedRecorder extends OpenAiJsonTest.Recorder {
        final EventShape shape = new EventShape();

        ShapedRecorder(boolean wantText) {
            super(wantText);
        }

        @Override
        public EventShape eventShape() {
            return shape;
        }
    }

    private static String vllm(String text, String finish) {
        return "{\"id\":\"cmpl-7\",\"object\":\"text_completion\",\"created\":1795994654,"
                + "\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\""
                + text
                + "\",\"logprobs\":null,\"finish_reason\":"
                + finish
                + ",\"stop_reason\":null}]}";
    }

    private static String chat(String delta) {
        return "{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1,"
                + "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":"
                + delta
                + ",\"finish_reason\":null}]}";
    }

    /** Feeds the same events to a shaped and a plain recorder; both must end up identical. */
    private static ShapedRecorder sameAsFullParse(List<String> events, boolean chat, boolean text)
            throws IOException {
        ShapedRecorder shaped = new ShapedRecorder(text);
        OpenAiJsonTest.Recorder plain = new OpenAiJsonTest.Recorder(text);
        for (String e : events) {
            byte[] bytes = e.getBytes(StandardCharsets.UTF_8);
            // The event sits in a larger, reused buffer, as the SSE parser hands it over.
            byte[] buffer = new byte[bytes.length + 16];
            System.arraycopy(bytes, 0, buffer, 0, bytes.length);
            OpenAiJson.parse(buffer, bytes.length, 1, shaped, chat);
            OpenAiJson.parse(bytes, bytes.length, 1, plain, chat);
            assertThat(shaped.content).as(e).isEqualTo(plain.content);
            assertThat(shaped.prompt).isEqualTo(plain.prompt);
            assertThat(shaped.completion).isEqualTo(plain.completion);
            assertThat(shaped.error).isEqualTo(plain.error);
        }
        return shaped;
    }

    @Test
    void aVllmStreamIsReadThroughItsShapeAfterTheFirstEvent() throws IOException {
        List<String> events = new ArrayList<>();
        events.add(vllm(" Hello", "null"));
        for (int i = 0; i < 20; i++) {
            events.add(vllm(" w" + i, "null"));
        }
        ShapedRecorder r = sameAsFullParse(events.subList(0, 1), false, true);
        byte[] learned = r.shape.prefix;
        assertThat(learned).isNotNull();
        for (String e : events.subList(1, events.size())) {
            byte[] bytes = e.getBytes(StandardCharsets.UTF_8);
            OpenAiJson.parse(bytes, bytes.length, 1, r, false);
        }
        // No full parse ran after the first event: it would have learned new arrays.
        assertThat(r.shape.prefix).isSameAs(learned);
        assertThat(r.content).hasSize(21).startsWith(" Hello", " w0").endsWith(" w19");
    }

    @Test
    void layoutsThatDifferFallBackToTheFullParseWithTheSameResults() throws IOException {
        sameAsFullParse(
                List.of(
                        vllm(" a", "null"),
                        vllm("", "null"),
                        vllm(" quote \\\" and \\\\ and \\u00e9", "null"),
                        vllm(" b", "null"),
                        vllm(" end", "\"length\""),
                        "{\"id\":\"cmpl-7\",\"object\":\"text_completion\",\"created\":1795994654,"
                                + "\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,"
                                + "\"completion_tokens\":4}}",
                        vllm(" c", "null")),
                false,
                true);
        sameAsFullParse(
                List.of(
                        chat("{\"role\":\"assistant\",\"content\":\"\"}"),
                        chat("{\"content\":\"x\"}"),
                        chat("{\"content\":\"y\"}"),
                        chat("{\"reasoning_content\":\"r\",\"content\":\"z\"}"),
                        chat("{\"content\":null}"),
                        chat("{\"content\":\"q\"}")),
                true,
                true);
        sameAsFullParse(List.of(vllm(" a", "null"), vllm(" b", "null")), false, false);
    }

    @Test
    void anErrorPayloadWithTheSamePrefixIsStillAnError() throws IOException {
        ShapedRecorder r =
                sameAsFullParse(
                        List.of(
                                vllm(" a", "null"),
                                "{\"id\":\"cmpl-7\",\"object\":\"text_completion\",\"created\":"
                                        + "1795994654,\"model\":\"m\",\"choices\":[{\"index\":0,"
                                        + "\"text\":\" b\"}],\"error\":{\"message\":\"boom\"}}"),
                        false,
                        true);
        assertThat(r.error).isEqualTo("boom");
    }

    @Test
    void aControlCharacterInTheTextFailsAsInTheFullParse() throws IOException {
        ShapedRecorder r = sameAsFullParse(List.of(vllm(" a", "null")), false, true);
        byte[] bad = vllm(" \u0001", "null").getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> OpenAiJson.parse(bad, bad.length, 1, r, false))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("control character");
    }

    @Test
    void randomTextsAndLayoutsAgreeWithTheFullParse() throws IOException {
        Random random = new Random(7);
        String[] pieces = {" w", "", "\\n", "\\\"", "é", " ", "\\u0041", "xyz"};
        String[] finishes = {"null", "null", "null", "\"stop\"", "\"length\""};
        List<String> events = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            StringBuilder text = new StringBuilder();
            for (int k = random.nextInt(3); k > 0; k--) {
                text.append(pieces[random.nextInt(pieces.length)]);
            }
            events.add(vllm(text.toString(), finishes[random.nextInt(finishes.length)]));
        }
        sameAsFullParse(events, false, true);
    }
}
