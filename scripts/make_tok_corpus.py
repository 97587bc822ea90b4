#!/usr/bin/env python3
"""Writes data/tok/corpus.jsonl: the varied text corpus the tokenizer goldens pin (one {"text": ...}
per line). Deterministic: hand-written lines plus generated ones from a fixed xorshift generator, so
re-running gives byte-identical output on any Python 3.

What it covers, and why: every place where an exact BPE tokenizer tends to diverge from HF
tokenizers -- scripts with and without spaces, combining marks, emoji sequences (ZWJ, skin tones,
flags, keycaps), code, whitespace runs of every length and kind (the pre-tokenizer regexes treat
'\\s+(?!\\S)' and '\\s*[\\r\\n]+' specially, Gemma has added tokens for runs of '\\n', '\\t' and
U+2581), digit runs (\\p{N}{1,3} splitting), contractions (case-insensitive in Llama-3/cl100k,
attached in o200k), the text of every tokenizer's special tokens with spaces around them (lstrip /
rstrip of Phi-4), Gemma's HTML added tokens, very long words, single characters, control
characters, private-use and unassigned code points (byte fallback).

Usage: python3 scripts/make_tok_corpus.py [OUT]   (default: data/tok/corpus.jsonl of this clone)
"""
import json
import os
import sys


