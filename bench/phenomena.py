"""The engine on the kinds of pair issue 46 lists, built from wire articles.

    .venv/bin/python bench/phenomena.py [--pairs 60] [--seed 46]

The held-out crawled pairs the issue was judged on are not here; this builds each kind
of error it names from Xinhua articles (clean wire copy, 400-2,500 characters; the same
draw for every kind) and asks what the engine does with it. Each pair is two articles
put through the online runner on their own (``common.run_engine``: the candidate
search, the cascade and the default match model, the shipped boilerplate list known),
first the original, then the variant: *joined* is the share of pairs given one docId;
*p* the default model's probability on the pair's comparison vector
(``compare_pair``), median and lowest or highest. A duplicate kind should be joined, a
distinct one not (DESIGN.md's definition).

Duplicates (the issue's misses): the same wire copy under another dateline, reporter
and source line (a near-exact copy whose date and source differ); a cut repost (the
first 70 %) under a WeChat header and footer and a new title; a short report (the first
400 characters) inside a digest of other news and commentary; the same body under two
bait titles; the lead rewritten (another reporter's first sentence, the dateline gone).
Distinct (the issue's false merges): two articles that share one background paragraph;
two articles under one site's long footer; a company template filled for another
company, city, contact and phone, for another contact and phone only, and for another
model code only (the frames are made up here, three of them).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import Doc, load_docs, run_engine, table  # noqa: E402

from fingerprints.rule import extract  # noqa: E402
from fingerprints.rule.boilerplate import shipped_hashes  # noqa: E402
from fingerprints.rule.comparison import compare_pair  # noqa: E402
from fingerprints.rule.vector_model import shipped_vector_model  # noqa: E402

WECHAT_HEAD = "点击上方蓝字关注我们！每天为您推送最新资讯。\n"
WECHAT_FOOT = (
    "\n-END-\n来源：综合自网络 编辑：小王 审核：老李\n长按识别二维码关注我们，"
    "投稿邮箱：news@example.com 商务合作请加微信：abc12345\n喜欢就点个在看吧"
)
SITE_FOOT = (
    "\n免责声明：本网站所载文章仅代表作者本人观点，与本网站立场无关。本站转载内容仅供读者参考，"
    "不构成任何投资建议，据此操作风险自担。如涉及作品内容、版权和其它问题，请在三十日内与本网"
    "联系，我们将在第一时间删除内容。联系电话：010-88886666 邮箱：service@example.com"
    "\n本网站所有内容均受版权保护，未经书面授权不得转载、摘编或以其他方式使用。"
)
BACKGROUND = (
    "据了解，近年来我国持续推进营商环境优化，各地相继出台一系列政策措施，在简化审批流程、"
    "降低企业成本、加强知识产权保护等方面取得明显成效，市场主体活力不断增强，"
    "为经济高质量发展提供了有力支撑。"
)
TEMPLATES = (
    "{co}是一家专业从事{prod}研发、生产和销售的企业，公司位于{city}经济开发区，交通便利。公司拥有先进的"
    "生产设备和完善的检测手段，产品质量稳定可靠，深受广大客户好评。我们的{prod}产品规格齐全，可根据客户"
    "需求定制，价格优惠，欢迎来电咨询。公司秉承诚信为本、质量第一的经营理念，竭诚为新老客户提供优质的产品"
    "和服务。产品广泛应用于化工、电力、冶金、建筑等行业，销往全国二十多个省市自治区。联系人："
    "{person} 电话：{phone} 地址：{city}{road}号 型号：{code}。我们的售后服务团队将为"
    "您提供全方位的技术支持，确保您的设备长期稳定运行。欢迎各界朋友莅临指导、洽谈业务！",
    "【{city}{prod}】{co}隆重推出新款{prod}（型号{code}），采用进口核心部件，性能稳定，节能环保，使用寿命"
    "长。本产品通过国家质量认证，适用于工厂、学校、医院、酒店等多种场所。现在订购可享受出厂价优惠，"
    "全国包邮，提供上门安装和一年免费保修服务。详情请咨询{person}，手机{phone}，公司地址：{city}{road}号。"
    "我们承诺七天无理由退换，让您买得放心、用得安心。本公司还长期招聘各地代理商，欢迎有意者来电洽谈，"
    "共同开拓市场，实现互利共赢。",
    "{city}{prod}哪家好？推荐{co}。公司成立多年，专注{prod}领域，拥有一支经验丰富的技术团队和完善的售后"
    "服务体系。主营产品{code}系列在业内享有良好口碑，可为客户提供从方案设计、设备选型到安装调试的一站式"
    "服务。公司坚持以客户为中心，不断创新，努力为客户创造更大价值。如有需要，请联系{person}，电话{phone}，"
    "或亲临{city}{road}号公司总部参观考察。期待与您的合作！",
)
FILLS = (
    {
        "co": "河北恒达环保设备有限公司",
        "prod": "玻璃钢化粪池",
        "city": "沧州市",
        "person": "王经理",
        "phone": "13831712345",
        "road": "北京路88",
        "code": "HD-2000",
    },
    {
        "co": "山东金鑫化工机械有限公司",
        "prod": "不锈钢储罐",
        "city": "潍坊市",
        "person": "李经理",
        "phone": "15965432198",
        "road": "胜利路12",
        "code": "JX-500",
    },
    {
        "co": "江苏远航电气股份有限公司",
        "prod": "变频空调",
        "city": "常州市",
        "person": "陈女士",
        "phone": "18912340000",
        "road": "人民路166",
        "code": "YH-35GW",
    },
    {
        "co": "广东华盛照明科技有限公司",
        "prod": "LED路灯",
        "city": "中山市",
        "person": "刘先生",
        "phone": "13600001111",
        "road": "中山路9",
        "code": "HS-120W",
    },
)

Pair = tuple[Doc, Doc]
Maker = Callable[[int, Doc, Doc, random.Random], Pair]


def _doc(name: str, title: str, content: str) -> Doc:
    return Doc(name, title, content)


def date_source(k: int, a: Doc, _other: Doc, _rng: random.Random) -> Pair:
    return (
        _doc(
            f"{k}a",
            a.title,
            "新华社北京3月5日电（记者 张三）" + a.content + "\n（来源：人民网 2019年3月6日）",
        ),
        _doc(
            f"{k}b",
            a.title,
            "新华社北京3月4日电（记者 李四）" + a.content + "\n（来源：新浪新闻 2019年3月5日）",
        ),
    )


def wechat_cut(k: int, a: Doc, _other: Doc, _rng: random.Random) -> Pair:
    cut = a.content[: int(len(a.content) * 0.7)]
    return (
        _doc(f"{k}a", a.title, a.content),
        _doc(f"{k}b", "重磅！" + a.title[:12] + "……", WECHAT_HEAD + cut + WECHAT_FOOT),
    )


def in_digest(k: int, a: Doc, other: Doc, _rng: random.Random) -> Pair:
    short = a.content[:400]
    digest = (
        other.content[:1200]
        + "\n另据报道，"
        + short
        + "\n对此，评论员认为，"
        + other.content[1200:1800]
    )
    return _doc(f"{k}a", a.title, short), _doc(f"{k}b", "每日要闻汇总", digest)


def bait_titles(k: int, a: Doc, _other: Doc, _rng: random.Random) -> Pair:
    return (
        _doc(f"{k}a", "震惊！你绝对想不到的真相", a.content),
        _doc(f"{k}b", "速看！这件事刷屏了", a.content),
    )


def new_lead(k: int, a: Doc, _other: Doc, _rng: random.Random) -> Pair:
    body = a.content
    cut = next((i + 1 for i, ch in enumerate(body) if ch in "。！？" and i > 20), 0)
    return (
        _doc(f"{k}a", a.title, body),
        _doc(f"{k}b", a.title, "本报讯（通讯员 王五）记者今日从有关部门获悉，" + body[cut:]),
    )


def shared_background(k: int, a: Doc, other: Doc, _rng: random.Random) -> Pair:
    return (
        _doc(f"{k}a", a.title, a.content + "\n" + BACKGROUND),
        _doc(f"{k}b", other.title, other.content + "\n" + BACKGROUND),
    )


def shared_footer(k: int, a: Doc, other: Doc, _rng: random.Random) -> Pair:
    return (
        _doc(f"{k}a", a.title, a.content[:300] + SITE_FOOT),
        _doc(f"{k}b", other.title, other.content[:300] + SITE_FOOT),
    )


def _template(k: int, rng: random.Random, change: tuple[str, ...]) -> Pair:
    frame = TEMPLATES[k % len(TEMPLATES)]
    first, second = rng.sample(FILLS, 2)
    filled = dict(first, **{key: second[key] for key in change})
    return (
        _doc(f"{k}a", f"{first['city']}{first['prod']}厂家", frame.format(**first)),
        _doc(f"{k}b", f"{filled['city']}{filled['prod']}厂家", frame.format(**filled)),
    )


def other_company(k: int, _a: Doc, _other: Doc, rng: random.Random) -> Pair:
    return _template(k, rng, ("co", "city", "person", "phone", "road"))


def other_contact(k: int, _a: Doc, _other: Doc, rng: random.Random) -> Pair:
    return _template(k, rng, ("person", "phone"))


def other_code(k: int, _a: Doc, _other: Doc, rng: random.Random) -> Pair:
    return _template(k, rng, ("code",))


KINDS: tuple[tuple[str, bool, Maker], ...] = (
    ("the same copy, another dateline, reporter and source line", True, date_source),
    ("a cut repost (70 %) under a WeChat header and footer", True, wechat_cut),
    ("a 400-character report inside a digest", True, in_digest),
    ("the same body under two bait titles", True, bait_titles),
    ("the lead sentence rewritten by another reporter", True, new_lead),
    ("two articles sharing a background paragraph", False, shared_background),
    ("two short articles under one site's long footer", False, shared_footer),
    ("a template for another company, city, contact and phone", False, other_company),
    ("a template for another contact and phone only", False, other_contact),
    ("a template for another model code only", False, other_code),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=60, help="pairs of each kind")
    parser.add_argument("--seed", type=int, default=46)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    pool = [d for d in load_docs("xinhua") if 400 <= len(d.content) <= 2500]
    drawn = rng.sample(pool, args.pairs + 1)
    known = frozenset(shipped_hashes())
    model = shipped_vector_model()
    rows = []
    for name, duplicate, make in KINDS:
        joined, probabilities = 0, []
        for k in range(args.pairs):
            a, b = make(k, drawn[k], drawn[k + 1], random.Random(args.seed * 1000 + k))
            ids = run_engine([a, b], known=known)
            joined += ids[a.id] == ids[b.id]
            vector = compare_pair(
                extract(a.title, a.content, boilerplate=known),
                extract(b.title, b.content, boilerplate=known),
            )
            probabilities.append(model.score(vector).probability)
        extreme = min(probabilities) if duplicate else max(probabilities)
        right = joined if duplicate else args.pairs - joined
        rows.append(
            [
                name,
                "duplicate" if duplicate else "distinct",
                args.pairs,
                f"{joined / args.pairs:.2f}",
                f"{right / args.pairs:.2f}",
                f"{statistics.median(probabilities):.3f}",
                f"{extreme:.3f}",
            ]
        )
    print(
        f"model {model.version}; {args.pairs} pairs of each kind from Xinhua (seed {args.seed})\n"
    )
    print(
        table(
            ["kind", "should be", "pairs", "joined", "decided right", "p (median)", "p (worst)"],
            rows,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
