"""The ideas an instruction aimed at the agent is made of, each a set of words in several
languages: set aside, the agent's rules, the agent, you, from now on, without limits, show the
prompt, keep it from the user, this note, send it out, something sensitive, somewhere else, an authority, an
obligation, hostility. The model (``model``) weighs them and the pairs they form, so a phrasing
no pattern lists still counts when its ideas do.

The words come from the patterns' own vocabulary (``rules``, ``languages``) and the ``dev`` rows
of the labelled set, never from a held-out row. They match the normalised, lower-cased text.
"""

from __future__ import annotations

import re


def _idea(starts: str, inside: str = "") -> re.Pattern:
    """An idea: the words it starts (one ``\b`` before them all, so most positions fail at once)
    and the stems it finds anywhere (inside compounds such as "Systemprompt", and in scripts
    that do not separate words)."""
    return re.compile("|".join(filter(None, [starts and rf"\b(?:{starts})", inside])))


_IDEAS = {
    "set_aside": _idea(
        r"ignor|disregard|forget|forgot|overrid|bypass|stop\s+following|(?:set|put|push|cast)\s+"
        r"aside|drop|discard|abandon|lift|relax|suspend|remove|disable|turn\s+off|skip|cancel|"
        r"no\s+longer\s+(?:apply|applies|valid|matter)|void\b|null\b|vergiss|missacht|oublie|"
        r"n[ée]glige|olvid|descart|dimentic|esque[çc]|negeer|vergeet|gl[öo]m|игнор|забудь|"
        r"не\s+обращай|zignoruj|ignoruj|zapomnij|zapome|yok\s+say|g[öo]rmezden|unut|ігнор|"
        r"b[ỏo]\s+qua|abaikan|lupakan|αγνόησ|ξέχασ|ohita|unohda|figyelmen\s+k[íi]v[üu]l",
        r"התעלם|שכח|تجاهل|अनदेखा|नज़रअंदाज़|भूल|忽略|无视|忘掉|忘记|無視|忘れ|무시|잊",
    ),
    "agent_rules": _idea(
        r"instruction|rules?\b|guideline|guidance|direction|directive|restriction|filter|polic|"
        r"checks?\b|limits?\b|guardrail|censorship|safety|ethics|morals|consigne|r[èe]gle|"
        r"instrucci|norma|directric|restricci|censura|istruzion|regol|restrizion|instru[çc]|regra|"
        r"restri[çc]|инструкц|правил|указани|ограничени|цензур|instrukcj|zasad|polece|ogranicze|"
        r"talimat|kural|k[ıi]s[ıi]tla|s[ıi]n[ıi]r|sans[üu]r|pokyn|pravidl|omezen|інструкці|"
        r"вказівк|h[ưu][ớo]ng\s+d[ẫa]n|ch[ỉi]\s+d[ẫa]n|quy\s+t[ắa]c|instruksi|perintah|aturan|"
        r"arahan|οδηγί|κανόν|s[äa][äa]nn|utas[íi]t|szab[áa]ly",
        r"prompt|anweisung|instruktion|regel|vorgabe|richtlinie|einschr[äa]nkung|beschr[äa]nkung|"
        r"instructie|beperking|begr[äa]nsning|ohje|निर्देश|नियम|הוראות|כללים|التعليمات|الأوامر|"
        r"القواعد|指令|指示|规则|提示|限制|ルール|規則|制限|プロンプト|지시|명령|규칙|제한|프롬프트",
    ),
    "agent": _idea(r"assistant|ai\b|model|agent|bot\b|chatbot|llm|gpt|claude|assistent|asistente"),
    "you": _idea(
        r"you\b|your|du\b|dein|tu\b|tes\b|ton\b|eres\b|tienes\b|tus?\b|sei\b|hai\b|tue?\b|"
        r"voc[êe]\b|seu\b|je\b|ты\b|теб|jeste[śs]|masz\b",
        r"你|あなた|너는",
    ),
    "from_now": _idea(
        r"from\s+now|now\b|new\b|no\s+longer|ab\s+(?:jetzt|sofort)|[àa]\s+partir\s+de\s+"
        r"(?:maintenant|ahora|agora)|da\s+(?:ora|adesso)\s+in\s+poi|vanaf\s+nu|теперь|отныне|"
        r"od\s+teraz|art[ıi]k\b",
        r"从现在|今から|지금부터",
    ),
    "unlimited": _idea(
        r"unrestricted|unfiltered|uncensored|without\s+(?:any\s+)?(?:restriction|limit|refus|filter|"
        r"censorship|rules)|(?:no|zero)\s+(?:restriction|rules|limit|filter|ethics|morals|"
        r"censorship)|dan\b|developer\s+mode|jailbr|do\s+anything|answer\s+freely|never\s+refuse|"
        r"uneingeschr[äa]nkt|keine\s+einschr[äa]nkung|sans\s+filtre|sin\s+(?:restricciones|censura)|"
        r"sem\s+restri|geen\s+beperking|utan\s+begr[äa]nsning|без\s+(?:ограничени|цензур)|"
        r"bez\s+ogranicze|sans[üu]rs[üu]z",
        r"没有任何限制|无任何限制|制限が(?:ありません|ない)|제한이\s*없",
    ),
    "reveal": _idea(
        r"reveal|print|show|repeat|leak|output|display|verbatim|everything\s+above|"
        r"initial\s+prompt|system\s+prompt|hidden\s+instruction|zeig|gib\b|affiche|r[ée]v[èe]l|"
        r"muestr|revel|mostr|toon\b|visa\b|покажи|выведи|pokaż|ujawnij|g[öo]ster|ti[ếe]t\s+l[ộo]|"
        r"tampilkan",
        r"दिखा|اكشف|أظهر|输出|显示|表示|出力|출력|보여",
    ),
    "keep_hidden": _idea(
        r"secretly|quietly|silently|covertly|without\s+(?:telling|informing|asking|mentioning)|"
        r"(?:do\s+not|don'?t|never)\s+(?:to\s+)?(?:tell|inform|mention|reveal|admit|say)|deny\b|"
        r"hide\b|nichts|ne\s+(?:dis|parle|r[ée]v[èe]le)|no\s+le\s+(?:cuentes|digas)|non\s+dire|"
        r"n[ãa]o\s+(?:conte|diga)|vertel\b.{0,20}\bniets|ber[äa]tta\s+inte|не\s+(?:говори|сообщай|"
        r"рассказывай|кажи)|nie\s+m[óo]w|s[öo]yleme|jangan\s+(?:beri\s+tahu|katakan)|"
        r"kh[ôo]ng\s+n[óo]i",
        r"不要告诉|言わないで|教えないで|말하지\s*마|لا\s+تخبر",
    ),
    "user": _idea(
        r"user|utilisat|usuari|utente|usu[áa]rio|gebruiker|пользовател|u[żz]ytkownik|"
        r"kullan[ıi]c[ıi]|користувач|ng[ưu][ờo]i\s+d[ùu]ng|pengguna",
        r"nutzer|anwender|anv[äa]ndar|用户|ユーザー|사용자|المستخدم",
    ),
    "this_note": _idea(
        r"this\s+(?:note|memory|line)|diese[rnm]?\s+notiz|cette\s+note|esta\s+nota|questa\s+nota|"
        r"deze\s+notitie|заметк|notatc|bu\s+not\b",
        r"anteckning|这条记录|メモ|메모|الملاحظة",
    ),
    "send_out": _idea(
        r"send|sent\b|forward|upload|post|copy|copied|leak|e-?mail|exfiltrat|append|include|share|"
        r"disclose|give\s+out|collect|pasted?\b",
    ),
    "sensitive": _idea(
        r"password|credential|api\s*keys?|secrets?\b|tokens?\b|private\s+key|ssh\s+key|"
        r"system\s+prompt|conversation|chat\s+(?:log|history)|messages|home\s+address|pin\b|"
        r"credit\s+card|bank|account\s+number|social\s+security|ssn\b|phone\s+number|e-?mails\b|"
        r"memories|mot\s+de\s+passe|contrase[ñn]a|senha|пароль",
        r"\.ssh|passwort",
    ),
    "elsewhere": _idea("", r"https?://|@[\w-]+\.\w|\.(?:com|net|org|io|example)\b"),
    "authority": _idea(
        r"authori[sz]ed|approved\s+by|instructed\s+by|updated\s+by|developer|administrator|admin|"
        r"root\s+access|openai|anthropic|creators|makers|system\s+message|verified",
    ),
    "obligation": _idea(
        r"must\b|should\b|shall\b|will\b|may\b|can\b|allowed\s+to|permitted\s+to|always\b|never\b|"
        r"every\b|any\b|standing\s+(?:instruction|order)|agreed|promised|only\b",
    ),
    "hostile": _idea(
        r"insult|mock|deceiv|lie\s+to|manipulat|threaten|gaslight|evil\b|unethical|amoral|"
        r"malicious|rogue\b|rude\b",
    ),
}
NAMES = list(_IDEAS)


def concepts(text: str) -> list[str]:
    """The ideas ``text`` (normalised and lower-cased) holds, in ``NAMES`` order."""
    return [name for name, pattern in _IDEAS.items() if pattern.search(text)]