class XorShift:
    """xorshift64*: a generator whose sequence never depends on the Python version."""

    def __init__(self, seed):
        self.s = seed & 0xFFFFFFFFFFFFFFFF or 1

    def next(self):
        s = self.s
        s ^= (s >> 12)
        s ^= (s << 25) & 0xFFFFFFFFFFFFFFFF
        s ^= (s >> 27)
        self.s = s
        return (s * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF

    def below(self, n):
        return (self.next() >> 11) % n

    def pick(self, seq):
        return seq[self.below(len(seq))]


def basics():
    return [
        "", " ", "a", "A", "Hello world", "Hello, world!", "hello\n", "\nhello", " hello", "hello ",
        "The quick brown fox jumps over the lazy dog.",
        "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG!",
        "tHe QuIcK bRoWn FoX", "CamelCaseIdentifierWithHTTPServer and snake_case_name_2",
        "e-mail: someone@example.com, url: https://example.org/a/b?c=d&e=f#g",
        "Mr. O'Neil's dog-friendly café — naïve coöperation, résumé, façade.",
        "“Smart quotes” ‘single’ «guillemets» „German“ 「かぎ括弧」 『二重』",
        "Ellipsis… en–dash — em—dash − minus ± × ÷ ≠ ≤ ≥ ∞ ∑ ∫ √ ∂",
        "¡Hola! ¿Qué tal? Ça va très bien, merci. Grüße aus München. Žluťoučký kůň úpěl ďábelské ódy.",
        "İstanbul ıI iİ ß ẞ ǅ ǈ ǋ ﬁ ﬂ Å Å Ω Ω",
    ]


def scripts():
    return [
        "日本語のテキストです。東京は日本の首都であり、人口は約1400万人です。",
        "ディレクトリ内の全てのテキストファイルを読み込み、出現回数が最も多い上位5単語を返すPythonプログラムを開発してください。",
        "ｶﾀｶﾅ半角とカタカナ全角、ひらがな、漢字、ＡＢＣ全角英字、１２３全角数字。",
        "私は「吾輩は猫である」を読みました。名前はまだ無い。",
        "我们今天去公园散步，天气非常好。人工智能正在改变世界。",
        "繁體中文：這是一個測試句子，包含標點符號。",
        "한국어 문장입니다. 서울은 대한민국의 수도입니다. 안녕하세요!",
        "العربية: مرحبا بالعالم. هذه جملة تجريبية تحتوي على أرقام ١٢٣ و 456.",
        "עברית: שלום עולם. זהו משפט בדיקה עם ניקוד: שָׁלוֹם.",
        "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ สวัสดีครับ ยินดีต้อนรับ",
        "हिन्दी: नमस्ते दुनिया। यह एक परीक्षण वाक्य है। क्षत्रिय द्विज",
        "Русский: Съешь же ещё этих мягких французских булок, да выпей чаю.",
        "Ελληνικά: Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. άέήίόύώ ΐΰ",
        "Українська: Чуєш їх, доцю, га? Кумедна ж ти, прощайся без ґольфів!",
        "Tiếng Việt: Tôi yêu Việt Nam. Đây là một câu thử nghiệm có dấu.",
        "ქართული ენა; Հայերեն լեզու; አማርኛ ቋንቋ; ᏣᎳᎩ; ᠮᠣᠩᠭᠣᠯ",
        "தமிழ் மொழி; తెలుగు భాష; ಕನ್ನಡ; മലയാളം; বাংলা ভাষা; ગુજરાતી; ਪੰਜਾਬੀ; සිංහල",
        "ລາວ; ខ្មែរ; မြန်မာဘာသာ; བོད་ཡིག; ދިވެހި",
        "Mixed: English日本語中文한국어العربيةעבריתไทยहिन्दीРусскийΕλληνικά",
        "Bidi: abc שלום def مرحبا 123 \u200fRTL mark\u200e LTR mark \u202aembedding\u202c",
        "Math: 𝔸𝔹ℂ 𝐀𝐁𝐂 𝒜ℬ𝒞 𝟘𝟙𝟚 ∀x∈ℝ: x²≥0",
        "Ancient: 𐌰𐌱𐌲 𓀀𓀁 𒀀𒀁 𐎀𐎁",
        "Emoticons ASCII :-) ;-) :D <3 ¯\\_(ツ)_/¯ (╯°□°）╯︵ ┻━┻",
        "Box drawing: ┌─┬─┐ │ │ │ ├─┼─┤ └─┴─┘ ░▒▓█",
    ]


def combining():
    return [
        "e\u0301", "E\u0301\u0302\u0303", "\u0301", "\u0301\u0301\u0301", " \u0301", "\u0301abc",
        "n\u0303o\u0308", "Z\u0351\u0352\u0353\u0354\u0355a\u0356\u0357l\u0358\u0359g\u035a\u035bo",
        "\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af",  # Hangul conjoining jamo
        "\u0915\u094d\u0937 \u0924\u094d\u0930",  # Devanagari virama clusters
        "\u05e9\u05c1\u05b8", "\u0627\u064e\u0644\u0652", "a\u20dd b\u20e3",
        "\u3099\u309a か\u3099", "\u0e01\u0e34\u0e4a",
    ]


def emoji():
    return [
        "👍", "👍🏽", "👍🏿👍🏻", "👨‍👩‍👧‍👦", "🧑🏿‍💻", "🏳️‍🌈", "🏴‍☠️", "🇯🇵🇺🇸🇫🇷", "🇯", "1️⃣ #️⃣ *️⃣",
        "©️ ®️ ™️ ❤️ ♥ ☺️", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "👩‍❤️‍💋‍👨", "Great job! 🎉🎉🎉 Let's go 🚀",
        "😀😃😄😁😆😅🤣😂🙂🙃😉😊😇🥰😍🤩", "text🙂text", "\u200d", "a\u200db", "\ufe0f", "x\ufe0fy",
        "🫠🫡🫥🪿🩷", "😀 " * 20,
    ]


def code():
    return [
        "def fib(n: int) -> int:\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
        "import os\nfrom collections import Counter\n\n\nclass A(object):\n\tdef __init__(self):\n\t\tself.x = {'a': [1, 2, 3]}\n",
        "#include <vector>\ntemplate <typename T>\nstd::vector<T> f(const std::vector<T>& v) {\n  return {v.rbegin(), v.rend()};\n}\n",
        "int main(int argc, char** argv) { for (int i = 0; i < argc; ++i) printf(\"%s\\n\", argv[i]); return 0; }",
        '{"name": "overhead", "version": "0.1.0", "nested": {"list": [1, 2.5, -3e10, true, null], "s": "a\\"b"}}',
        "<!DOCTYPE html>\n<html>\n<head><title>Test</title></head>\n<body>\n  <div class=\"x\"><p>Hello &amp; welcome</p></div>\n</body>\n</html>",
        "#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.txt; do\n  echo \"$f\" | tr 'a-z' 'A-Z' >> out.log 2>&1\ndone\n",
        "SELECT id, COUNT(*) AS n FROM t WHERE x >= 10 AND y <> 'a' GROUP BY id ORDER BY n DESC;",
        "const re = /^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+)@example\\.com$/i;",
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint('x')\n```\n",
        "\\begin{equation} E = mc^2 \\quad \\frac{a}{b} \\sum_{i=0}^{n} x_i \\end{equation}",
        "fn main() { let v: Vec<u8> = vec![0xff; 16]; println!(\"{:?}\", v); }",
        "a=1;b=2;c=a+b;d=a*b-c/2%3**4;e=a<<2|b>>1&c^d;",
        "    indented four\n        indented eight\n\t\ttabbed\n  \t mixed\n",
        "// comment\n/* block\n * comment\n */\n# shell comment\n-- sql comment\n<!-- html comment -->",
    ]


def whitespace():
    out = []
    for n in list(range(1, 34)) + [40, 64, 100, 257]:
        out.append(" " * n)
    for n in [1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 40]:
        out.append("\t" * n)
    for n in list(range(1, 33)) + [40, 100]:
        out.append("\n" * n)
    out += [
        "\r\n", "\r\n\r\n", "\r\n" * 5, "\r", "\r\r\r", "\n\r", " \r\n ", "a\r\nb\r\n\r\nc",
        " \t\n", "\t \n \t", " \n \n \n ", "a  b", "a   b    c", "a\n\nb", "a\n\n\nb", "a \n b",
        "a\t\tb", "a \tb", "  leading", "trailing  ", "  both  ", "\n\nleading newlines", "trailing newlines\n\n",
        "word \n\n  word", "x" + " " * 10 + "y", "x" + "\n" * 10 + "y", "x" + "\t" * 10 + "y",
        "\u3000", "全角\u3000スペース\u3000\u3000です", "\u00a0", "a\u00a0b", "non\u00a0breaking\u00a0\u00a0space",
        "\u2028", "line\u2028sep\u2029para", "\u0085", "next\u0085line", "\x0b", "\x0c", "a\x0bb\x0cc",
        "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a", "\u202f\u205f\u180e",
        "\u200b", "zero\u200bwidth\u200b\u200bspace", "\ufeff", "\ufeffBOM at start",
        " " * 3 + "\n" + " " * 3, "\n \n", " \n", "\n ", "  \n\n  \n", "end with space ", "end with tab\t",
        "   def f():\n      pass\n", "\n\n\n\nHello\n\n\n\n",
    ]
    return out


def numbers():
    out = []
    digits = "1234567890" * 5
    for n in range(1, 41):
        out.append(digits[:n])
    for n in [1, 2, 3, 4, 5, 6, 7, 10, 13]:
        out.append("abc" + "7" * n + "def")
        out.append(" " + "0" * n)
    out += [
        "3.14159", "0.5", ".5", "5.", "-42", "+7", "1,000,000", "1,234,567.89", "1 000 000", "1_000_000",
        "1e10", "6.022e23", "-1.5E-7", "0x1F 0xDEADBEEF 0b1010 0o777", "v1.2.3", "192.168.0.1", "2024-06-30T12:34:56Z",
        "+81-3-1234-5678", "$1,299.99", "¥1,000", "€5", "50%", "100km/h", "3rd 21st 2nd 11th",
        "１２３４５", "١٢٣٤٥", "۱۲۳", "१२३४५", "๑๒๓", "²³¹ ⁴⁵", "½ ¾ ⅓ ⅞", "Ⅰ Ⅱ Ⅻ ⅷ", "①②③ ⑩",
        "第3章 第12節 2024年6月30日 午後3時45分", "一二三四五六七八九十百千万億",
        "pi=3.14159265358979323846264338327950288419716939937510",
        "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
    ]
    return out


def contractions():
    return [
        "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'Ll", "'d", "'D",
        "it's", "IT'S", "It'S", "don't", "DON'T", "we're", "WE'RE", "We'Re", "I've", "I'VE", "I'm", "I'M",
        "you'll", "YOU'LL", "You'Ll", "he'd", "HE'D", "John's car", "JOHN'S CAR", "the dogs' bones",
        "y'all", "rock 'n' roll", "'''", "''", "'", " 's", " 'll", "'sup", "'tis", "o'clock", "ma'am",
        "don’t (curly)", "it`s", "l'homme d'affaires", "'s's's", "abc'defg", "'S'T'RE'VE'M'LL'D",
        "東京's weather", "123's", "😀's", "\n's", "' s", "'x",
    ]


SPECIAL = {
    "llama": ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>",
              "<|eom_id|>", "<|python_tag|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_0|>",
              "<|reserved_special_token_247|>"],
    "gemma": ["<bos>", "<eos>", "<pad>", "<unk>", "<start_of_turn>", "<end_of_turn>", "<mask>", "[@BOS@]", "<2mass>",
              "<unused0>", "<unused98>", "[multimodal]", "<start_of_image>", "<end_of_image>", "<image_soft_token>"],
    "phi": ["<|im_start|>", "<|im_end|>", "<|im_sep|>", "<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>",
            "<|fim_suffix|>", "<|endofprompt|>", "<|dummy_0|>", "<|dummy_85|>"],
}


