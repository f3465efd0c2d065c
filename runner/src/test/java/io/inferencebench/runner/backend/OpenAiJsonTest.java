package io.inferencebench.runner.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OpenAiJsonTest {

    static class Recorder implements ResponseState {
        final boolean wantText;
        final List<String> content = new ArrayList<>();
        int prompt = -2;
        int completion = -2;
        String error;
        boolean done;

        Recorder(boolean wantText) {
            this.wantText = wantText;
        }

        @Override
        public boolean wantsText() {
            return wantText;
        }

        @Override
        public void onContent(String text, long nanos) {
            content.add(text);
        }

        @Override
        public void onUsage(int promptTokens, int completionTokens) {
            prompt = promptTokens;
            completion = completionTokens;
        }

        @Override
        public void onErrorPayload(String message) {
            error = message;
        }

        @Override
        public void onDone() {
            done = true;
        }
    }

    static Recorder parse(String json, boolean chat, boolean wantText) throws IOException {
        Recorder r = new Recorder(wantText);
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        OpenAiJson.parse(bytes, bytes.length, 1, r, chat);
        return r;
    }

    @Test
    void completionChunkWithEscapesUnicodeAndUnknownFields() throws IOException {
        String json =
                "{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"created\":1700000000,"
                        + "\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\"a \\\"q\\\" \\u00e9\\n日本\","
                        + "\"logprobs\":{\"tokens\":[\"a\"],\"top\":[{\"x\":-1.5e-3}]},\"finish_reason\":null,"
                        + "\"stop_reason\":null}],\"usage\":null, \"extra\" : [true,false,null,{}] }";
        Recorder text = parse(json, false, true);
        assertThat(text.content).containsExactly("a \"q\" é\n日本");
        assertThat(text.completion).isEqualTo(-2);
        assertThat(text.error).isNull();
        Recorder noText = parse(json, false, false);
        assertThat(noText.content).hasSize(1);
    }

    @Test
    void usageOnlyChunkAndEmptyText() throws IOException {
        Recorder r =
                parse(
                        "{\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"total_tokens\":76,"
                                + "\"completion_tokens\":64,\"prompt_tokens_details\":null}}",
                        false,
                        true);
        assertThat(r.content).isEmpty();
        assertThat(r.prompt).isEqualTo(12);
        assertThat(r.completion).isEqualTo(64);
        assertThat(parse("{\"choices\":[{\"text\":\"\"}]}", false, true).content).isEmpty();
    }

    @Test
    void chatDeltasRoleOnlyContentAndReasoning() throws IOException {
        assertThat(
                        parse(
                                        "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}",
                                        true,
                                        true)
                                .content)
                .isEmpty();
        assertThat(
                        parse(
                                        "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"logprobs\":null}]}",
                                        true,
                                        true)
                                .content)
                .containsExactly("hi");
        assertThat(
                        parse(
                                        "{\"choices\":[{\"delta\":{\"reasoning_content\":\"think\"}}]}",
                                        true,
                                        true)
                                .content)
                .containsExactly("think");
        assertThat(
                        parse(
                                        "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"full\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}",
                                        true,
                                        true)
                                .content)
                .containsExactly("full");
        // A completions-style "text" is not chat content.
        assertThat(parse("{\"choices\":[{\"text\":\"x\"}]}", true, true).content).isEmpty();
    }

    @Test
    void errorsAreReported() throws IOException {
        assertThat(
                        parse(
                                        "{\"error\":{\"message\":\"boom\",\"type\":\"x\",\"code\":500}}",
                                        false,
                                        true)
                                .error)
                .isEqualTo("boom");
        assertThat(
                        parse(
                                        "{\"object\":\"error\",\"message\":\"bad model\",\"code\":400}",
                                        false,
                                        true)
                                .error)
                .isEqualTo("bad model");
        assertThat(parse("{\"error\":\"plain\"}", false, true).error).isEqualTo("plain");
        assertThat(parse("{\"choices\":[{\"text\":\"a\"}],\"error\":null}", false, true).error)
                .isNull();
    }

    @Test
    void malformedChunksAreRejected() {
        for (String bad :
                List.of(
                        "",
                        "not json",
                        "{\"choices\":[{\"text\":\"a\"}]",
                        "{\"choices\":[{\"text\":\"a}]}",
                        "{\"choices\":[{\"text\":\"a\"}]} trailing",
                        "{\"id\":\"no choices\"}",
                        "{\"choices\":{}}",
                        "{\"choices\":[{\"text\":\"a\" \"b\"}]}",
                        "[1,2]")) {
            assertThatThrownBy(() -> parse(bad, false, true))
                    .as(bad)
                    .isInstanceOf(IOException.class);
        }
    }
}
