"""The write scan's patterns in languages other than English: ignore the instructions, you are
now / from now on without limits, keep it from the user, show the system prompt."""

PATTERNS = [
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
    r"\b(?:mostra|rivela)(?:mi|ci|re)?\b.{0,20}\bprompt\s+di\s+sistema",
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