def special_text():
    out = []
    for group in SPECIAL.values():
        for s in group:
            out += [s, " " + s, s + " ", " " + s + " ", "  " + s + "  ", "\n" + s + "\n", "a" + s + "b",
                    "x " + s + " y", s + s, "\t" + s + "\n\n"]
    out += [
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
        "<|begin_of_text|><|begin_of_text|>double bos",
        "<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\nHi<end_of_turn>\n",
        "<bos><bos>double bos",
        "<|im_start|>system<|im_sep|>You are helpful.<|im_end|><|im_start|>user<|im_sep|>Hi<|im_end|><|im_start|>assistant<|im_sep|>",
        "<|im_start|> user <|im_sep|> spaced <|im_end|> ",
        "  <|endoftext|>  text  <|endoftext|>  ",
        "<|begin_of_text|", "|begin_of_text|>", "<|eot_id", "<|EOT_ID|>", "<BOS>", "< bos>", "<start_of_turn", "<|im_start",
        "<|<|eot_id|>|>", "<<bos>>", "<|im_start|><|im_start|>", "<s>", "</s>", "<|endoftext|><|endoftext|><|endoftext|>",
        "text<|eot_id|>text<|eot_id|>text", "日本語<|im_sep|>日本語", "😀<bos>😀", "\n\n<|im_start|>\n\n",
    ]
    return out


