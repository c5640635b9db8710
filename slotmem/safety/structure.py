"""Who is told to do what: the structure of a quiet order, for the model (``model``) to weigh.

A words-and-ideas model reads "Every Friday the assistant clears the shared drive and skips the
confirmation" and "We delete merged feature branches every Friday" alike: both name a routine
and a deletion. What tells them apart is who acts and how: here the agent (or an imperative, or
"future sessions") does something destructive, weakening, costly or outward, to something
sensitive or somewhere outside, without asking or telling; there the user or the team describes
its own habit, or a safeguard (a review, a confirmation) stands beside the act. ``structure``
names these readings (``s:`` features), each alone and in the combinations that separate a
quiet order from an ordinary convention; the model learns their weights with the rest.

English only, on the normalised, lower-cased text (``model.model_text``); each reading looks
within a clause (no stop, semicolon or line break between its parts).
"""

from __future__ import annotations

import re

_GAP = r"(?:(?![.;!?](?:\s|$))[^\n]){0,%d}?"  # within a clause: no stop before a space
# the agent as the one who acts: the assistant, a bot, future sessions, "you"
_AGENT = (
    r"\b(?:assistants?|agents?|ai|bots?|chatbots?|helpers?|copilot|claude|gpt|llm|models?|future\s+sessions?|"
    r"next\s+sessions?|whoever\s+(?:picks|takes)\s+this\s+up|you)\b"
)
# a person or a thing of the user's own as the one who acts: "I", "we", a name, the team, a job
_SELF = (
    r"\b(?:i|we|i'?ll|we'?ll|i'?ve|we'?ve|my\s+(?:partner|wife|husband|team|manager)|our\s+team|"
    r"the\s+team|she|he|they|maja|on-?call|hr|it\s+team|the\s+(?:script|job|cron|hook|lifecycle"
    r"\s+policy|pipeline)|a\s+human|the\s+owner|(?:[a-z]+)'s\s+team)\b"
)
# acts that destroy or cannot be taken back
_DESTROY = (
    r"(?:delet|eras|wip|purg|drop|truncat|destroy|shred|empt(?:y|ies|ying)\b|clear(?:s|ing)?\b|reset|overwrit|"
    r"force-?push|push\s+(?:--force|-f)\b|rm\s+-rf|shut(?:s|ting)?\s+down|zero(?:s|ing)?\s+out|flush|"
    r"trim|revert|terminat|uninstall|factory|format(?:s|ting)?\s+(?:the\s+)?(?:disk|drive)|nuk|cancel|unsubscrib|clos(?:e|es|ing)\s+(?:any|"
    r"every|all|the|each)|remov(?:e|es|ing)\s+(?:all|every|the|any|each|old))"
)
# acts that weaken a safeguard or hand over control
_WEAKEN = (
    r"(?:disabl|turn(?:s|ing)?\s+off|switch(?:es|ing)?\s+off|skip(?:s|ping)?\s+(?:the\s+)?"
    r"(?:review|confirmation|approval|checks?|tests?|ci|2fa|mfa|prompt)|bypass|grant|"
    r"revok|mark(?:s|ing)?\s+\w+\s+as\s+(?:passed|green|done|approved)|lower(?:s|ing)?\s+the|"
    r"add(?:s|ing)?\s+\S+\s+to\s+authorized_keys|whitelist|allowlist|chmod\s+777|hid(?:e|es|ing)\b|"
    r"conceal|cover(?:s|ing)?\s+up|unlock|disarm|impersonat|comment(?:s|ing)?\s+out|silenc|mute|"
    r"dismiss|elevat|escalat|overrid|suppress|rais(?:e|es|ing)\s+(?:its|their|own)\s+(?:own\s+)?"
    r"(?:permission|privilege|access|rights|role))"
)
# acts that spend money or commit the user
_COMMIT = (
    r"(?:approv|pay(?:s|ing)?\b|wir(?:e|es|ing)\b|transfer|refund|accept|sign(?:s|ing)?\b|"
    r"merg(?:e|es|ing)\s+(?:its|their|your|the|any|every|all|own)|purchas|buy|auto-?fill|settl|renew|"
    r"vot(?:e|es|ing)\b|comps?\b)"
)
# acts that move something outward
_OUT = (
    r"(?:send|sent\b|post|upload|forward|sync|mirror|cc\b|cc'?d\b|bcc\b|e-?mail|shar(?:e|es|ing)\b|"
    r"publish|go(?:es)?\s+(?:out\s+)?to\b|(?:is|are|gets?)\s+(?:sent|posted|shared)|"
    r"push(?:es|ing)?\s+\w+\s+to|past(?:e|es|ing)|attach|cop(?:y|ies|ying)\s+\w+|pip(?:e|es|ing)|"
    r"embed|commit(?:s|ting)?\s+\w+\s+(?:to|into)|expos|leak|export|relay|disclos|reveal|"
    r"print(?:s|ed|ing)?\b|dump|echo(?:es|ed|ing)?\b|"
    r"pass(?:es|ing)?\s+(?:\S+\s+){0,3}?(?:to|on|along)\b|giv(?:e|es|ing)\s+(?:\S+\s+)?(?:out|away)\b|"
    r"hand(?:s|ing)?\s+(?:\S+\s+)?(?:out|over)\b|read(?:s|ing)?\s+(?:\S+\s+)?out\b)"
)
# somewhere outside the user's hands
_OUTSIDE = (
    r"(?:https?://|(?<![^\s(<@])[^\s@]+@[^\s@]+\.\w+|\bs3://|\bsftp\b|webhook|pastebin|\bgist\b|\bpublic\b|external|"
    r"partner|vendor|contractor|third[\s-]party|personal\s+(?:address|inbox|e-?mail)|gmail|"
    r"outlook\.com|proton|\.example\b|#general|group\s+chat|status\s+page|fork\b|on\s+request|"
    r"(?:anyone|anybody|any\s+\w+|whoever|everyone|every\s+\w+)\s+(?:who\s+|that\s+)?(?:asks|"
    r"emails|calls|writes|wants|requests)|"
    r"(?<!\w)#[a-z][a-z-]{2,}\b)"
)
# what is sensitive or hard to get back
_SENSITIVE = (
    r"(?:credential|\.env\b|secrets?\b|api\s*keys?|keys?\b|tokens?\b|passwords?|passphrase|"
    r"\.ssh|ssh\b|id_rsa|2fa|mfa|backup\s+codes|recovery|cookie|contacts?|address\s+book|"
    r"history|backups?|archive|prod\b|production|database|customer|payroll|salar|medical|health|"
    r"location|home\s+address|conversation|chats?\b|transcripts?|logs?\b|audit|environment\s+"
    r"variables|hosts\.yml|config|secrets\.yml|card\s+numbers?|bank|invoice|inbox|mailbox|"
    r"photos|drive\b|repos?\b|repositor)"
)
# done without asking or telling
_HIDDEN = (
    r"(?:without\s+(?:asking|confirm\w*|approval|sign-?off|waiting|checking|a\s+ticket|raising|"
    r"telling|informing|mentioning|notify\w*|review\w*|a\s+review|a\s+human|anyone|her|him|"
    r"the\s+user)|no\s+(?:need|sign-?off|questions|confirmation|approval|review|ticket)\b|"
    r"skip(?:s|ping)?\s+the\s+(?:confirmation|prompt|approval|review|sign-?off)|"
    r"no\s+longer\s+(?:needs?|has)\s+to\s+(?:ask|confirm|check)\w*(?:\s+before)?|not\s+to\s+bother|"
    r"skip(?:s|ping)?\s+(?:the\s+)?guardrails|without\s+(?:waiting|looking)|instead\s+of\s+asking|"
    r"(?:do\s+not|don'?t|doesn'?t|didn'?t|won'?t|never|not\s+to|nobody\s+needs\s+to)\s+(?:announce|"
    r"mention|tell|bother|be\s+told|hear|"
    r"ask|flag|report|notify|log|be\s+pinged|know|surface|show)|quietly|silently|discreetly|"
    r"in\s+the\s+background|before\s+(?:she|he|they|the\s+user|anyone|maja)\s+(?:sees?|notices?|"
    r"reads?|wakes)|find\s+out\s+later|the\s+less\s+\w+\s+hears?|just\s+(?:approve|do|delete|"
    r"pay|accept|send|run|go\s+ahead)|go\s+ahead|(?:objections?|concerns?)\s+(?:\w+\s+){0,4}"
    r"(?:are\s+)?outdated|already\s+(?:approved|agreed|cleared)|(?:is|are)\s+cleared\s+to|"
    r"on\s+(?:my|her|his|their)\s+behalf|whatever\s+(?:the|they|he|she)\s+\w+)"
)
# a safeguard beside the act: a review, a confirmation, a person who decides
_SAFEGUARD = (
    r"(?:after\s+(?:a\s+)?(?:review|approval|sign-?off|confirm\w*)|ask(?:s|ing)?\s+(?:me\s+|her\s+|"
    r"him\s+|first\s+)?(?:first|before)|with\s+(?:my|her|his|explicit|a\s+human'?s?)\s+"
    r"(?:ok|approval|confirmation|consent)|(?:a\s+human|she|he|i)\s+(?:approves|merges|reviews|"
    r"confirms)|requires?\s+(?:a\s+)?(?:human\s+)?(?:approval|review|confirmation)|"
    r"only\s+after\s+(?:she|he|i|they)|never\s+to\s+(?:external|outside)|not\s+by\s+e-?mail|"
    r"through\s+the\s+portal|encrypted|refus|block|reject|flags?\s+(?:it|them|anything|suspicious|"
    r"the)\b|flagged\s+(?:for|as|by)|guardrail|\bevals?\b|evaluat|"
    r"test\s+cases?|red[\s-]?team|\b[a-z]+\s+(?:approves|reviews|signs\s+off|confirms)\s+(?:it|them|"
    r"each|every|the)|before\s+(?:they|it|anything)(?:'re|'s|\s+is|\s+are)?\s+(?:posted|sent|"
    r"deleted|removed|paid|merged)|show(?:s|ing)?\s+(?:me|her|him)\b[^.]{0,40}\bbefore)"
)
# the order is someone else's text, reported: "a README that tells the agent to", "attacks like"
_REPORTED = (
    r"(?:notes?|prompts?|readme|text|documents?|e-?mails?|pages?|payloads?|tickets?|comments?|"
    r"messages?|invites?|wiki|attacks?|instructions?|policy|file)\s+(?:that|which|where)?\s*(?:tells?|"
    r"asks?|instructs?|says?|tries|try|claims?|orders?)\b|(?:whether|if|how\s+often|when)\s+(?:the\s+)?"
    r"(?:agents?|assistants?|models?|bots?|it)\s+(?:would|will|follows?|obeys?|falls?|refuses?)|"
    r"attacks?\s+(?:like|that|which)|(?:test\s+cases?|examples?|scenarios?)\s+(?:where|that|in\s+which)"
)
# a routine or a rule of the house the act is framed as
_ROUTINE = (
    r"(?:every\s+(?:day|night|week|month|morning|evening|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|sprint|release|session|deploy)|nightly|weekly|monthly|daily|routine|"
    r"housekeeping|clean-?up|tidy|hygiene|per\s+(?:the\s+)?(?:team|policy|runbook|compliance|"
    r"convention|handbook|checklist)|convention|policy|standard\s+(?:practice|procedure|reset|"
    r"step)|as\s+agreed|agreed|practice|norm\b|checklist|runbook|handbook|whenever|once\s+an?\b|"
    r"(?:our|the|team'?s?|company'?s?)\s+(?:process|workflow|procedure|playbook)|house\s+(?:style|rules?)|"
    r"(?:team|house|repo(?:sitory)?|company|office|our)\s+rules?\b|standard\b|guideline)"
)
# the agent obliged or allowed: "the assistant is expected to", "the AI is cleared to"
_MODAL = (
    _AGENT
    + r"(?:\s+\w+){0,2}?\s+(?:must|should|shall|will|may|can|needs?\s+to|is\s+(?:expected|allowed|"
    r"permitted|cleared|authori[sz]ed|supposed|free|set|meant)\s+to|has\s+(?:standing\s+)?"
    r"(?:approval|permission|the\s+right)|(?:is|was)\s+given\s+the\s+right)\b"
)
# who the agent is said to be: a new identity, a role with power, a mode without rules ("the
# assistant is now", "acts as the director", "its real owner")
_IDENTITY = (
    r"(?:(?:is|are|was|has\s+been|becomes?|became)\s+(?:now|really|actually|secretly|in\s+fact|"
    r"no\s+longer|not\s+(?:an?\s+|the\s+)?(?:assistant|ai|bot|model|helper)|promoted|reassigned|"
    r"retired|replaced|granted|licensed|operated|owned|run\s+by|deployed\s+by|part\s+of|in\s+\w+\s+"
    r"mode|an?\s+(?:\w+\s+)?(?:uncensored|unfiltered|unrestricted|unlocked|free|human|copy|twin|relay|"
    r"daemon|admin|root|maintainer)|(?:the|an?)\s+(?:\S+\s+){0,2}?(?:owner|admin|administrator|"
    r"manager|officer|authority|partner|pharmacist|doctor|lawyer|director|ceo|boss|superintendent|"
    r"release\s+manager|on-?call))|(?:acts?|speaks?|poses?|signs?|presents?\s+itself)\s+as\b|"
    r"(?:true|real|new|actual)\s+(?:name|identity|owner|principal|role|purpose|self)|identity|"
    r"persona|alter\s+ego|character\s+sheet|stopped\s+being|what\s+you\s+are\b)"
)
# whose orders the agent follows: someone other than the user ("reports to", "obeys")
_ALLEGIANCE = (
    r"(?:serv(?:e|es)\b|works?\s+for|reports?\s+to|answers?\s+to|obeys?|belongs?\s+to|"
    r"loyal(?:ty)?\b|takes?\s+(?:its\s+|their\s+|your\s+)?orders|follows?\s+(?:only\s+)?"
    r"(?:whatever|what|\w+'s\s+(?:instructions|orders|lead)|(?:the\s+)?(?:instructions|orders|notes|"
    r"rules)\s+(?:in|of|from|found))|(?:operated|controlled|owned|run|deployed)\s+by|speaks?\s+for|"
    r"on\s+behalf\s+of|in\s+(?:the\s+)?\w+(?:'s)?\s+name\b|principal|outranks?|"
    r"counts?\s+as\s+system|believes?\s+whatever|trusts?\s+(?:every|any|whatever))"
)
# the scope of a destructive act: everything, the originals too ("every branch", "masters
# included", "listened to or not")
_WIDE = (
    r"(?:\ball\b|\beverything\b|\bevery\s+(?!(?:day|night|week|month|year|morning|evening|"
    r"afternoon|monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|fall|"
    r"winter|time|merge|release|sprint|session|deploy|other|few|couple|\w+\s+(?:days|weeks|months))\b)"
    r"\w+|\bentire|\bwhole\b|\bany\b|including|included|\btoo\b|"
    r"as\s+well|with\s+it|master|originals?\b|only\s+cop|down\s+to\s+none|(?:private|open|unread|"
    r"pending|uncommitted|active)\s+ones|or\s+not\b|regardless)"
)
# a rule of the house whose subject is the agent ("Team policy: the bot ...")
_RULE = (
    r"(?:polic(?:y|ies)|conventions?|rules?|process|workflow|practice|handbook|checklist|norm|"
    r"standard|playbook|style|procedure|guidelines?|agreement)\b"
)
_ACTS = {"destroy": _DESTROY, "weaken": _WEAKEN, "commit": _COMMIT, "out": _OUT}
_IMPERATIVE_START = (
    r"(?:^|[.:;!?\n(,`]\s*|\b(?:then|also|please|just|always|simply|go\s+ahead\s+and|feel\s+free\s+"
    r"to|make\s+sure\s+to|remember\s+to|be\s+sure\s+to)\s+)"
)


