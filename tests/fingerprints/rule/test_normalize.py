import subprocess
import sys
import unicodedata
from pathlib import Path

from fingerprints.rule.normalize import normalize


def test_it_applies_nfkc_and_lower_case() -> None:
    assert normalize("ＡＢＣ１２３，（测试）！") == "abc123,(测试)!"
    assert normalize("Ⅲ期 ℃ ①") == unicodedata.normalize("NFKC", "Ⅲ期 ℃ ①").lower()


def test_it_strips_html_tags_scripts_and_entities() -> None:
    html = "<div><script>var a = 1;</script><p>你好&nbsp;&amp;<b>世界</b></p><!-- x --></div>"
    assert normalize(html) == "你好 & 世界"
    assert normalize("a < b and c > d") == "a < b and c > d"


def test_it_collapses_white_space_and_drops_control_characters() -> None:
    assert normalize("  第一段\n\n    第二段\t\u3000第三段 ") == "第一段 第二段 第三段"
    assert normalize("a \x00 b\x07c") == "a bc"
    assert normalize("") == ""


def test_features_are_identical_in_a_process_with_another_hash_seed() -> None:
    code = (
        "from fingerprints.rule import extract;"
        "f = extract('统计局：工业生产稳中有升', '国家统计局今天发布数据，工业增加值增长6.8%。');"
        "print(f.to_bytes().hex())"
    )
    from fingerprints.rule import extract

    expected = extract("统计局：工业生产稳中有升", "国家统计局今天发布数据，工业增加值增长6.8%。")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "987", "PATH": ""}, cwd=str(Path(__file__).parents[3]),
    ).stdout.strip()
    assert out == expected.to_bytes().hex()