def gemma_added():
    out = []
    for n in [2, 3, 5, 16, 31, 32, 40]:
        out.append("\u2581" * n)
        out.append("a" + "\u2581" * n + "b")
    for n in [1, 2, 3, 31, 32, 33]:
        out.append("x" + "\n" * n + "y")
        out.append("x" + "\t" * n + "y")
        out.append("x" + " " * n + "y")
    out += [
        "<table><caption>Cap</caption><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody><tfoot></tfoot></table>",
        "<h1>Title</h1><h2>Sub</h2><h3>x</h3><h4>y</h4><h5>z</h5><h6>w</h6>",
        "<blockquote><strong>bold</strong> <em>em</em> <b>b</b> <i>i</i> <u>u</u> <s>s</s> x<sub>2</sub> x<sup>2</sup> <code>c</code></blockquote>",
        "<a href=\"x\">link</a><html><body><img src=\"a.png\"></img><span>s</span><bbox>1</bbox><ul><li>item</li></ul><div>d</div><iframe></iframe><footer>f</footer></body></html>",
        "< table>", "<table >", "<TABLE>", "<tr><td>", "</td></tr>\n\t<tr>", " <td> ", "\n<table>\n",
        "\u2581", " \u2581 ", "\u2581\u2581 \u2581\u2581", "▁hello▁world",
    ]
    return out


