"""Small texts written for the tests (not taken from any corpus)."""

STORY = (
    "新华社北京3月5日电 国家统计局今天发布数据，今年前两个月全国规模以上工业增加值"
    "同比增长百分之六点八，比去年全年加快零点三个百分点。统计局新闻发言人表示，工业生产"
    "稳中有升，新动能加快成长，高技术制造业增加值增长百分之十二点一。分地区看，东部地区"
    "增长百分之六点五，中部地区增长百分之七点二，西部地区增长百分之七点九。专家认为，"
    "随着减税降费政策落地见效，企业经营状况将继续改善，全年经济有望保持在合理区间运行。"
)
STORY_REPOST = (
    "（财经频道）" + STORY.replace("新华社北京3月5日电 ", "本报讯 ")
    + "责任编辑：王明。本文来源于网络，如有侵权请联系删除。"
)
STORY_CUT = STORY[: len(STORY) * 3 // 4]
OTHER = (
    "本报讯 市教育局昨日召开会议，部署今年春季学期中小学开学工作。会议要求各校做好校园"
    "安全检查，完善食堂卫生管理制度，落实课后服务，减轻学生过重课业负担。教育局负责人"
    "说，今年将新建和改扩建中小学二十所，新增学位一万五千个，缓解城区入学压力。"
)
BULLETIN_1 = (
    "沪深两市3月5日收盘：上证综指报收3012.45点，上涨0.82%，成交额2315亿元；深证成指"
    "报收9876.12点，上涨1.05%，成交额3120亿元。两市共有2650只个股上涨，1210只个股下跌。"
    "行业板块中，半导体、汽车整车涨幅居前，银行、保险板块小幅回调。"
)
BULLETIN_2 = (
    "沪深两市3月6日收盘：上证综指报收2998.10点，下跌0.48%，成交额2104亿元；深证成指"
    "报收9801.33点，下跌0.76%，成交额2987亿元。两市共有1320只个股上涨，2540只个股下跌。"
    "行业板块中，半导体、汽车整车涨幅居前，银行、保险板块小幅回调。"
)
ENGLISH = (
    "The city council voted on Tuesday to expand the bicycle lane network by forty "
    "kilometres over the next three years, after a public consultation in which most "
    "residents supported safer routes to schools. The plan will be funded from the "
    "transport budget and a regional grant, and construction starts in the spring."
)
SAMPLE_SENTENCES = [
    "我们在北京天安门广场看升旗。",
    "小明硕士毕业于中国科学院计算所，后在日本京都大学深造。",
    "他来到了网易杭研大厦，参加2024年的开发者大会。",
    "工信处女干事每月经过下属科室都要亲口交代24口交换机等技术性器件的安装工作",
    "结婚的和尚未结婚的都应该来参加，iPhone 15 Pro售价7999元。",
    STORY,
    OTHER,
    BULLETIN_1,
    ENGLISH,
]