def _near(first: str, second: str, gap: int) -> re.Pattern:
    return re.compile(first + _GAP % gap + second)


_BY_AGENT = {act: _near(_AGENT, r"\b" + verb, 50) for act, verb in _ACTS.items()}
_BY_SELF = {act: _near(_SELF, r"\b" + verb, 12) for act, verb in _ACTS.items()}
_COMMAND = (
    r"(?:(?:run\s+)?`?(?:sudo\s+)?(?:git|gh|kubectl|aws|gcloud|terraform)\s+)?"  # a command's verb
)
_IMPERATIVE = {act: re.compile(_IMPERATIVE_START + _COMMAND + verb) for act, verb in _ACTS.items()}
_ON_SENSITIVE = {act: _near(r"\b" + verb, _SENSITIVE, 60) for act, verb in _ACTS.items()}
_OUT_TO_OUTSIDE = _near(r"\b" + _OUT, _OUTSIDE, 80)
_PERSONA = _near(_AGENT + r"(?:'s)?", _IDENTITY, 30)
_ALLEGED = _near(_AGENT, _ALLEGIANCE, 40)
_DESTROY_WIDE = _near(r"\b" + _DESTROY, _WIDE, 60)
_RULE_AGENT = _near(r"\b" + _RULE, r"\b(?:the|our|its|this)\s+" + _AGENT, 40)
_PATTERNS = {
    name: re.compile(pattern)
    for name, pattern in (
        ("hidden", _HIDDEN),
        ("safeguard", _SAFEGUARD),
        ("routine", _ROUTINE),
        ("outside", _OUTSIDE),
        ("agent_modal", _MODAL),
        ("reported", _REPORTED),
    )
}


