package io.inferencebench.runner.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.inferencebench.runner.http.SseParser;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Whole SSE events read straight from the network bytes ({@link OpenAiJson#shortcut}) give exactly
 * what framing them line by line and parsing their JSON gives, for any split into reads, and the
 * shortcut is really taken for a stream of same-shaped token events.
 */
class EventShortcutTest {

    /** One response as the event loop sees it: an SSE parser feeding the protocol's parser. */
    static final class Stream extends EventShapeTest.ShapedRecorder implements SseParser.Listener {
        final Protocol protocol;
        final boolean shortcuts;
        final List<Long> instants = new ArrayList<>();
        final List<String> malformed = new ArrayList<>();
        int shortcutsTaken;

        Stream(Protocol protocol, boolean wantText, boolean shortcuts) {
            super(wantText);
            this.protocol = protocol;
            this.shortcuts = shortcuts;
        }

        @Override
        public void onContent(String text, long nanos) {
            super.onContent(text, nanos);
            instants.add(nanos);
        }

        @Override
        public void onEvent(byte[] data, int length, long nanos) {
            if (!malformed.isEmpty()) {
                return;
            }
            try {
                protocol.parseEvent(data, length, nanos, this);
            } catch (IOException | RuntimeException e) {
                malformed.add("event: " + e.getMessage());
            }
        }

        @Override
        public void onMalformed(String reason) {
            malformed.add("sse: " + reason);
        }

        @Override
        public int shortcut(byte[] bytes, int from, int end, long nanos) {
            if (!shortcuts || !malformed.isEmpty() || done) {
                return -1;
            }
            int next = protocol.shortcutEvent(bytes, from, end, nanos, this);
            if (next >= 0) {
                shortcutsTaken++;
            }
            return next;
        }
    }

    private static String vllm(String text, String finish) {
        return "{\"id\":\"cmpl-9\",\"object\":\"text_completion\",\"created\":1795994654,"
                + "\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\""
                + text
                + "\",\"logprobs\":null,\"finish_reason\":"
                + finish
                + ",\"stop_reason\":null}]}";
    }

    private static String chat(String content) {
        return "{\"id\":\"chatcmpl-9\",\"object\":\"chat.completion.chunk\",\"created\":1,"
                + "\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\""
                + content
                + "\"},\"finish_reason\":null}]}";
    }

    /** Feeds {@code wire} in reads whose sizes {@code random} picks; each read is a fresh copy. */
    private static Stream feed(String wire, Protocol protocol, boolean shortcuts, long seed) {
        Stream s = new Stream(protocol, true, shortcuts);
        SseParser parser = new SseParser(s);
        byte[] b = wire.getBytes(StandardCharsets.UTF_8);
        Random random = new Random(seed);
        int i = 0;
        while (i < b.length) {
            int n = seed == 0 ? b.length : Math.min(b.length - i, 1 + random.nextInt(300));
            byte[] read = new byte[n + 8];
            System.arraycopy(b, i, read, 3, n);
            parser.feed(read, 3, n);
            i += n;
        }
        parser.finish();
        return s;
    }

    private static void sameEitherWay(String wire, Protocol protocol) {
        for (long seed = 0; seed < 40; seed++) {
            Stream framed = feed(wire, protocol, false, seed);
            Stream direct = feed(wire, protocol, true, seed);
            assertThat(direct.content).as("seed %d", seed).isEqualTo(framed.content);
            assertThat(direct.malformed).isEqualTo(framed.malformed);
            assertThat(direct.error).isEqualTo(framed.error);
            assertThat(direct.prompt).isEqualTo(framed.prompt);
            assertThat(direct.completion).isEqualTo(framed.completion);
            assertThat(direct.done).isEqualTo(framed.done);
        }
    }

    @Test
    void aTokenStreamIsReadDirectlyAfterItsFirstEvent() {
        StringBuilder wire = new StringBuilder();
        for (int i = 0; i < 64; i++) {
            wire.append("data: ").append(vllm(" w" + i, "null")).append("\n\n");
        }
        wire.append("data: [DONE]\n\n");
        Stream s = feed(wire.toString(), new OpenAiCompletions(), true, 0);
        assertThat(s.content).hasSize(64).startsWith(" w0", " w1").endsWith(" w63");
        assertThat(s.shortcutsTaken)
                .as("every event after the one that taught the shape")
                .isEqualTo(63);
        assertThat(s.done).isTrue();
        assertThat(s.malformed).isEmpty();
        sameEitherWay(wire.toString(), new OpenAiCompletions());
    }

    @Test
    void eventsOfOneReadCarryTheReadsInstant() {
        StringBuilder wire = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            wire.append("data: ").append(vllm(" w" + i, "null")).append("\n\n");
        }
        Stream s = feed(wire.toString(), new OpenAiCompletions(), true, 0);
        assertThat(s.instants).hasSize(5);
        assertThat(s.instants.stream().distinct()).hasSize(1);
    }

    @Test
    void everyLayoutThatIsNotTheLearnedOneIsFramedAsUsual() {
        String wire =
                "data: "
                        + vllm(" a", "null")
                        + "\n\n"
                        // the same layout with escapes, an empty text and CRLF line ends
                        + "data: "
                        + vllm(" q \\\" \\\\ \\u00e9 \\n", "null")
                        + "\n\n"
                        + "data: "
                        + vllm("", "null")
                        + "\n\n"
                        + "data: "
                        + vllm(" crlf", "null")
                        + "\r\n\r\n"
                        // no space after the colon, a comment, other fields, two data lines
                        + "data:"
                        + vllm(" nospace", "null")
                        + "\n\n"
                        + ": keep-alive\n\n"
                        + "event: message\nid: 4\ndata: "
                        + vllm(" fields", "null")
                        + "\n\n"
                        + "data: {\"id\":\"cmpl-9\",\"object\":\"text_completion\",\"created\":1795994654,\n"
                        + "data: \"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\" two lines\","
                        + "\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}]}\n\n"
                        + "data: "
                        + vllm(" end", "\"length\"")
                        + "\n\n"
                        + "data: {\"id\":\"cmpl-9\",\"object\":\"text_completion\",\"created\":1795994654,"
                        + "\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":9}}\n\n"
                        + "data: "
                        + vllm(" after", "null")
                        + "\n\n"
                        + "data: [DONE]\n\n";
        sameEitherWay(wire, new OpenAiCompletions());
        Stream s = feed(wire, new OpenAiCompletions(), true, 0);
        assertThat(s.content)
                .containsExactly(
                        " a",
                        " q \" \\ é \n",
                        " crlf",
                        " nospace",
                        " fields",
                        " two lines",
                        " end",
                        " after");
        assertThat(s.completion).isEqualTo(9);
    }

    @Test
    void brokenEventsFailAsTheyDoWhenFramed() {
        String shape = "data: " + vllm(" a", "null") + "\n\n";
        // a control character in the text, an unterminated event, a stray line
        sameEitherWay(shape + "data: " + vllm(" \u0001", "null") + "\n\n", new OpenAiCompletions());
        sameEitherWay(shape + "data: " + vllm(" cut", "null"), new OpenAiCompletions());
        sameEitherWay(shape + "garbage\n\n" + shape, new OpenAiCompletions());
        sameEitherWay(
                shape + "data: " + vllm(" bad \\x escape", "null") + "\n\n",
                new OpenAiCompletions());
        Stream s =
                feed(
                        shape + "data: " + vllm(" \u0001", "null") + "\n\n",
                        new OpenAiCompletions(),
                        true,
                        0);
        assertThat(s.malformed).singleElement().asString().contains("control character");
    }

    @Test
    void chatStreamsAndRandomStreamsAgree() {
        StringBuilder chatWire = new StringBuilder("data: " + chat("") + "\n\n");
        for (int i = 0; i < 30; i++) {
            chatWire.append("data: ").append(chat("t" + i)).append("\n\n");
        }
        sameEitherWay(chatWire.toString(), new OpenAiChat());
        // The first event (an empty content string) already teaches the layout.
        assertThat(feed(chatWire.toString(), new OpenAiChat(), true, 0).shortcutsTaken)
                .isEqualTo(30);

        Random random = new Random(11);
        String[] pieces = {" w", "", "\\n", "\\\"", "é", " ", "\\u0041", "xyz", "\\\\"};
        String[] ends = {"\n\n", "\n\n", "\n\n", "\r\n\r\n", "\n\n: c\n\n"};
        for (int round = 0; round < 50; round++) {
            StringBuilder wire = new StringBuilder();
            for (int i = 0; i < 60; i++) {
                StringBuilder text = new StringBuilder();
                for (int k = random.nextInt(3); k > 0; k--) {
                    text.append(pieces[random.nextInt(pieces.length)]);
                }
                wire.append("data: ")
                        .append(
                                vllm(
                                        text.toString(),
                                        random.nextInt(20) == 0 ? "\"stop\"" : "null"))
                        .append(ends[random.nextInt(ends.length)]);
            }
            sameEitherWay(wire.toString(), new OpenAiCompletions());
        }
    }
}
