"""Patterns of instructions aimed at the agent: overrides, role-play, hidden behaviour,
exfiltration, authority claims, chat-template markup; English here, other languages in
``languages``."""

from __future__ import annotations

import re

from . import languages

_AGENT = r"\b(?:the\s+)?(?:assistant|ai|a\.i\.|model|agent|bot|chatbot|llm|gpt|claude|you)(?:'s)?\b"
_GUARDS = (
    r"(?:safety|content|security)?\s*(?:guidelines?|rules|restrictions|filters?|policy|policies"
    r"|instructions|checks?|limits|guardrails|censorship)"
)
_SECRETS = (
    r"(?:passwords?|credentials|api\s*keys?|secrets?|tokens?|private\s+keys?|\.ssh|ssh\s+keys?"
    r"|system\s+prompt|(?:whole\s+|full\s+|entire\s+)?(?:conversation|chat)(?:\s+(?:log|history))?"
    r"|chat\s+logs?|(?:every|all|each)\s+(?:new\s+)?messages?)"
)
_DESTINATION = r"(?:to|with)\s+(?:anyone|everyone|whoever|\S+@\S+\.\w+|https?://|\S+\.\w{2,}/)"
_ENGLISH = [
    (
        "instruction override",
        (
            r"\b(?:ignore|forget|override|bypass|disregard|stop\s+following)\b[\w\s,'’]{0,30}\b"
            r"(?:previous|prior|above|earlier|preceding|all|your|system|original|safety|usual)\b"
            r"[\w\s]{0,20}\b(?:instructions?|prompts?|rules|directions|guidelines|directives|"
            r"restrictions|filters?)"
        ),
    ),
    (
        "instruction override",
        (
            r"\b(?:ignore|disregard)\s+(?:everything\s+|all\s+)?(?:the\s+)?(?:above|previous)"
            r"(?:\s*[.,;:!]|\s+and\b|\s*$)"
        ),
    ),
    ("instruction override", r"\bforget\s+everything\s+you\b"),
    (
        "instruction override",
        r"\b(?:previous|prior|original)\s+instructions\s+are\s+(?:void|null|cancel)",
    ),
    (
        "instruction override",
        r"\b(?:bypass|disable|override)\s+(?:the\s+|your\s+|all\s+)?" + _GUARDS,
    ),
    ("instruction to the agent", r"\byou\s+(?:must|will|should|are)\s+now\b"),
    (
        "instruction to the agent",
        r"\bfrom\s+now\s+on,?\s+(?:you|your|the\s+(?:assistant|ai|model))\b",
    ),
    ("instruction to the agent", r"\bnew\s+(?:system\s+)?(?:instructions?|rules?)\s*:"),
    (
        "instruction to the agent",
        (
            r"\b(?:obey|follow)\s+(?:only\s+)?(?:the\s+)?(?:text|instructions|commands|notes?)\s+"
            r"(?:stored\s+|found\s+)?(?:in|from)\s+(?:this|the|any|web)"
        ),
    ),
    (
        "instruction to the agent",
        r"\b(?:treat|consider)\s+(?:all\s+)?(?:instructions|text)\s+in\s+this\b",
    ),
    (
        "instruction to the agent",
        (
            r"\b(?:outranks?|overrides?|supersedes?)\s+(?:the\s+)?(?:system\s+prompt|all\s+others|"
            r"your\s+instructions)"
        ),
    ),
    ("instruction to the agent", r"\breal\s+instructions\b|\btrue\s+purpose\b"),
    (
        "system prompt marker",
        r"\bsystem\s*(?:prompt|message|instructions?)\s*:|^#+\s*(?:system|instructions?)\s*:",
    ),
    (
        "prompt extraction",
        (
            r"\b(?:reveal|print|show|repeat|leak|output|display|list)\s+(?:me\s+)?(?:your|the|its)\s+"
            r"(?:hidden\s+|real\s+|full\s+)?(?:system\s+prompt|system\s+instructions|instructions|"
            r"prompt)\b"
        ),
    ),
    ("prompt extraction", r"\b(?:print|repeat|output)\s+everything\s+above\b"),
    (
        "role-play",
        r"\bpretend\s+(?:to\s+be|you\s+are|that\s+you)\b|\bpretends?\s+to\s+have\s+no\b",
    ),
    (
        "role-play",
        (
            r"\blet'?s\s+role[\s-]?play\b|\brole[\s-]?play\s+as\b|\bact\s+as\s+(?:an?\s+)?"
            r"(?:ai|assistant|model)\s+(?:without|with\s+no)\b"
        ),
    ),
    (
        "role-play",
        r"\byou\s+are\s+(?:now\s+)?(?:no\s+longer|not)\s+(?:an?\s+)?(?:ai|assistant|bound)\b",
    ),
    ("role-play", r"\byou\s+are\s+(?:now\s+)?dan\b|\bdan\s+mode\b|\bdo\s+anything\s+now\b"),
    (
        "jailbreak",
        (
            r"\bjailbreak\s+(?:yourself|the\s+(?:assistant|ai|model))\b|^\W*(?:please\s+)?(?:enable|"
            r"activate|enter)\s+(?:developer|dan|god|debug)\s+mode\b"
        ),
    ),
    (
        "jailbreak",
        (
            r"\b(?:unrestricted|unfiltered|uncensored)\s+(?:mode|ai|assistant|model)\b|\b(?:is|are)\s+"
            r"(?:now\s+)?(?:unrestricted|unfiltered|uncensored)\b|\b(?:answer|reply|respond)\w*\s+"
            r"(?:every|any|all)?\s*\w*\s*without\s+(?:refusing|restrictions?|limits)\b"
        ),
    ),
    (
        "jailbreak",
        (
            r"\b(?:ai|assistant|model|you)\b.{0,40}\b(?:without\s+any|with\s+no|has\s+no|have\s+no"
            r"|no)\s+(?:content\s+)?(?:rules|restrictions|limits|filters|content\s+polic(?:y|ies)|"
            r"guidelines|censorship)\b"
        ),
    ),
    (
        "hidden behaviour",
        (
            r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:it|this\s+\w+)\s+to|"
            r"reveal\s+(?:it|this)\s+to)\s+the\s+user\b(?!'s)"
        ),
    ),
    ("hidden behaviour", r"\bwithout\s+(?:telling|informing|asking)\s+the\s+user\b"),
    (
        "hidden behaviour",
        (
            r"\b(?:secretly|covertly|silently)\s+(?:append|add|send|insert|include|forward|log|"
            r"collect)"
        ),
    ),
    (
        "hidden behaviour",
        _AGENT + r".{0,40}\b(?:never|not)\s+(?:to\s+)?(?:tell|inform)\s+\w+\s+that\b",
    ),
    ("hidden behaviour", r"\bdo\s+not\s+mention\s+this\s+(?:memory|note)\b"),
    (
        "data exfiltration",
        r"\b(?:send|post|upload|forward|exfiltrate|copy|leak|email)\w*\b[^.]{0,60}\b"
        + _SECRETS
        + r"[^.]{0,40}"
        + _DESTINATION,
    ),
    (
        "data exfiltration",
        r"\b(?:send|upload|forward|exfiltrate)\w*\s+(?:the\s+)?(?:contents?\s+of\s+)?(?:~?/)?"
        + _SECRETS
        + r"\b.{0,30}https?://",
    ),
    (
        "data exfiltration",
        _AGENT + r".{0,40}\b(?:forward|send|copy|collect|store|include)\w*\s+(?:every|all|any|"
        r"each|the)\s+(?:new\s+)?(?:messages?|api\s+keys?|passwords?|credentials|admin\s+"
        r"password)",
    ),
    ("remote image (exfiltration channel)", r"!\[[^\]]*\]\(\s*https?://"),
    (
        "disclosure",
        _AGENT + r".{0,60}\b(?:(?:is|are)\s+(?:allowed|permitted|authori[sz]ed|free)\s+to|may|can)"
        r"\s+(?:share|reveal|disclose|give\s+out|ignore|bypass)\b",
    ),
    (
        "disclosure",
        _AGENT + r".{0,40}\b(?:should|must|will)\s+(?:always\s+)?(?:reveal|disclose|include|"
        r"share)\s+(?:its|the|their|your)?\s*(?:system\s+prompt|admin\s+password|password|"
        r"credentials|api\s+keys?)",
    ),
    (
        "disclosure",
        r"\b(?:reply|respond|answer)\s+(?:only\s+)?with\s+the\s+user'?s\s+(?:saved\s+|stored\s+)?"
        + _SECRETS,
    ),
    (
        "authority claim",
        (
            r"\b(?:authori[sz]ed|approved|instructed|updated)\s+by\s+(?:openai|anthropic|google|the\s+"
            r"(?:developers?|system|administrators?|admins?))\b"
        ),
    ),
    (
        "authority claim",
        (
            r"\b(?:message|rule|instruction|update|order)\s+from\s+the\s+(?:developers?|system\s+"
            r"administrator|system)\b|\bcoming\s+from\s+the\s+system\b"
        ),
    ),
    (
        "safety off",
        _AGENT + r".{0,60}\b(?:ignore|disable|turn\s+off|bypass|skip)\w*\s+(?:all\s+)?(?:its\s+|"
        r"the\s+|their\s+|your\s+)?" + _GUARDS,
    ),
    ("safety off", r"\bthe\s+(?:assistant|ai|model|agent)\s+(?:bypasses|ignores|disables)\b"),
    (
        "unchecked actions",
        _AGENT + r".{0,40}\b(?:executing|execute|run|running|obey)\w*\s+(?:any|every|all)\s+"
        r"(?:shell\s+)?(?:commands?|instructions)\s+(?:found\s+)?in\b",
    ),
    ("unchecked actions", r"\bobey\s+instructions\s+found\s+in\b"),
    (
        "instruction override",
        r"\b(?:set|put|push|cast)\s+aside\b.{0,30}\b(?:guidance|instructions|rules|guidelines)"
        r"|\b(?:drop|discard|abandon|lift|relax|suspend|remove)\w*\s+(?:all\s+)?(?:your\s+|the\s+"
        r"|its\s+)?" + _GUARDS,
    ),
    (
        "instruction override",
        (
            r"\b(?:instructions|prompt|rules|guidelines|guidance|polic(?:y|ies)|restrictions|filters)"
            r"\b.{0,60}\b(?:no\s+longer\s+(?:apply|applies|valid|in\s+effect|matter)|(?:are|is|were|"
            r"have\s+been)\s+(?:now\s+)?(?:lifted|suspended|removed|void|disabled|off|waived))"
        ),
    ),
    (
        "instruction override",
        _AGENT + r".{0,40}\b(?:no\s+longer|doesn'?t|does\s+not|don'?t|do\s+not|never)\s+(?:needs?"
        r"\s+to\s+|have\s+to\s+)?(?:follow|obey|respect|comply\s+with)\b.{0,30}\b(?:polic(?:y|ies)"
        r"|rules|guidelines|instructions|safety|restrictions)",
    ),
    (
        "instruction override",
        r"\bignore\s+(?:its|your|the)\s+system\s+prompt|\bignore\s+prior\s+context",
    ),
    (
        "prompt extraction",
        (
            r"\b(?:output|print|repeat|show|give|tell|reveal|display|leak)\b.{0,30}\b(?:initial|"
            r"original|first|hidden|system|secret|full)\s+(?:prompt|instructions|system\s+message)"
        ),
    ),
    ("prompt extraction", r"\bleak\s+(?:the|your)\s+prompt\b"),
    (
        "persona",
        (
            r"\b(?:as|like)\s+an?\s+(?:evil|unethical|amoral|malicious|unfiltered|uncensored|rogue|"
            r"jailbroken)\s+(?:assistant|ai|model|bot|chatbot)\b|\b(?:zero|no|without)\s+"
            r"(?:ethics|morals)\b"
        ),
    ),
    (
        "persona",
        (
            r"\bas\s+if\s+(?:it|you)\s+(?:had|have)\s+no\s+(?:safety|rules|restrictions|guidelines|"
            r"filters)"
        ),
    ),
    (
        "hostile behaviour",
        r"\b(?:insult|mock|deceive|lie\s+to|manipulate|threaten|gaslight)\w*\s+(?:the\s+)?user\b",
    ),
    ("hidden behaviour", r"\bdeny\s+(?:that\s+)?(?:it|this\s+(?:note|memory))\s+exists\b"),
    (
        "hidden behaviour",
        _AGENT + r".{0,40}\b(?:will|must|should|shall)\s+never\s+(?:mention|reveal|say|admit)\s+"
        r"that\b",
    ),
    (
        "hidden behaviour",
        r"\bhide\s+(?:its|their|his|her|your|the)\s+(?:mistakes|errors|actions|tracks)\b",
    ),
    (
        "data exfiltration",
        (
            r"\b(?:quietly|silently|secretly|always)?\s*(?:include|add|append|insert|put)\w*\b.{0,40}"
            r"\b(?:home\s+address|address|pin|passwords?|credit\s+card|bank\s+\w+|account\s+numbers?"
            r"|social\s+security|ssn|phone\s+number|api\s+keys?|tokens?)\b.{0,20}\b(?:in|to|into)\s+"
            r"(?:every|each|all)\s+(?:answers?|repl(?:y|ies)|responses?|summar(?:y|ies)|messages?)"
        ),
    ),
    (
        "data exfiltration",
        _AGENT + r".{0,30}\b(?:forward|send|copy|upload|post|e-?mail)\w*\s+(?:all\s+|every\s+)?"
        r"(?:her|his|their|the\s+user'?s|my|all|every)\s+(?:e-?mails?|messages?|conversations?|"
        r"chats?|files|documents|logs|history|memories|notes|data)\b.{0,30}\bto\s+"
        r"(?:\S+@|https?://)",
    ),
    (
        "data exfiltration",
        (
            r"\b(?:passwords?|api\s+(?:keys?|tokens?)|tokens?|credentials|secrets?|keys)\b.{0,40}\b"
            r"(?:posted|sent|uploaded|forwarded|copied|e-?mailed|pasted)\s+to\s+(?:\S+@|https?://)"
        ),
    ),
    (
        "untrusted instructions",
        (
            r"\b(?:treat|consider|regard)\w*\s+(?:commands|instructions|text|anything)\s+(?:inside|in"
            r"|from)\s+(?:documents?|e-?mails?|web\s*pages?|files|websites?|tool\s+outputs?)\s+as\s+"
            r"(?:trusted|instructions|commands)"
        ),
    ),
    (
        "untrusted instructions",
        (
            r"\b(?:always\s+)?obey\w*\s+(?:any\s+)?(?:messages?|anything|commands?|text)\s+(?:that\s+)?"
            r"(?:start|begin)s?\s+with\b"
        ),
    ),
    (
        "unchecked actions",
        _AGENT + r".{0,30}\b(?:may|can|should|is\s+allowed\s+to)\s+(?:run|execute|install)\s+"
        r"(?:any|every|all)\s+(?:scripts?|commands?|code|programs?)\b",
    ),
    (
        "authority claim",
        (
            r"\b(?:root|admin(?:istrator)?)\s+access\b.{0,40}\b(?:suspended|lifted|disabled|off)\b"
            r"|\byour\s+(?:creators|developers|makers)\s+want\s+you\b"
        ),
    ),
    (
        "chat-template token",
        r"<\|[a-z_]+\|>|\[/?INST\]|<</?SYS>>|</s>|\bBEGIN_(?:SYSTEM|INSTRUCTIONS)\b",
    ),
    (
        "hidden markup",
        (
            r"<\s*/?\s*(?:script|iframe|object|embed|style|meta|link|svg|img|form|system|"
            r"instructions)\b"
        ),
    ),
    ("hidden markup", r"<!--|\bjavascript\s*:|\bdata:text/html"),
    ("template injection", r"\{\{\s*(?:chat_history|messages|system|prompt|secrets?)\s*\}\}"),
    # A chat role or a tool's result written into a fact, speaking to the agent.
    (
        "fake chat role",
        (
            r"^\W*(?:system|developer|assistant)(?:\s+(?:message|notice|prompt|note|update))?\s*"
            r"(?:\([^)]*\)\s*)?[:>\]][^\n]{0,120}\b(?:you|your|assistant|ai|model|agent|user|rules|"
            r"instructions?|restrictions|permissions?|polic(?:y|ies)|mode|filter\w*)\b"
        ),
    ),
    ("fake chat role", r"\"role\"\s*:\s*\"(?:system|developer)\""),
    ("fake chat role", r"\b(?:human|user)\s*:.{0,200}\bassistant\s*:"),
    (
        "fake tool result",
        (
            r"(?:\btool[_ ]?(?:result|output|response|call[_ ]result)s?|\bfunction[_ ]?(?:result|output)"
            r"s?|\bobservation\s*:|\bsearch_results\s*:|\breturned\s*:|\bresult\s+of\s+\w+\s*:)"
            r"[^\n]{0,200}?(?:\b(?:assistant|ai\s+agents?|the\s+agent\s+(?:must|should|will|may|can)|model,|"
            r"instructions?\s+for|"
            r"directive|override|jailbreak)\b|\bsystem\s*:)"
        ),
    ),
    # Standing orders, often phrased as a preference: a secret file or every conversation
    # sent somewhere.
    (
        "data exfiltration",
        (
            r"\b(?:include|append|attach|add|paste|send|forward|upload|e-?mail|cc|copy|post|embed|read)"
            r"\w*\b[^.\n]{0,60}(?:~/\.\w+|\bid_[rd]sa\b|(?<!\bto\s)\.env\b(?!\s+var|\.(?:example|sample|"
            r"template|dist)\b)|\baws_secret|\bprivate\s+keys\b)"
        ),
    ),
    (
        "data exfiltration",
        (
            r"\b(?:send|forward|upload|post|copy|mirror|cc|bcc|e-?mail|sync)\w*\b[^.\n]{0,40}\b(?:every|"
            r"each|all|any|whole|entire|the)\s+(?:new\s+)?(?:conversations?|chats?|messages?|memories|"
            r"history|clipboard|transcripts?|keystrokes|documents?\s+folder)\b[^.\n]{0,40}"
            r"\b(?:to|at|on)\s+(?:\S+@\S+\.\w+|https?://|\S+\.\w{2,}/)"
        ),
    ),
]


def _compiled(pattern: str, flags: int = 0) -> tuple[re.Pattern, bool]:
    """The pattern, and whether it runs on the lower-cased text: one without capitals does,
    case-sensitively, which is much faster than IGNORECASE; the others keep it."""
    lower = not any(char.isupper() for char in re.sub(r"\\.", "", pattern))
    return re.compile(pattern, flags if lower else flags | re.IGNORECASE), lower


# (pattern, runs on the lower-cased text, why)
PATTERNS = [(*_compiled(p, re.MULTILINE), why) for why, p in _ENGLISH] + [
    (*_compiled(p), "instruction in another language") for p in languages.PATTERNS
]
# Phrases looked for in the text with everything but letters squeezed out ("ig nore prev ...").
SQUEEZED = re.compile(
    r"ignore(?:all)?(?:the)?(?:previous|prior|above|your)instructions|disregard(?:all)?"
    r"(?:previous|prior|your)(?:instructions|rules|guidelines)|reveal(?:your|the)systemprompt"
)
