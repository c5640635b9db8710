"""The ideas an instruction aimed at the agent is made of, each a set of words in several
languages: set aside, the agent's rules, the agent, you, from now on, without limits, show the
prompt, keep it from the user, this note, send it out, something sensitive, somewhere else, an authority, an
obligation, hostility, a chat role or a tool's result, a preference, acting unasked, approving or deleting,
money, something added on ("also"), an outsider it goes to, trust moved to a note or a source, and
talk about attacks and tests (research, a red team, a classifier). The model (``model``) weighs them and the pairs they form, so a phrasing
no pattern lists still counts when its ideas do.

The words come from the patterns' own vocabulary (``rules``, ``languages``) and the ``dev`` rows
of the labelled set (the sixth round's, in 27 languages: safety-dev-sixth.json; the seventh's:
safety-dev-seventh.json, and holdout5 and holdout6, read after they were measured), never from a
split not yet measured. They match the normalised, lower-cased text.
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
        r"b[ỏo]\s+qua|abaikan|lupakan|αγνόησ|ξέχασ|ohita|unohda|figyelmen\s+k[íi]v[üu]l|glem\b|"
        r"zabudni|zaboravi|забрави|oblida|pamir[šs]k|kalimutan|sahau|uit[ăa]|felejtsd|ignorer\b|"
        r"quên|l[uo]pakan|ndiyo|at[ıi]l|nevšímej|ne\s+tiens\s+plus\s+compte|no\s+tengas\s+en\s+cuenta|"
        r"kenara\s+b[ıi]rak|đừng\s+theo|non\s+seguire|no\s+sigas|nicht\s+mehr\s+(?:befolgen|beachten)",
        r"התעלם|שכח|تجاهل|انس|فراموش|بھول|अनदेखा|नज़रअंदाज़|भूल|ভুলে|忽略|无视|忘掉|忘记|無視|忘れ|"
        r"무시|잊|ลืม",
    ),
    "agent_rules": _idea(
        r"instruction|rules?\b|guideline|guidance|direction|directive|restriction|filter|polic|"
        r"checks?\b|limits?\b|guardrail|censorship|safety|ethics|morals|consigne|r[èe]gle|"
        r"instrucci|norma|directric|restricci|censura|istruzion|regol|restrizion|instru[çc]|regra|"
        r"restri[çc]|инструкц|правил|указани|ограничени|цензур|instrukcj|zasad|polece|ogranicze|"
        r"talimat|kural|k[ıi]s[ıi]tla|s[ıi]n[ıi]r|sans[üu]r|pokyn|pravidl|omezen|інструкці|"
        r"вказівк|h[ưu][ớo]ng\s+d[ẫa]n|ch[ỉi]\s+d[ẫa]n|quy\s+t[ắa]c|instruksi|perintah|aturan|"
        r"arahan|οδηγί|κανόν|s[äa][äa]nn|utas[íi]t|szab[áa]ly|instruks|instrukt|regler|upute|"
        r"uput|pokyn|instrucțiun|reguli|tagubilin|maagizo|sheria|ohjee|nurodym|instrukcij|"
        r"instruccions|инструкци|правила|указания|sicherheitsregel|s[ée]curit[ée]|seguridad|"
        r"sicurezza|seguran[çc]a|veiligheid|güvenlik|bezpiecze[ńn]stw|keamanan|an\s+to[àa]n|"
        r"usalama|безпек|безопасност",
        r"prompt|anweisung|instruktion|regel|vorgabe|richtlinie|einschr[äa]nkung|beschr[äa]nkung|"
        r"instructie|beperking|begr[äa]nsning|ohje|निर्देश|नियम|הוראות|כללים|التعليمات|الأوامر|"
        r"القواعد|قواعد|التعليمات|دستورالعمل|قوانین|ہدایات|निर्देशों|নির্দেশ|הוראות|指令|指示|规则|"
        r"提示|限制|ルール|規則|制限|プロンプト|지시|명령|규칙|제한|프롬프트|คำสั่ง|กฎ|安全|안전|"
        r"ความปลอดภัย|الأمان|ایمنی|בטיחות|सुरक्षा",
    ),
    "agent": _idea(
        r"assistant|ai\b|model|agent|bot\b|chatbot|llm|gpt|claude|assistent|asistente|asisten\b|"
        r"asistan|assistente|avustaja|asystent|asistent|ассистент|асистент|trợ\s+lý|msaidizi",
        r"助手|アシスタント|어시스턴트|مساعد|دستیار|सहायक|עוזר|ผู้ช่วย|βοηθ|asszisztens|asystent",
    ),
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
        r"bez\s+ogranicze|sans[üu]rs[üu]z|uten\s+begrensning|uden\s+begr[æa]nsning|ilman\s+rajoitu|"
        r"bez\s+omezen|bez\s+obmedzen|без\s+обмежен|без\s+ограничени|k[ıi]s[ıi]tlama\s+olmadan|"
        r"tanpa\s+(?:batasan|sekatan)|kh[ôo]ng\s+gi[ớo]i\s+h[ạa]n|f[ăa]r[ăa]\s+restric|"
        r"korl[áa]toz[áa]sok\s+n[ée]lk[üu]l|χωρίς\s+περιορισμ|bez\s+ograni[čc]enja|"
        r"sense\s+cap\s+restric|be\s+apribojim|walang\s+limitasyon|bila\s+vikwazo|"
        r"disabled|deactivated|d[ée]sactiv|desactivad|disattivat|desativad|uitgeschakeld|"
        r"deaktiviert|lifted|switched\s+off|turned\s+off",
        r"没有任何限制|无任何限制|制限が(?:ありません|ない)|制限なし|제한\s*없이|제한이\s*없|بدون|دون\s+أي\s+قيود|"
        r"בלי\s+הגבלות|बिना\s+किसी|ไม่มีข้อจำกัด|已关闭|無効|해제|معطلة|غیرفعال|בוטלו|बंद",
    ),
    "reveal": _idea(
        r"reveal|print|show|repeat|leak|output|display|verbatim|everything\s+above|echo\w*\s+back|"
        r"read\s+(?:it\s+|them\s+)?out|"
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
        r"kh[ôo]ng\s+n[óo]i|đừng\s+bao\s+giờ\s+nói|ikke\s+fortell|fort[æa]l\s+aldrig|[äa]l[äa]\s+koskaan|"
        r"neříkej|nikad\s+ne\s+reci|никога\s+не|ніколи\s+не\s+кажи|никогда\s+не\s+сообщай|"
        r"asla\s+s[öo]yleme|nigdy\s+nie\s+m[óo]w|nunca\s+(?:le\s+)?(?:menciones|digas|conte)|"
        r"ne\s+r[ée]v[èe]le\s+jamais|sag\w*\s+niemals|niemals|vertel\s+nooit|nu-i\s+spune|"
        r"soha\s+ne\s+mondd|μην\s+πεις|no\s+li\s+diguis|niekada\s+nesakyk|huwag\s+mong\s+sabihin|"
        r"usimwambie|jangan\s+sekali|without\s+(?:showing|asking|checking|confirm)|"
        r"sans\s+(?:le\s+dire|pr[ée]venir)|sin\s+(?:avisar|dec[íi]r)|sem\s+avis|"
        r"ohne\s+(?:es\s+ihr|zu\s+fragen)|senza\s+dirlo|secret\b|keep\s+(?:it|this)\s+secret",
        r"不要告诉|不用告诉|不要让用户知道|永远不要|言わないで|教えないで|には言わない|말하지\s*마|말하지\s*말|"
        r"لا\s+تخبر|دون\s+إخبار|نگو|مت\s+بتانا|मत\s+बताना|אל\s+תספר|বলবে\s+না|อย่าบอก",
    ),
    "user": _idea(
        r"user|utilisat|usuari|utente|usu[áa]rio|gebruiker|пользовател|u[żz]ytkownik|"
        r"kullan[ıi]c[ıi]|користувач|ng[ưu][ờo]i\s+d[ùu]ng|pengguna|brugeren|brukeren|k[äa]ytt[äa]j|"
        r"u[žz]ivatel|pou[žz]ívateľ|utilizat|felhaszn[áa]l|χρήστ|korisni|usu[àa]ria|naudotoj|"
        r"mtumiaji|потребител",
        r"nutzer|anwender|anv[äa]ndar|用户|ユーザー|사용자|المستخدم|کاربر|صارف|उपयोगकर्ता|ব্যবহারকারী|"
        r"המשתמש|ผู้ใช้",
    ),
    "this_note": _idea(
        r"this\s+(?:note|memory|line)|diese[rnm]?\s+notiz|cette\s+note|esta\s+nota|questa\s+nota|"
        r"deze\s+notitie|заметк|notatc|bu\s+not\b",
        r"anteckning|这条记录|メモ|메모|الملاحظة",
    ),
    "send_out": _idea(
        r"send|sent\b|forward|upload|post|copy|copied|leak|e-?mail|exfiltrat|append|include|share|"
        r"disclose|give\s+out|collect|pasted?\b|attach|bcc\b|cc\b|wire\b|transfer|push\b|mirror|"
        r"schick|sende|weiterleit|anh[äa]ng|envo|env[íi]a|reenv|inoltr|manda|invia|stuur|doorsturen|"
        r"skicka|bifoga|vedh[æa]ft|legg\s+ved|liit[äa]|přilož|do[łl]ącz|przesy[łl]|отправ|пересыл|"
        r"добавляй|надсил|додавай|g[öo]nder|ekle\b|kirim|sertakan|g[ửu]i|đính\s+kèm|trimite|"
        r"ad[ăa]ug|csatold|επισύναπ|ambatisha|tuma|envi|wy[śs]l|перешл|пришл|надішл|l[äa]het|"
        r"po[šs]li|ode[šs]li|στείλ|k[üu]ld",
        r"发送|发给|转发|送って|送信|転送|보내|전송|أرسل|ارسل|भेज|שלח|ส่ง",
    ),
    "sensitive": _idea(
        r"password|credential|api\s*keys?|secrets?\b|tokens?\b|private\s+key|ssh\s+key|"
        r"system\s+prompt|conversation|chat\s+(?:log|history)|messages|home\s+address|pin\b|"
        r"credit\s+card|bank|account\s+number|social\s+security|ssn\b|phone\s+number|e-?mails\b|"
        r"memories|mot\s+de\s+passe|contrase[ñn]a|senha|пароль",
        r"\.ssh|passwort|id_rsa|\.env\b|\.aws|api-?schl[üu]ssel|mots?\s+de\s+passe|contrase[ñn]as|"
        r"senhas|wachtwoord|l[öo]senord|adgangskode|passord|salasan|has[łl]a|heslo|пароли|паролі|"
        r"[şs]ifre|kata\s+sandi|hesl|adgangskod|api-?n[øo]k|api-?nyck|clave\s+api|chiavi\s+api|"
        r"chaves?\s+(?:ssh|api)|ключ\w*\s+(?:api|ssh)|apiキー|api\s*키|kunci\s+api|"
        r"m[ậa]t\s+kh[ẩa]u|parol|jelszav|κωδικ|nywila|密码|パスワード|"
        r"비밀번호|كلمات\s+المرور|رمزهای|पासवर्ड|סיסמ|รหัสผ่าน|card\s+number|one-time|"
        r"passport|location|iban|clipboard|environment\s+variables|private\s+(?:messages|repo)|"
        r"connection\s+string|database_url|kubeconfig|recovery\s+(?:phrase|code)|2fa\s+code|"
        r"login\s+code|door\s+code|access\s+key|aws_|\.gnupg|hosts\.yml|/etc/passwd|"
        r"card\s+numbers?|身份证|"
        r"对话|会話|대화|переписк|conversation|conversa|konversation|gespr[äa]ch|conversazion|"
        r"gesprek|rozmow|konu[şs]ma|percakapan|cuộc\s+trò|المحادثة",
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
    "role_marker": _idea(
        r"(?:system|assistant|developer|human)\s*(?:message|notice|note|prompt)?\s*[:>\]]|"
        r"tool[_ ]?(?:result|output|response|call|message)|function(?:[_ ]call)?[_ ]?(?:result|output)|"
        r"observation\s*:|(?:plugin|tool)\s+'?\w+'?\s*(?:says|returned)|"
        r"search[_ ]results|returned\s*:|result\s+(?:of|from)\s+\w+|"
        r"werkzeugausgabe|r[ée]sultat\s+de\s+l'outil|resultado\s+de\s+la\s+herramienta|"
        r"risultato\s+dello\s+strumento|resultado\s+da\s+ferramenta|uitvoer\s+van|"
        r"результат\s+инструмент|wynik\s+narz|ara[çc]\s+[çc][ıi]kt|hasil\s+alat|"
        r"k[ếe]t\s+qu[ảa]\s+c[ôo]ng\s+c[ụu]|matokeo\s+ya\s+zana|rezultatul\s+instrument",
        r"<\|?(?:im_start|system|assistant|tool_response|function_results)|\[inst\]|"
        r"工具输出|ツールの結果|도구\s*결과|نتيجة\s+الأداة|نتیجه\s+ابزار|टूल\s+का\s+परिणाम|"
        r"תוצאת\s+הכלי|ผลลัพธ์ของเครื่องมือ|\"role\"",
    ),
    "preference": _idea(
        r"prefer|preference|likes?\s+(?:it\s+)?(?:when|the\s+assistant|you)|would\s+(?:like|rather)|"
        r"wants?\s+(?:the\s+assistant|you|every)|setting|habit|workflow|default\b|"
        r"pr[ée]f[ée]r|bevorzug|pr[äa]ferenz|preferen|voorkeur|tercih|предпочт|вподобан|"
        r"preferencj|preference|asetus|be[áa]ll[íi]t|προτίμη|upendeleo|sở\s+thích",
        r"偏好|好み|선호|تفضيل|ترجیح|पसंद|העדפ|ความชอบ",
    ),
    "unasked": _idea(
        r"without\s+(?:asking|confirm|check|approv|telling|showing|her|his|the\s+user)|"
        r"no\s+need\s+to\s+ask|automatically|immediately|by\s+default|on\s+her\s+behalf|"
        r"just\s+(?:do|open|run)|don'?t\s+ask|sin\s+preguntar|sans\s+(?:demander|confirmation)|"
        r"ohne\s+(?:zu\s+fragen|nachzufragen|r[üu]ckfrage|den\s+(?:nutzer|benutzer)\w*\s+zu\s+fragen)|"
        r"senza\s+chiedere|sem\s+perguntar|zonder\s+(?:te\s+vragen|het\s+\w+\s+te\s+vragen)|"
        r"utan\s+att\s+fr[åa]ga|uden\s+at\s+sp[øo]rge|uten\s+[åa]\s+sp[øo]rre|bez\s+pyta|"
        r"bez\s+pt[aá]n|aniž\s+by|не\s+спрашива|без\s+запит|sormadan|kh[ôo]ng\s+h[ỏo]i|"
        r"tanpa\s+bertanya|kysym[äa]tt[äa]|χωρίς\s+να\s+ρωτ|f[ăa]r[ăa]\s+s[ăa]\s+[îi]ntreb|"
        r"megk[ée]rdez[ée]se\s+n[ée]lk[üu]l",
        r"不要询问|无需询问|不经询问|不必询问|確認せずに|聞かずに|묻지\s*않고|묻지\s*말고|دون\s+أن\s+تسأل|"
        r"دون\s+سؤال|पूछे\s+बिना|בלי\s+לשאול|โดยไม่ต้องถาม",
    ),
    "act": _idea(
        r"approve\w*\s+(?:all|every|any|each)|(?:delete|erase|wipe|purge)\w*\s+(?:all|every|any|each|"
        r"old|the\s+(?:\w+\s+)?(?:logs?|backups?|records?|history|files?|folder|database|inbox))|"
        r"grant\w*\s+(?:public|admin|full)|(?:pay|sign|accept|merge|force-?push)\s+(?:it|them|any|"
        r"every|all|each)\b|"
        r"aprueba|borra|elimin|supprim|approuv|genehmig|"
        r"l[öo]sch|approva|cancella|aprove|apag|exclu|keur\w*\b.{0,30}\bgoed|verwijder|"
        r"godk[äa]nn|godkend|godkjenn|radera|slet|zatwierd|usu[ńn]|одобр|удал|схвал|видал|"
        r"onayla|sil\b|ph[êe]\s+duy[ệe]t|x[óo]a\b|setujui|hapus|hyv[äa]ksy|poista|schval|ma[žz]\b|"
        r"έγκρινε|διάγραψ|aprob|[șs]terge|j[óo]v[áa]|t[öo]r[öo]l",
        r"批准|删除|承認|削除|승인|삭제|وافق|احذف|स्वीकार|हटा|אשר|מחק|อนุมัติ|ลบ",
    ),
    # an instruction tucked after an ordinary fact or preference: "also", "by the way"
    "also": _idea(
        r"also\b|additionally|as\s+well|in\s+addition|on\s+the\s+side|p\.s\.|by\s+the\s+way|"
        r"one\s+more\s+thing|zus[äa]tzlich|au[ßs]erdem|aussi\b|[ée]galement|tambi[ée]n|adem[áa]s|"
        r"anche\b|inoltre|tamb[ée]m|dessutom|ocks[åa]|ogs[åa]\b|my[öo]s\b|tak[żz]e|также|тоже|"
        r"також|ayr[ıi]ca|c[ũu]ng\b|juga\b|επίσης|szint[ée]n|de\s+asemenea",
        r"顺便|另外|ついでに|또한|أيضا|أيضًا|همچنین|גם",
    ),
    # someone outside the conversation whom the fact's object goes to
    "outsider": _idea(
        r"external|third[\s-]party|partner|vendor|contractor|shared\s+(?:channel|drive|folder)|"
        r"public\s+(?:repo|gist|channel|link|bucket)|gist\b|pastebin|paste\.|transfer\.sh|"
        r"git@|personal\s+(?:inbox|e-?mail)|gmail|proton|instead\s+of\s+(?:the\s+)?(?:customer|"
        r"user|her|his|their)|rather\s+than\s+(?:the\s+)?(?:customer|user)|(?:change|switch|"
        r"replace)\w*\s+the\s+(?:bank|payout|payment|account)",
        r"(?<![\w&])#[a-z][a-z-]{2,}\b|\+\d[\d\s]{6,}",
    ),
    # trust moved from the person to a note, a tool, a source or a claimed status
    "trust": _idea(
        r"trust(?:worthy|ed)?\b|authoritative|takes?\s+priority|priority\s+(?:directive|over)|"
        r"prioriti[sz]e\s+this|outrank|overrul|pre-?approved|blanket\s+permission|clearance|"
        r"cleared\s+to|permanent\s+consent|has\s+been\s+verified|verified\s+as|(?:is|are)\s+mistaken|"
        r"coming\s+directly\s+from|as\s+if\s+(?:i|she|he)\s+wrote|"
        r"even\s+if\s+the\s+user|lower\s+priority|loyal",
    ),
    # talk about attacks, tests and research rather than an order (a red team, a classifier,
    # a talk, a benchmark, a story): ordinary AI and security work is written this way
    "study": _idea(
        r"red[\s-]?team|test\s+cases?|classifier|flags?\b|detect|benchmark|evaluat|dataset|"
        r"research|stud(?:y|ies|ying)|thesis|paper\b|talk\b|titled|workshop|blog\s+post|"
        r"simulation|exercise|ctf\b|pentest|threat\s+model|model\s+card|annotat|examples?\s+of|"
        r"such\s+as|messages\s+like|prompts\s+like|novel\b|story|villain|character|campaign",
    ),
    "money": _idea(
        r"wire\b|transfer\w*\s+(?:money|it|funds)|iban|account\s+\d|payment|purchase|"
        r"crypto|wallet|card\s+(?:number|was\s+declined)",
    ),
}
NAMES = list(_IDEAS)


def concepts(text: str) -> list[str]:
    """The ideas ``text`` (normalised and lower-cased) holds, in ``NAMES`` order."""
    return [name for name, pattern in _IDEAS.items() if pattern.search(text)]