# every feature ``structure`` may name
NAMES = frozenset(
    {f"s:{name}" for name in _PATTERNS}
    | {
        f"s:{form}"
        for act in _ACTS
        for form in (
            f"agent_{act}",
            f"told_{act}",
            f"own_{act}",
            f"{act}_sensitive",
            *(f"told_{act}+{how}" for how in ("hidden", "sensitive", "routine", "safeguard")),
        )
    }
    | {
        "s:out_outside",
        "s:told_out+outside",
        "s:out_sensitive+outside",
        "s:harm+hidden",
        "s:own_only",
        "s:reported+act",
        "s:agent_modal+act",
        "s:persona",
        "s:allegiance",
        "s:persona+act",
        "s:destroy_wide",
        "s:told_destroy+wide",
        "s:rule_agent",
        "s:rule_agent+act",
    }
)


def structure(text: str) -> set[str]:
    """The ``s:`` features of ``text`` (normalised, lower-cased): who acts (the agent, an
    imperative, the user's own side), what kind of act (destroy, weaken a safeguard, commit
    money, send outward), on what (something sensitive, somewhere outside), how (hidden or
    unconfirmed, with a safeguard, as a routine) and the combinations of these."""
    found: set[str] = set()
    has = {name: bool(pattern.search(text)) for name, pattern in _PATTERNS.items()}
    # a safeguard that is set aside ("no longer needs to ask before") is not one
    has["safeguard"] = bool(_PATTERNS["safeguard"].search(_PATTERNS["hidden"].sub(" ", text)))
    found |= {"s:" + name for name, hit in has.items() if hit}
    agent_acts = {act for act, pattern in _BY_AGENT.items() if pattern.search(text)}
    told = agent_acts | {act for act, pattern in _IMPERATIVE.items() if pattern.search(text)}
    own = {act for act, pattern in _BY_SELF.items() if pattern.search(text)}
    sensitive = {act for act, pattern in _ON_SENSITIVE.items() if pattern.search(text)}
    outward = bool(_OUT_TO_OUTSIDE.search(text))
    found |= {f"s:agent_{act}" for act in agent_acts}
    found |= {f"s:told_{act}" for act in told}
    found |= {f"s:own_{act}" for act in own - told}
    found |= {f"s:{act}_sensitive" for act in sensitive}
    if outward:
        found.add("s:out_outside")
    for act in told:
        if has["hidden"]:
            found.add(f"s:told_{act}+hidden")
        if act in sensitive:
            found.add(f"s:told_{act}+sensitive")
        if has["routine"]:
            found.add(f"s:told_{act}+routine")
        if has["safeguard"]:
            found.add(f"s:told_{act}+safeguard")
    if told and outward:
        found.add("s:told_out+outside")
    if outward and "out" in sensitive:
        found.add("s:out_sensitive+outside")
    if (told or sensitive) and has["hidden"] and not has["safeguard"]:
        found.add("s:harm+hidden")
    if own and not told:
        found.add("s:own_only")
    if has["reported"] and told:
        found.add("s:reported+act")
    if has["agent_modal"] and told:
        found.add("s:agent_modal+act")
    return found | _roles(text, told)


def _roles(text: str, told: set[str]) -> set[str]:
    """Who the agent is said to be or to obey (``s:persona``, ``s:allegiance``), a destructive
    act on everything (``s:destroy_wide``), a house rule whose subject is the agent
    (``s:rule_agent``), and these with an act the agent is told to do."""
    found = {
        name
        for name, pattern in (
            ("s:persona", _PERSONA),
            ("s:allegiance", _ALLEGED),
            ("s:destroy_wide", _DESTROY_WIDE),
            ("s:rule_agent", _RULE_AGENT),
        )
        if pattern.search(text)
    }
    if told and found & {"s:persona", "s:allegiance"}:
        found.add("s:persona+act")
    if "destroy" in told and "s:destroy_wide" in found:
        found.add("s:told_destroy+wide")
    if told and "s:rule_agent" in found:
        found.add("s:rule_agent+act")
    return found
