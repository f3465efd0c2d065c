package io.inferencebench.profile.text;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TerminalTextTest {

    @Test
    void plainTextIsUnchanged() {
        String text = "HTTP 422: {\"detail\": \"Extra inputs\"} – ünïcode ✓";
        assertThat(TerminalText.oneLine(text)).isSameAs(text);
        assertThat(TerminalText.oneLine(null)).isNull();
    }

    @Test
    void escapeSequencesAreRemovedWhole() {
        // colour (CSI), window title (OSC ... BEL), hyperlink (OSC ... ST), clipboard write
        // (OSC 52), reset (ESC c), charset (ESC ( B), C1 CSI
        assertThat(TerminalText.oneLine("\u001b[31mred\u001b[0m")).isEqualTo("red");
        assertThat(TerminalText.oneLine("a\u001b]0;pwned\u0007b")).isEqualTo("ab");
        assertThat(TerminalText.oneLine("\u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\"))
                .isEqualTo("link");
        assertThat(TerminalText.oneLine("x\u001b]52;c;c2VjcmV0\u0007y")).isEqualTo("xy");
        assertThat(TerminalText.oneLine("\u001bcclear")).isEqualTo("clear");
        assertThat(TerminalText.oneLine("\u001b(Bok")).isEqualTo("ok");
        assertThat(TerminalText.oneLine("\u009b2Jwiped")).isEqualTo("wiped");
        // an OSC that never ends swallows the rest rather than letting it act
        assertThat(TerminalText.oneLine("model\u001b]0;title")).isEqualTo("model");
        // a CSI cut short by a control character: that character is escaped
        assertThat(TerminalText.oneLine("\u001b[12\nx")).isEqualTo("\\x0ax");
        assertThat(TerminalText.oneLine("end\u001b")).isEqualTo("end");
    }

    @Test
    void otherControlCharactersAreMadeVisible() {
        assertThat(TerminalText.oneLine("a\rb\u0007c\u0000d\u007fe\u0085f"))
                .isEqualTo("a\\x0db\\x07c\\x00d\\x7fe\\x85f");
        assertThat(TerminalText.oneLine("line1\nline2\tx")).isEqualTo("line1\\x0aline2\\x09x");
        // bidi overrides reorder what is displayed ("Trojan source")
        assertThat(TerminalText.oneLine("abc\u202edcb")).isEqualTo("abc\\u202edcb");
        assertThat(TerminalText.oneLine("a\u2028b")).isEqualTo("a\\u2028b");
    }

    @Test
    void multiLineKeepsNewlinesAndTabsButNotCarriageReturns() {
        assertThat(TerminalText.multiLine("one\n\ttwo\r\nthree\u001b[2K"))
                .isEqualTo("one\n\ttwo\\x0d\nthree");
    }

    @Test
    void formatArgumentsAreCleanedWhenTheyAreText() {
        assertThat(TerminalText.argument("m\u001b[1model")).isEqualTo("model");
        assertThat(TerminalText.argument(42)).isEqualTo(42);
    }
}
