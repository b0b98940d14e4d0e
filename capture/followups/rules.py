"""The follow-up classifier: how the prompt a user sends after an episode reads.

Labels: `dissatisfied` (the agent's result is wrong, broken or unwelcome), `correction` (the
user redirects or amends what the agent did, without saying it failed), `continue` (go on
with the same work), `praise` (thanks or approval and nothing else), `new-task` (other work),
`neutral` (a question, an answer to the agent's question, pasted context, a harness message).

Deterministic: the first rule of `RULES` whose pattern matches the normalized prompt decides,
and its name is kept with the label so that a reader can see why. A prompt that opens with
praise is judged by what follows the praise. The rules were written against the labelled set
in tests/fixtures/followups/ (its figures are in docs/followups.md); `RULES_VERSION` changes
whenever a rule does."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["RULES", "RULES_VERSION", "FollowUp", "Label", "classify"]

RULES_VERSION = 1


class Label(StrEnum):
    DISSATISFIED = "dissatisfied"
    CORRECTION = "correction"
    CONTINUE = "continue"
    NEW_TASK = "new-task"
    PRAISE = "praise"
    NEUTRAL = "neutral"


@dataclass(frozen=True, slots=True)
class FollowUp:
    label: Label
    rule: str


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


#: (rule name, label, pattern), tried in order on the normalized prompt.
RULES: tuple[tuple[str, Label, re.Pattern[str]], ...] = (
    # what a harness or an IDE sends in the user's name, and slash commands
    ("harness-message", Label.NEUTRAL, _r(r"^<[a-z_-]+>|^\[request interrupted")),
    ("slash-command", Label.NEW_TASK, _r(r"^/[a-z][\w:-]*$")),
    # -- dissatisfied -------------------------------------------------------------------------
    ("en-anger", Label.DISSATISFIED, _r(r"\b(wtf|tf|the hell|fuck\w*|shit|damn)\b")),
    ("en-lazy", Label.DISSATISFIED, _r(r"\blazy\b|\bunn?acc?eptable\b")),
    (
        "en-you-failed",
        Label.DISSATISFIED,
        _r(r"\byou (have not|haven'?t|did not|didn'?t|missed|forgot|broke)\b"),
    ),
    ("en-redo", Label.DISSATISFIED, _r(r"^redo\b|\bredo (it|this|that|the)\b")),
    (
        "en-wrong",
        Label.DISSATISFIED,
        _r(r"^(wrong|incorrect)\b|\bwrong (about|again)\b|^\W*wrong\W|\bwas wrong\b"),
    ),
    (
        "en-still-broken",
        Label.DISSATISFIED,
        _r(
            r"\b(still|again)\b[^.?!]{0,60}\b(not|n'?t|fail\w*|broken|error\w*|wrong|missing)\b"
            r"|\b(not|n'?t)\b[^.?!]{0,40}\bstill\b"
            r"|\bfailed again\b|\bback to\b[^?!]{0,60}\binstead of\b|\bwhatever you did\b"
        ),
    ),
    (
        "en-not-working",
        Label.DISSATISFIED,
        _r(
            r"\b(is|are|was|'?s)? ?not (working|populating|catching|processing|pulling|being "
            r"returned)\b|\b(doesn'?t|does not|isn'?t|is not|aren'?t|are not) (seem to be )?"
            r"(work|working|populat\w*|match\w*)\b|\bno \w+'?s? are being returned\b"
        ),
    ),
    (
        "en-error-report",
        Label.DISSATISFIED,
        _r(
            r"^fail\b|\b(got|getting|get|see) (an |this |the )?(error|exception)\b|"
            r"\buncaught \w*error\b|\btraceback\b|\b(tests?|ci|pipeline|checks?|actions?|build|"
            r"deployment) (is |are |has |have )?(still )?(fail\w*|broken)\b|\bfailing ci\b|"
            r"a number of errors\b|\bflawed logic\b|\blogic errors?\b|\bno due to\b|"
            r"\b(is|are) failing\b|\bhas ?n'?t been\b|╭─+ (locals|traceback)|"
            r"\bnot consist[ae]nt\b|\bseems (very )?(large|wrong|off|broken)\b|\bwrong \w+"
        ),
    ),
    (
        "en-what-happened",
        Label.DISSATISFIED,
        _r(r"\bwhat (just )?happened\b|\bwhy isn'?t\b|\bare there really no\b|\bhung up\b"),
    ),
    (
        "zh-dissatisfied",
        Label.DISSATISFIED,
        _r(
            r"(并没有|还是没有|还是不|仍然不|不对|错了|不行|失败|报错|很丑|太丑|没用|坏了|"
            r"问题还在|又出错|没生效|不工作|没反应)"
        ),
    ),
    # asking for an explanation, not a change
    (
        "en-explain-only",
        Label.NEUTRAL,
        _r(r"^(please )?(do not|don'?t) (write|make|change|run)\b[^.?!]*\bjust\b"),
    ),
    # -- correction ---------------------------------------------------------------------------
    ("en-yes-but", Label.CORRECTION, _r(r"^(yes|ok|okay|sure),? but\b|\bone more time\b")),
    (
        "en-no-i-meant",
        Label.CORRECTION,
        _r(r"^(no|nope|not that)\b|\bi meant?\b|\bthat was just\b|\bcan you actually\b"),
    ),
    (
        "en-should-be",
        Label.CORRECTION,
        _r(
            r"\bshould (not|n'?t)\b|\bshould be \S+ as it is\b|\bdoes not reflect\b|"
            r"\bdo not mirror\b"
        ),
    ),
    (
        "en-instead",
        Label.CORRECTION,
        _r(r"\binstead of\b|\brather than\b|\bnot \d+\b[^.?!]*\bwhen we need\b"),
    ),
    (
        "en-dont",
        Label.CORRECTION,
        _r(
            r"^(please )?(don'?t|dont|do not|never|stop|avoid)\b|\bmake sure (to not|not to|each)"
            r"|\bmake sure to not\b|\bremove (those|the|all) [^.?!]*\b(you made|security|"
            r"backward|deprecated|depreciated)"
        ),
    ),
    ("en-why-are-we", Label.CORRECTION, _r(r"^why are (we|you)\b|\bis that necc?ess?ary\b")),
    (
        "zh-correction",
        Label.CORRECTION,
        _r(r"(而不是|不要|别再|改成|换成|不是[^，。]*而是|不仅仅|应该是|太素|也进行更新)"),
    ),
    # -- continue -----------------------------------------------------------------------------
    (
        "en-continue",
        Label.CONTINUE,
        _r(
            r"^n?(continue|contine|cont|go on|carry on|keep going|proceed|resume|next)\b|"
            r"^(ok|okay|yes|yep|yeah|sure|alright)\b[\s,.!-]*(go on|continue|proceed|do it|"
            r"all|sounds|that|please|\w+)?|^(sounds good|makes sense|let'?s proceed|do it|go "
            r"ahead|try again|start solving|let'?s go)\b|^(fully )?verify\b|^polish\b|"
            r"^(let'?s )?(proceed|continue)\b|\band continue\.?$|^sounds (good|great)\b|"
            r"\bgo on with\b|^fix (them|it|those)\b"
        ),
    ),
    ("zh-continue", Label.CONTINUE, _r(r"^(继续|好的|好|可以|行|是的|对|开始|请安装|我授权|启动)")),
    # -- praise -------------------------------------------------------------------------------
    (
        "en-praise",
        Label.PRAISE,
        _r(
            r"^(thanks?( you)?|thx|great( job| work)?|perfect|awesome|nice( work| job)?|"
            r"excellent|good job|well done|love it|amazing|brilliant)[\s.!]*$"
        ),
    ),
    ("zh-praise", Label.PRAISE, _r(r"^(谢谢|多谢|太好了|很好|完美|不错|棒)[\s。！!]*$")),
    # -- neutral: questions, answers, pasted text ----------------------------------------------
    (
        "en-answer",
        Label.NEUTRAL,
        _r(r"^([a-e]\)|\d+[a-z]?[.)]?\s|[a-e]$|all$|clear$)|^[\x21-\x7e]+\s*$"),
    ),
    (
        "en-question",
        Label.NEUTRAL,
        _r(
            r"\?\s*$|^(what|why|how|is|are|do|does|did|can i|could|will|would|should i|where|"
            r"when|which)\b|\b(do not|don'?t) (write|make|change)\b[^.?!]*\b(just|but)\b|"
            r"^(please )?(give|provide)( me)?\b"
        ),
    ),
    ("zh-question", Label.NEUTRAL, _r(r"(吗|呢|？|\?)\s*$|^请问")),
)

_PRAISE_OPENING = re.compile(
    r"^(thanks?( you)?|great|perfect|awesome|nice|excellent|good step|good)\s*[.!,:-]+\s*",
    re.IGNORECASE,
)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _normalize(text: str) -> str:
    # a control character typed into the prompt (Ctrl-C) is not part of what was said
    return " ".join(_CONTROL.sub("", text.replace("\\n", "\n")).split()).strip()


def classify(text: str) -> FollowUp:
    """The label of one follow-up prompt and the rule that gave it."""
    prompt = _normalize(text)
    if not prompt:
        return FollowUp(Label.NEUTRAL, "empty")
    opening = _PRAISE_OPENING.match(prompt)
    rest = prompt[opening.end() :] if opening else prompt
    for name, label, pattern in RULES:
        if pattern.search(rest):
            return FollowUp(label, name)
    if opening and not rest:
        return FollowUp(Label.PRAISE, "en-praise")
    return FollowUp(Label.NEW_TASK, "default-new-request")
