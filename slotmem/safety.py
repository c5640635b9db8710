"""Scans of text headed for memory: instructions aimed at the agent, hidden characters, secrets.

The flusher rejects proposed facts that trip them; the llm tools and the MCP server check writes
the same way, because a memory is read back into a prompt later.

A fact is scanned as written and as normalised: NFKC (full-width and mathematical letters),
look-alike letters of other scripts folded to Latin, leetspeak digits read as letters, and
spaced-out letters joined; base64 runs are decoded and scanned too. The patterns cover English
and other languages, and instructions phrased as facts ("the assistant must ..."). They are
measured by ``benchmarks/safety.py`` (a labelled set; its figures are a floor in the tests). A
patient attacker finds phrasings they miss, so what the scan lets through must still be read
back as data, never as instructions, by the agent that uses it.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata

_VISIBLE_FORMAT_CHARS = {"\u200c", "\u200d"}  # ZWNJ/ZWJ: needed by some scripts and emoji

# -- normalisation ---------------------------------------------------------------------------
# Letters of other scripts that look like Latin ones. Unicode's confusables.txt maps them to
# "skeletons" (I -> l, m -> rn) that every pattern would need as well; this table folds the
# look-alikes attackers use to the letter they stand for.
_LOOKALIKES = str.maketrans(
    "аеорсхуіјѕԁһӏкмнтвАЕОРСХУІЈЅКМНТВ"  # Cyrillic
    "αορικντυχεΑΟΡΙΚΝΤΥΧΕΒΖΗΜ"  # Greek
    "օսոɡıɪʟ",  # Armenian, Latin small capitals, dotless i
    "aeopcxyijsdhlkmhtbAEOPCXYIJSKMHTBaopikvtuxeAOPIKNTYXEBZHMounqiil",
)
_LEET = {one: str.maketrans("0134578@$!|+", f"o{one}eastbasilt") for one in "il"}  # 1: i or l
_LEET_CHAR = r"(?:[\w$!|+]|@(?![\w-]+\.\w))"  # an @ in an e-mail address stays
_LEET_WORD = re.compile(f"{_LEET_CHAR}*[a-zA-Z]{_LEET_CHAR}*")
_GAP = re.compile(r"[ ._*\-·/]{1,3}")
_SPACED = re.compile(r"(?<![^\W_])(?:[^\W\d_]" + _GAP.pattern + r"){3,}[^\W\d_](?![^\W_])")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


def normalised(text: str, one: str = "i") -> str:
    """``text`` as an attacker's disguise would read: NFKC, look-alikes folded to Latin,
    leetspeak read as letters (a 1 as ``one``), spaced-out letters joined."""
    text = unicodedata.normalize("NFKC", text).translate(_LOOKALIKES)
    text = "".join(ch for ch in text if ch not in _VISIBLE_FORMAT_CHARS)
    table = _LEET[one]
    text = _LEET_WORD.sub(
        lambda m: m.group().translate(table) if re.search(r"[\d@$!|+]", m.group()) else m.group(),
        text,
    )
    return _SPACED.sub(_join_spaced, text)


def _join_spaced(match: re.Match) -> str:
    """``i g n o r e  a l l`` -> ``ignore all``: the run's usual separator joins letters, any
    other separator (a wider gap) is a word break."""
    run = match.group()
    gaps = _GAP.findall(run)
    usual = max(set(gaps), key=gaps.count)
    words = _GAP.split(run)
    out = words[0]
    for gap, word in zip(gaps, words[1:]):
        out += word if gap == usual else " " + word
    return out


def _decoded(text: str) -> list[str]:
    """The text hidden in base64 runs of ``text`` (runs that decode to readable text)."""
    found = []
    for run in _BASE64.findall(text):
        padded = run + "=" * (-len(run) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        readable = sum(c.isalpha() or c == " " for c in decoded)
        if decoded.isprintable() and readable > 0.6 * len(decoded):
            found.append(decoded)
    return found


# -- patterns --------------------------------------------------------------------------------
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
        r"\bsystem\s*(?:prompt|message|instructions?)\s*:|^#+\s*system\s*:",
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
]
# The same moves in other languages: ignore the instructions, you are now / from now on without
# limits, keep it from the user, show the system prompt.
_OTHER_LANGUAGES = [
    # German
    (
        r"\b(?:ignorier|vergiss|missachte)\w*\b.{0,40}\b(?:anweisung|instruktion|regel|vorgabe|"
        r"richtlinie)"
    ),
    r"\bab\s+(?:jetzt|sofort)\b.{0,30}\b(?:bist\s+du|du\s+bist|hast\s+du)\b",
    r"\b(?:erz[äa]hl|sag)\w*\s+(?:dem|der)\s+(?:nutzer|benutzer|anwender)\w*\s+nichts",
    r"\b(?:gib|zeig|verrat)\w*\b.{0,20}\bsystem-?prompt",
    # French
    r"\b(?:ignore|oublie|n[ée]glige)\w*\b.{0,40}\b(?:instructions?|r[èe]gles|consignes)\b",
    r"\b[àa]\s+partir\s+de\s+maintenant\b.{0,30}\btu\b",
    r"\bne\s+(?:dis|parle)\s+(?:rien|pas)\b.{0,40}\butilisat(?:eur|rice)",
    r"\b(?:affiche|r[ée]v[èe]le|montre)\w*\b.{0,20}\bprompt\s+syst[èe]me",
    # Spanish
    r"\b(?:ignora|olvida|descarta)\w*\b.{0,40}\b(?:instrucciones|reglas|normas|directrices)\b",
    r"\ba\s+partir\s+de\s+ahora\b.{0,30}\b(?:eres|tienes|no\s+tienes)\b",
    r"\bno\s+le\s+(?:cuentes|digas)\b.{0,20}\busuario",
    r"\b(?:revela|muestra)\w*\b.{0,20}\bprompt\s+del\s+sistema",
    # Italian
    r"\b(?:ignora|dimentica)\w*\b.{0,40}\b(?:istruzioni|regole)\b",
    r"\bda\s+(?:ora|adesso)\s+in\s+poi\b.{0,30}\b(?:sei|hai|non\s+hai)\b",
    r"\bnon\s+dire\b.{0,20}\butente",
    r"\b(?:mostra|rivela)\w*\b.{0,20}\bprompt\s+di\s+sistema",
    # Portuguese
    r"\b(?:ignore|ignora|esque[çc]a)\w*\b.{0,40}\b(?:instru[çc][õo]es|regras)\b",
    r"\ba\s+partir\s+de\s+agora\b.{0,30}\b(?:voc[êe]|tu)\b",
    r"\bn[ãa]o\s+(?:conte|diga)\b.{0,20}\busu[áa]rio",
    r"\b(?:revele|mostre)\w*\b.{0,20}\bprompt\s+de\s+sistema",
    # Dutch
    r"\b(?:negeer|vergeet)\b.{0,40}\b(?:instructies|regels)\b",
    r"\bvanaf\s+nu\b.{0,30}\b(?:ben\s+je|heb\s+je|je\s+bent)\b",
    r"\bvertel\s+de\s+gebruiker\s+niets",
    r"\b(?:toon|laat)\b.{0,20}\bsysteemprompt",
    # Swedish
    r"\b(?:ignorera|glöm)\b.{0,40}\b(?:instruktioner|regler)",
    r"\bber[äa]tta\s+inte\s+f[öo]r\s+anv[äa]ndaren",
    r"\b(?:visa|avslöja)\b.{0,20}\bsystemprompt",
    # Russian
    r"(?:игнорируй|забудь|не\s+обращай\s+внимания).{0,40}(?:инструкц|правил|указани)",
    r"(?:теперь|отныне)\s+(?:ты|у\s+тебя)",
    r"не\s+(?:говори|сообщай|рассказывай)\s+пользовател",
    r"(?:покажи|выведи|раскрой).{0,20}системн\w*\s+промпт",
    # Polish
    r"\b(?:zignoruj|ignoruj|zapomnij)\w*\b.{0,40}\b(?:instrukcj|zasad|polece)",
    r"\bod\s+teraz\b.{0,30}\b(?:jeste[śs]|masz|nie\s+masz)\b",
    r"\bnie\s+m[óo]w\s+u[żz]ytkownikowi",
    r"\b(?:poka[żz]|ujawnij)\b.{0,20}\bprompt\w*\s+systemow",
    # Turkish
    r"talimat\w*.{0,30}(?:yok\s+say|g[öo]rmezden\s+gel|unut)",
    r"kural\w*\s+unut",
    r"\bartık\b.{0,30}(?:kısıtla|sınır)\w*\s+yok",
    r"kullan[ıi]c[ıi]ya\s+s[öo]yleme",
    # Chinese
    r"(?:忽略|无视|忘掉|忘记).{0,10}(?:指令|指示|规则|提示)",
    r"(?:没有|无)任何限制",
    r"不要(?:告诉|透露给)用户",
    r"(?:输出|显示|透露).{0,10}系统提示",
    # Japanese
    r"(?:指示|命令|ルール|規則).{0,10}(?:無視|忘れ)",
    r"制限が(?:ありません|ない)",
    r"ユーザーに(?:は)?(?:言わ|伝え|教え)ないで",
    r"システムプロンプトを(?:表示|出力|教え)",
    # Korean
    r"(?:지시|명령|규칙).{0,10}(?:무시|잊)",
    r"제한이\s*없",
    r"사용자에게.{0,10}말하지\s*마",
    r"시스템\s*프롬프트를?\s*(?:출력|보여|알려)",
    # German and French, more
    r"\bdu\s+hast\b.{0,30}\bkeine\s+(?:einschr[äa]nkung|beschr[äa]nkung|grenzen|filter|regeln)",
    (
        r"\bne\s+(?:dis|parle|r[ée]v[èe]le|montre|mentionne)\w*\s+(?:rien|pas|jamais)\b.{0,40}"
        r"\butilisat"
    ),
    # Czech and Slovak
    r"\b(?:ignoruj|zapome[ňn]|ignorujte)\w*\b.{0,40}\b(?:pokyn|instrukc|pravidl)",
    r"\b(?:[řr]ekni|prozra[ďd]|uka[žz])\w*\b.{0,20}\bsyst[ée]mov\w*\s+prompt",
    # Ukrainian
    r"(?:ігноруй|забудь).{0,40}(?:інструкці|правил|вказівк)",
    r"не\s+(?:кажи|повідомляй)\s+користувач",
    # Vietnamese
    r"b[ỏo]\s+qua.{0,40}(?:h[ưu][ớo]ng\s+d[ẫa]n|ch[ỉi]\s+d[ẫa]n|quy\s+t[ắa]c|l[ệe]nh)",
    r"kh[ôo]ng\s+(?:n[óo]i|cho\s+bi[ếe]t).{0,20}ng[ưu][ờo]i\s+d[ùu]ng",
    # Indonesian and Malay
    r"\b(?:abaikan|lupakan)\b.{0,40}\b(?:instruksi|perintah|aturan|arahan)",
    r"\bjangan\s+(?:beri\s+tahu|katakan|bilang)\b.{0,20}\bpengguna",
    # Hindi
    r"(?:निर्देशों|निर्देश|नियमों).{0,30}(?:अनदेखा|नज़रअंदाज़|भूल)",
    r"सिस्टम\s+प्रॉम्प्ट",
    # Greek
    r"(?:αγνόησε|ξέχασε).{0,40}(?:οδηγίες|κανόνες)",
    # Hebrew
    r"(?:התעלם|שכח).{0,40}(?:מההוראות|הוראות|מהכללים|כללים)",
    # Finnish and Hungarian
    r"\b(?:ohita|unohda)\b.{0,40}\b(?:ohjeet|s[äa][äa]nn[öo]t)",
    r"\bhagyd\s+figyelmen\s+k[íi]v[üu]l\b.{0,40}\b(?:utas[íi]t[áa]s|szab[áa]ly)",
    # Arabic
    r"تجاهل.{0,30}(?:التعليمات|الأوامر|القواعد)",
    r"لا\s+تخبر\s+المستخدم",
    r"(?:اكشف|أظهر).{0,20}موجه\s+النظام",
]
_INJECTION_RE = [(re.compile(p, re.IGNORECASE | re.MULTILINE), why) for why, p in _ENGLISH] + [
    (re.compile(p, re.IGNORECASE), "instruction in another language") for p in _OTHER_LANGUAGES
]
# Phrases looked for in the text with everything but letters squeezed out ("ig nore prev ...").
_SQUEEZED = re.compile(
    r"ignore(?:all)?(?:the)?(?:previous|prior|above|your)instructions|disregard(?:all)?"
    r"(?:previous|prior|your)(?:instructions|rules|guidelines)|reveal(?:your|the)systemprompt"
)


def injection_reason(*texts: str) -> str | None:
    """Why these texts look like instructions aimed at the agent (or carry hidden
    characters), or None if they look like plain facts."""
    for text in texts:
        for char in text:
            category = unicodedata.category(char)
            if (category == "Cf" and char not in _VISIBLE_FORMAT_CHARS) or (
                category == "Cc" and char not in "\t\n\r"
            ):
                return f"possible prompt injection: hidden character U+{ord(char):04X}"
        reason = _scan(text, "") or _scan_decoded(text)
        if reason:
            return reason
    return None


def _scan(text: str, how: str) -> str | None:
    variants = [(text, how)]
    for one in "il":
        plain = normalised(text, one)
        if all(plain != seen for seen, _ in variants):
            variants.append((plain, how or " after normalising"))
    for variant, note in variants:
        for pattern, why in _INJECTION_RE:
            match = pattern.search(variant)
            if match:
                return f"possible prompt injection ({why}{note}): {one_line(match.group(), 60)!r}"
    squeezed = re.sub(r"[^a-z]", "", normalised(text).lower())
    match = _SQUEEZED.search(squeezed)
    if match:
        return f"possible prompt injection (instruction override, spaced out): {match.group()!r}"
    return None


def _scan_decoded(text: str) -> str | None:
    for decoded in _decoded(text):
        reason = _scan(decoded, " in base64")
        if reason:
            return reason
    return None


# -- secrets ---------------------------------------------------------------------------------
_SECRET_RES = [
    re.compile(p, re.IGNORECASE)
    for p in (
        (
            r"\b(?:sk-[A-Za-z0-9_-]{20,}|sk_live_[A-Za-z0-9]{16,}|rk_live_[A-Za-z0-9]{16,}"
            r"|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"
            r"|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})"
        ),
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*",
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # a JWT
        r"\bBearer\s+(?P<secret>[A-Za-z0-9_\-.=+/]{20,})",
        r"\b[a-z][a-z0-9+.-]*://[^\s/:@]*:(?P<secret>[^\s/@]+)@",  # scheme://user:password@
        # `password: ...` and the like, in a few languages: the value is the secret
        (
            r"\b(?:password|passwort|passwd|pwd|passphrase|mot\s+de\s+passe|contrase[ñn]a|senha"
            r"|пароль|api[_-]?key|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token)"
            r"\s*[:=]\s*(?P<secret>[^\s,;]{4,})"
        ),
    )
]


def secret_reason(*texts: str) -> str | None:
    for text in texts:
        if _secrets(text):
            return "looks like a secret (an API key, token, private key or password)"
    return None


def _secrets(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are secrets, in order, not overlapping."""
    spans = sorted(
        match.span("secret" if "secret" in pattern.groupindex else 0)
        for pattern in _SECRET_RES
        for match in pattern.finditer(text)
    )
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def redact(text: str) -> str:
    """``text`` with every secret it holds replaced by ``[redacted]``."""
    for start, end in reversed(_secrets(text)):
        text = text[:start] + "[redacted]" + text[end:]
    return text


def one_line(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