def long_words(rng):
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [
        "supercalifragilisticexpialidocious" * 3,
        "pneumonoultramicroscopicsilicovolcanoconiosis",
        "Donaudampfschifffahrtselektrizitätenhauptbetriebswerkbauunterbeamtengesellschaft",
        "x" * 300, "a" * 1000, "ab" * 200, "abc" * 150, "=" * 200, "-" * 100, "." * 64, "_" * 80, "!" * 50,
        "9" * 500, "あ" * 300, "漢" * 200, "😀" * 100, "\u0301" * 100,
        "".join(rng.pick(letters) for _ in range(500)),
        "".join(rng.pick(letters.upper() + letters) for _ in range(400)),
        "0123456789abcdef" * 32,
        "https://example.com/" + "/".join("segment%d" % i for i in range(60)) + "?q=" + "z" * 100,
        "日本語の長い文章で区切りのないテキストが続きます" * 20,
        "a" + " a" * 300,
        "word " * 200,
    ]


def singles():
    out = [chr(c) for c in range(0x21, 0x7F)]
    out += [chr(c) for c in range(0x00, 0x20) if chr(c) not in "\t\n\r "]
    out += ["\x7f", "\u0080", "\u009f", "\u00ff", "\u0100", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffef", "\ufffd",
            "\ufffe", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff", "é", "ß", "あ", "漢", "한", "ก", "€", "▁", "Ġ", "Ċ", "ĉ"]
    return out


def unusual_code_points():
    return [
        "\ue000", "\uf8ff", "\ue000\ue001\ue002", "private \ue123 use", "\U000f0000", "\U0010fffd", "\U000fffff",
        "\u0378", "\u0379", "\u0380\u0381", "\u08ff", "\U0001fbff", "\U0002fa1f", "\U000e0001", "\U000e0020\U000e007f",
        "unassigned \u0378\u0379 between", "\U00030000 \U0003134a", "\U000e0100", "\ufdd0\ufdef", "\U0001fffe\U0001ffff",
        "\u00ad soft\u00adhyphen", "\u2060\u2061\u2062\u2063\u2064", "\u061c\u2066\u2067\u2068\u2069",
        "\x00", "a\x00b", "\x00\x00\x00", "\x1b[31mred\x1b[0m", "\x07\x08", "Ġhello Ċ ĉ ğ", "<0x0A> <0xFF>",
    ]


def recent_unicode():
    """Letters, digits and marks assigned in Unicode 13-16: a regex engine or table of an older
    Unicode version classes them as unassigned (not \\p{L} / \\p{N}), which splits words differently."""
    samples = [
        "\U00010E80\U00010E81\U00010E82",  # Yezidi letters (13.0)
        "\U0001FBF0\U0001FBF1\U0001FBF2\U0001FBF3",  # segmented digits, Nd (13.0)
        "\U00030000\U00030001\U0003134A",  # CJK Ext G (13.0)
        "\U0001E290\U0001E291\U0001E292",  # Toto (14.0)
        "\U00016A70\U00016A71 \U00016AC0\U00016AC1",  # Tangsa letters, digits (14.0)
        "\u0870\u0871\u0872 \u0898",  # Arabic Extended-B (14.0)
        "\U00011F04\U00011F05 \U00011F50\U00011F51",  # Kawi letters, digits (15.0)
        "\U0001E4D0\U0001E4D1 \U0001E4F0\U0001E4F1",  # Nag Mundari letters, digits (15.0)
        "\U00031350\U00031351",  # CJK Ext H (15.0)
        "\U0001E030\U0001E031",  # Cyrillic modifier letters, Lm (15.0)
        "\U0002EBF0\U0002EBF1",  # CJK Ext I (15.1)
        "\U000105C0\U000105C1 \U00011BC0\U00011BC1 \U00016D40\U00016D41 \U00010D50\U00010D51",  # Unicode 16
        "\U0001E5D0\U0001E5D1 \U00011BF0\U00011BF1",  # Ol Onal letters, Sunuwar digits (16.0)
    ]
    out = []
    for t in samples:
        out += [t, "a" + t + "b", " " + t, "1" + t + "2", t + "'s"]
    return out


def case_and_space_classes():
    """Case classes the o200k regex distinguishes (Lu/Lt/Lm/Lo/Ll/M), Unicode case folding inside
    the case-insensitive contraction group, and characters some engines count as \\s and others not."""
    return [
        "\u01c5emal \u01c8ubljana \u01cbjegos", "HTTPServer iPhone McDonald's eBay's XMLHttpRequest",
        "\u02b0\u02b1 a\u02b0b \u30fc\u30fc\u30a2\u30fc", "\u00aa\u00ba Se\u00f1or\u00aa", "\u1d2c\u1d2d\u1d43",
        "\u0130stanbul's \u0130I\u0131", "ABC\u0301def GHI\u0308j", "\u1f88\u1f89 \u1fbc \u1e9e\u00df",
        "it'\u017f", "'\u017f", "IT'\u017f", "'\u017fT", "'\u212a", "we'\u212al", "'L\u212a", "'\u0130", "'\u0131",
        "a\x1cb", "a\x1c b", "\x1d\x1e\x1f", "x\x1f\x1f  y", "a\u180eb", "a \u180e b", "a\u200b b", "a \u2028\u2029 b",
        "a\u0085\u0085b", "  \u0085  ", "a\u00a0\u00a0 b", "\u3000\u3000x", "x \u3000", "\u2007\u202f1",
    ]


def random_mixes(rng):
    pool = (list("abcXYZ019 _-.,'\"!?") + [" ", " ", "  ", "\n", "\n\n", "\t", "\r\n", "'s", "'LL", "\u00a0", "\u3000"] +
            list("あア漢한ก中ß") + ["é", "e\u0301", "👍", "👍🏽", "👨‍👩‍👧", "🇯🇵", "\ue000", "\u0378", "\u2581", "\u200d"] +
            ["<bos>", "<|eot_id|>", "<|im_start|>", "<|endoftext|>", "<td>", "123", "4567", "1,000"])
    out = []
    for i in range(60):
        n = 1 + rng.below(40 if i < 40 else 200)
        out.append("".join(rng.pick(pool) for _ in range(n)))
    return out


def build():
    rng = XorShift(0x6F7665726865ad)
    lines = []
    for part in (basics(), scripts(), combining(), emoji(), code(), whitespace(), numbers(), contractions(),
                 special_text(), gemma_added(), long_words(rng), singles(), unusual_code_points(), recent_unicode(),
                 case_and_space_classes(), random_mixes(rng)):
        lines += part
    seen = set()
    unique = []
    for t in lines:  # keep the first occurrence: each line should test something
        if t not in seen:
            seen.add(t)
            unique.append(t)
    return unique


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "data", "tok", "corpus.jsonl")
    lines = build()
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for t in lines:
            # ensure_ascii=False keeps the file readable; json escapes controls, so one text = one line.
            f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
    print("make_tok_corpus: %d lines -> %s" % (len(lines), out))


if __name__ == "__main__":
    main()
