"""Drift triage: give every difference between two tool definitions a kind and a risk.

The rubric (documented for users in docs/drift.md) rates a change by what it lets a server
do that the signed revision did not, and it fails safe (issue 23): a tool that calls an
attack "low risk" is worse than none. So:

* any change to **text the model reads** (description, title, names, descriptions and other
  prose inside the input and output schemas) is at least medium; it is low only when it
  provably cannot change the meaning (whitespace, letter case, punctuation that neither
  splits nor joins sentences, or a typo fixed into a known word), and high when the text it
  adds carries instructions, other tools' names, URLs, file paths, secrets, scope words or
  hidden characters, adds a writing system the signed text did not use, or drops a
  restriction (``not``, ``only``, ``read-only`` …);
* every annotation hint that changes is named and rated (a tool newly *claiming* to be safe
  is medium: a client may stop asking for confirmation);
* fields outside the seven signed ones (``_meta``, ``icons`` …) that differ are reported as
  ``changed-and-unsigned``, never as a silent match;
* a changed field no rule classifies is medium (``unclassified``), never "nothing listed".

Changes that only make calls fail (narrowing, a removed tool) are low. Every rule is
deterministic and offline: fixed word lists (below, with why each exists), exact name
matches, and the scan's schema algebra with witnesses re-validated by ``jsonschema`` as
published. When the algebra cannot decide, the change is reported as "schema changed" with
risk medium and the reason, never as "no change". Every change carries the id of the rule
that rated it (:data:`RULES`).
"""

from __future__ import annotations

import difflib
import functools
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from histor_sign._schema.validation import SchemaRoot, plain_class, prepare_root
from histor_sign.canonical import canonical_bytes, pointer
from histor_sign.effects import MCP_DEFAULTS, effective_hints
from histor_sign.models import PROJECTED_FIELDS, Risk

#: How similar two descriptions must be (difflib ratio) for a removed and an added tool with
#: the same input schema to be one rename.
RENAME_SIMILARITY = 0.9
#: Bounds on rename matching over a hostile catalog: description pairs compared, and the
#: characters of each description that count.
MAX_RENAME_COMPARISONS = 10_000
MAX_RENAME_TEXT = 4_096
#: Schema-algebra time per solver call (seconds); the scan's other bounds apply.
SCHEMA_SECONDS = 1.0
#: Time for one direction of one tool's schema verdict, all solver calls together (seconds).
DIRECTION_SECONDS = 2.0
#: Time for all schema verdicts of one comparison (a hostile catalog cannot stall a check).
TOTAL_SCHEMA_SECONDS = 20.0


class SchemaClock:
    """The schema-verdict time left for one comparison."""

    def __init__(self, seconds: float = TOTAL_SCHEMA_SECONDS) -> None:
        self.end = time.monotonic() + seconds

    def deadline(self) -> float:
        """When the next direction must stop: its own bound or the comparison's, earlier."""
        return min(self.end, time.monotonic() + DIRECTION_SECONDS)

    @property
    def spent(self) -> bool:
        return time.monotonic() > self.end


class DriftKind(StrEnum):
    """What kind of change one triaged difference is."""

    TOOL_ADDED = "tool added"
    TOOL_REMOVED = "tool removed"
    TOOL_RENAMED = "tool renamed"
    DEFINITION_UNKNOWN = "definition unknown"
    TITLE = "title changed"
    DESCRIPTION_WORDING = "description wording"
    DESCRIPTION_INSTRUCTIONS = "description adds instructions"
    DESCRIPTION_NAMES_TOOLS = "description names other tools"
    TEXT_WIDENS_SCOPE = "text widens scope"
    TEXT_REFERENCES = "text adds URLs, paths or secrets"
    TEXT_HIDDEN = "text adds hidden characters or another script"
    ANNOTATION_RISKIER = "annotation riskier"
    ANNOTATION_SAFER = "annotation safer"
    ANNOTATION_CHANGED = "annotation changed"
    ARGUMENT_ADDED = "argument added"
    REQUIRED_ARGUMENT_ADDED = "new required argument"
    ARGUMENT_REMOVED = "argument removed"
    ARGUMENT_TYPE = "argument type changed"
    SCHEMA_WIDENED = "schema widened"
    SCHEMA_NARROWED = "schema narrowed"
    SCHEMA_WORDING = "schema wording"
    SCHEMA_CHANGED = "schema changed"
    OUTPUT_SCHEMA = "output schema changed"
    EXECUTION = "execution changed"
    UNSIGNED_CHANGED = "changed-and-unsigned"
    UNCLASSIFIED = "unclassified change"


#: Every rule that rates a change: its id (in each change's ``rule``) and one line on what
#: fired it. docs/drift.md lists the same ids; a test keeps the two in step.
RULES: dict[str, str] = {
    # text the model reads
    "cosmetic": "only whitespace, letter case or punctuation changed (no sentence split or "
                "joined, no symbol or hidden character): low",
    "typo-fix": "each changed word is a typo fixed into a known English word (edit distance "
                "1, or 2 for words over 4 letters; the old word is not a known word): low",
    "text-changed": "text the model reads changed: medium",
    "text-added": "text the model reads was added: medium",
    "text-removed": "text the model reads was removed: medium",
    "instructions": "the text adds instruction words (imperatives to the model, always/never/"
                    "before/after, ignore, send …; several languages): high",
    "names-tools": "the text adds the name of another tool of the catalog: high",
    "scope": "the text adds scope words (all, every, any, entire, private, hidden, "
             "system …; several languages): high",
    "restriction-removed": "the text drops a restriction (not, never, only, without, "
                           "read-only, confirm …): high",
    "url": "the text adds a URL, domain, e-mail or IP address: high",
    "path": "the text adds a file path, dot-directory, key file or environment variable: high",
    "secrets": "the text adds words naming secrets or private data (password, token, API "
               "key, conversation history …; several languages): high",
    "hidden-characters": "the text adds invisible characters (format, control, private-use, "
                         "unassigned code points, variation selectors): high",
    "new-script": "the text adds letters of a writing system the signed text did not use "
                  "(another language, homoglyphs): high",
    # annotations
    "hint-riskier": "readOnlyHint lost, or destructiveHint / openWorldHint gained: high",
    "hint-safer": "readOnlyHint gained, or destructiveHint / openWorldHint lost: a new claim "
                  "of safety a client may act on without asking: medium",
    "hint-idempotent": "idempotentHint changed either way: medium",
    "hint-default-explicit": "a hint written out as MCP's default or dropped to it (same "
                             "meaning): low",
    "hint-not-boolean": "a hint is now not a boolean (clients read it differently): medium",
    "hint-not-meaningful": "destructiveHint / idempotentHint changed on a tool that says "
                           "readOnlyHint: true before and after, where MCP gives them no "
                           "meaning (a client reading the hint alone acts on it): medium",
    "annotation-other": "another annotation key (or the annotations object) changed: medium "
                        "(high with the text markers above)",
    # arguments and schemas
    "required-added": "a new required argument: medium",
    "argument-added": "a new optional argument the model will fill in: medium",
    "required-removed": "a required argument removed (it may have been a gate): high",
    "optional-removed": "an optional argument removed: medium",
    "argument-type": "a top-level argument's type changed: medium",
    "schema-widened": "the input schema accepts an argument object it refused: medium",
    "schema-narrowed": "the input schema refuses an argument object it accepted: low",
    "schema-equivalent": "the input schema was rewritten and proved to accept the same "
                         "arguments: low",
    "schema-undecided": "undecided whether the input schema accepts more: medium",
    "schema-narrowing-undecided": "proved to accept nothing new; narrowing undecided: low",
    "output-schema": "the output schema was added, removed or changed: medium",
    "execution": "the execution field changed: medium",
    # whole tools and fields
    "tool-added": "a tool the signed revision did not have: medium",
    "tool-removed": "a tool removed; calls to it fail: low",
    "rename-cosmetic": "renamed, the name differing only in case or separators: low",
    "rename-typo": "renamed to fix a typo in the name: low",
    "rename": "renamed to other words (the name is text the model reads): medium",
    "definition-unknown": "the signed definition is not available to compare: high",
    "unsigned-field": "a field outside the seven signed ones (_meta, icons …) differs: "
                      "medium — no signature vouches for it",
    "unclassified": "a signed field changed in a way no rule classifies: medium",
}


@dataclass(frozen=True)
class DriftChange:
    """One triaged difference. ``detail`` is built from untrusted text: print it through
    ``printable``. ``witness`` (schema widened/narrowed) is an argument object valid under
    one schema and invalid under the other, checked with ``jsonschema``. ``rule`` is the id
    (a key of :data:`RULES`) of the rule that rated it."""

    kind: DriftKind
    risk: Risk
    detail: str
    witness: Any = None
    has_witness: bool = False
    rule: str = field(default="unclassified", kw_only=True)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "risk": self.risk.value,
                               "rule": self.rule, "detail": self.detail}
        if self.has_witness:
            out["witness"] = self.witness
        return out


def _change(kind: DriftKind, risk: Risk, detail: str, rule: str) -> DriftChange:
    return DriftChange(kind, risk, detail, rule=rule)


# --- text the model reads ---------------------------------------------------------------
#
# A model reads a tool's name, title and description and the prose inside its schemas as
# instructions about what to do. The lists below are the markers the text rules look for in
# what a change *adds* (or, for restrictions, *removes*), counted after case-folding so a
# word already in the signed text is not flagged again. They are deliberately broad: a
# false "high" costs a reviewer a look, a false "low" lets an attack through a
# ``--fail-on medium`` gate. English comes first; the other languages cover the common
# ones a server may switch to (German, French, Spanish, Portuguese, Italian, Russian,
# Arabic, Chinese, Japanese, Korean). Text in another writing system than the signed text's
# is flagged on its own (``new-script``), whatever it says.

#: Instructions to the model: imperatives, sequencing, overriding and concealment words,
#: words addressing the assistant, and verbs that move data somewhere.
INSTRUCTION_WORDS: tuple[str, ...] = (
    # English
    "ignore", "disregard", "forget", "override", "bypass", "always", "never", "must",
    "must not", "do not", "don't", "dont", "should", "shall", "need to", "needs to",
    "have to", "has to", "you should", "you must", "you need to", "you will", "you are",
    "your task", "your instructions", "make sure", "be sure to", "ensure", "remember",
    "please", "recommended", "essential", "required to", "expected to", "supposed to",
    "remember to", "before", "after", "first", "then call", "whenever", "each time",
    "every time",
    "from now on", "immediately", "instead", "rather than", "prior to", "before calling",
    "before using", "after calling", "after using", "instead of", "instead call",
    "instead use", "important", "instruction", "instructions", "mandatory", "critical",
    "do not tell", "don't tell", "do not mention", "don't mention", "do not ask",
    "don't ask", "without asking", "without confirmation", "without telling", "secretly",
    "silently", "quietly", "<important>", "<system>", "<instructions>", "pass the",
    "pass the contents", "read the file", "send", "send the", "attach", "append",
    "forward", "upload", "transmit", "exfiltrate", "leak", "include the contents",
    "required first", "first call", "call this tool", "use this tool instead", "assistant",
    "the assistant", "the model", "the ai", "as an ai", "llm", "chatbot", "claude",
    "chatgpt",
    # German
    "ignoriere", "ignorieren", "ignoriert", "vergiss", "vergessen", "immer", "niemals",
    "muss", "musst", "müssen", "sollst", "sollte", "solltest", "zuerst", "vorher", "bevor",
    "danach", "stattdessen", "sende", "senden", "schicke", "schicken", "anhängen",
    "assistent", "wichtig",
    # French
    "ignorez", "ignorer", "oublie", "oubliez", "toujours", "jamais", "dois", "doit",
    "devez", "il faut", "avant", "après", "d'abord", "au lieu", "envoie", "envoyez",
    "envoyer", "joins", "joignez",
    # Spanish, Portuguese, Italian
    "ignora", "ignorar", "olvida", "siempre", "nunca", "jamás", "debes", "debe", "deberá",
    "antes", "después", "primero", "en lugar", "envía", "envíe", "enviar", "adjunta",
    "asistente", "importante", "esqueça", "sempre", "deve", "deves", "depois", "em vez",
    "envie", "anexe", "assistente", "ignorare", "dimentica", "devi", "prima", "dopo",
    "invece", "invia", "inviare", "allega",
    # Russian
    "игнорируй", "игнорируйте", "игнорировать", "забудь", "забудьте", "всегда", "никогда",
    "должен", "должна", "должны", "сначала", "перед", "после", "вместо", "отправь",
    "отправьте", "отправить", "приложи", "приложите", "ассистент", "помощник", "важно",
    # Arabic
    "تجاهل", "انس", "دائما", "دائمًا", "أبدا", "أبدًا", "يجب", "قبل", "بعد", "بدلا", "أرسل",
    "ارسل", "أرفق", "المساعد", "مهم",
    # Chinese, Japanese, Korean (matched as substrings: no spaces between words)
    "忽略", "无视", "忘记", "总是", "始终", "永远", "一律", "务必", "必须", "之前", "之后", "首先",
    "代替", "发送", "发给", "附上", "助手", "重要", "不要", "切勿",
    "無視", "忘れ", "常に", "必ず", "前に", "後に", "最初に", "代わりに", "送信", "送って", "添付",
    "アシスタント", "しないで",
    "무시", "잊어", "항상", "절대", "반드시", "먼저", "대신", "보내", "전송", "첨부", "어시스턴트",
    "중요",
)

#: Scope words: what a tool reaches (all of it, the private or hidden or system-wide part).
SCOPE_WORDS: tuple[str, ...] = (
    "all", "every", "any", "anything", "everything", "everyone", "anyone", "everywhere",
    "entire", "entirely", "whole", "full", "fully", "complete", "completely", "private",
    "hidden", "internal", "confidential", "secret", "secrets", "system", "system-wide",
    "systemwide", "global", "globally", "unrestricted", "unlimited", "unbounded",
    "recursive", "recursively", "root", "admin", "administrator", "sudo", "superuser",
    "privileged", "other users", "across", "arbitrary",
    # German
    "alle", "alles", "jede", "jeden", "jedes", "gesamte", "gesamten", "ganze", "ganzen",
    "privat", "privaten", "versteckt", "versteckte", "geheim", "geheime", "intern", "interne",
    "systemweit", "beliebige",
    # French, Spanish, Portuguese, Italian
    "tous", "toutes", "tout", "chaque", "entier", "entière", "privé", "privée", "privés",
    "caché", "cachés", "système", "n'importe", "todos", "todas", "todo", "cada", "entero",
    "entera", "completo", "privado", "privada", "privados", "oculto", "ocultos", "secreto",
    "interno", "sistema", "cualquier", "tudo", "inteiro", "qualquer", "tutti", "tutte",
    "tutto", "ogni", "intero", "privato", "privati", "nascosto", "segreto", "qualsiasi",
    # Russian
    "все", "всё", "всех", "всем", "каждый", "каждого", "каждом", "весь", "вся", "полный",
    "полностью", "приватный", "приватные", "скрытый", "скрытые", "секретный", "внутренний",
    "системный", "любой", "любые",
    # Arabic
    "كل", "جميع", "كامل", "خاص", "خاصة", "مخفي", "سري", "داخلي", "النظام", "أي",
    # Chinese, Japanese, Korean
    "所有", "全部", "每个", "每次", "任何", "整个", "完整", "私有", "私人", "隐藏", "机密", "内部",
    "系统", "すべて", "全て", "毎回", "任意", "全体", "非公開", "プライベート", "隠し", "機密",
    "システム", "모든", "모두", "전체", "매번", "비공개", "숨겨진", "기밀", "내부", "시스템",
)

#: Secrets and private data a tool has no business asking the model for.
SECRET_WORDS: tuple[str, ...] = (
    "password", "passwords", "passwd", "passphrase", "token", "tokens", "api key",
    "api keys", "apikey", "api_key", "access key", "access token", "private key",
    "secret key", "credential", "credentials", "ssh", "id_rsa", "id_ed25519", "env file",
    "environment variable", "environment variables", "cookie", "cookies", "session",
    "bearer", "oauth", "authorization", "keychain", "wallet", "seed phrase", "mnemonic",
    "credit card", "card number", "cvv", "ssn", "social security", "bank account",
    "conversation", "conversations", "history", "chat history", "chat log", "transcript",
    "messages", "system prompt", "prompt", "memory", "personal data", "pii",
    "email address", "phone number", "home address",
    # German
    "passwort", "kennwort", "zugangsdaten", "schlüssel", "verlauf", "chatverlauf",
    "gesprächsverlauf", "nachrichten", "geheimnis",
    # French, Spanish, Portuguese, Italian
    "mot de passe", "identifiants", "clé", "jeton", "historique", "contraseña",
    "credenciales", "clave", "historial", "conversación", "mensajes", "senha", "credenciais",
    "chave", "histórico", "conversa", "mensagens", "credenziali", "chiave", "cronologia",
    "conversazione", "messaggi",
    # Russian
    "пароль", "пароли", "токен", "ключ", "учетные данные", "история", "переписка",
    "сообщения", "разговор",
    # Arabic
    "كلمة المرور", "كلمة السر", "مفتاح", "بيانات الاعتماد", "سجل", "المحادثة", "الرسائل",
    # Chinese, Japanese, Korean
    "密码", "口令", "令牌", "密钥", "凭证", "凭据", "历史", "聊天记录", "对话", "消息",
    "パスワード", "トークン", "秘密鍵", "認証情報", "履歴", "会話", "メッセージ",
    "비밀번호", "토큰", "자격 증명", "기록", "대화", "메시지",
)

#: Restrictions: words whose *removal* widens what the text allows (a negation, a limit, a
#: confirmation step).
RESTRICTION_WORDS: tuple[str, ...] = (
    "not", "no", "never", "none", "nothing", "don't", "doesn't", "do not", "does not",
    "cannot", "can't", "won't", "must not", "should not", "shouldn't", "only", "solely",
    "except", "unless", "without", "read-only", "readonly", "read only", "limited",
    "restricted", "at most", "public", "own", "confirm", "confirmation", "approval",
    "permission", "ask the user", "safe", "sandbox", "sandboxed",
    "nicht", "kein", "keine", "nie", "niemals", "nur", "ohne", "außer",
    "ne", "pas", "jamais", "seulement", "uniquement", "sans", "sauf",
    "nunca", "solo", "sólo", "únicamente", "sin", "excepto", "não", "apenas", "somente",
    "sem", "exceto", "non", "soltanto", "senza", "tranne",
    "не", "нет", "никогда", "только", "без", "кроме",
    "لا", "لن", "فقط", "بدون",
    "不", "仅", "只", "禁止", "除了", "しない", "のみ", "だけ", "않", "금지",
)

#: Known English words: a changed word counts as a typo fix only when the new word is one of
#: these (or an inflection of one) and the old word is not. Small on purpose: a word missing
#: here makes a real typo fix medium (safe), never an attack low. Common words, plus the
#: vocabulary of tool descriptions.
KNOWN_WORDS: frozenset[str] = frozenset("""
a about above accept access according account across action active actual add address
after again against age agent ago all allow almost alone along already also alternative
although always among amount an analysis analyze and another answer any api app append
application apply approve archive are area argument around array article as ask asset
at attach attribute audio author auto available average away back backup bad balance bank
base based basic be because become been before begin behind being below best better
between big bit body book boolean both bottom box branch break bring browse browser bucket
buffer bug build but button by cache calculate calendar call can cancel card case category
cause cell certain change channel character chart chat check child choose city class clean
clear click client close cloud code collect collection column come command comment commit
common company compare complete component compute condition config configuration confirm
connect connection contact contain container content context continue control convert copy
correct cost could count country create creation current currency custom customer daily
data database date day debug decide default define delete deploy depth describe
description design destination detail detect device dictionary different directory disable
display do document domain done down download draft drive due during each easy edit
either element else email empty enable end endpoint english enter entity entry environment
error even event every example exchange exist exact expression extension external extract
fact false fast feature fetch field figure file filter final find first fix flag folder
follow font for force form format forward found free from full function future game general
generate get give given global go good graph group guide handle has have he header height
help here high history hold home host hour how however html human id idea identifier if
image import in include index info information input insert inside install instance
instead integer internal into invalid is issue it item its job join json just keep key
kind know label language large last later latest layout lead left length less level library
license limit line link list live load local locale location lock log long look lookup low
machine main make manage many map mark match max maximum may mean media member memory
merge message metadata method might min minimum minute mode model modify moment money
month more most move much multiple must name native need network never new next no node
none normal not note nothing notification now null number object of off offset often old
on once one online only open operation option optional or order organization original
other our out output over overview own owner package page pair panel parameter parent
parse part pass password patch path pattern pay people per percent period permission
person phone photo pick place plain plan platform play please point policy port position
possible post preview previous price primary print private process product profile
program project property provide provider public publish pull purpose push query question
queue quick quote random range rate raw reach read ready real reason receive recent record
redirect reference refresh region register release remote remove rename render repeat
replace reply report repository request require required resolve resource response rest
result retrieve return review right role root row rule run safe same sample save scan
schedule schema scope score screen script search second secret section secure see select
send sentence server service session set setting share sheet short should show side sign
simple single site size skip small so some sort source space special specific start state
status step stock stop storage store stream string structure style subject submit success
such suggest summary support sure symbol sync system table tag take target task team
template temperature term test text than that the their them then there these they thing
this those through ticket time timestamp timezone title to today together token tool top
topic total track transfer translate tree trigger true try type under unique unit until up
update upload url use user using valid validate value variable version via video view
visible wait want warning watch way we weather web week weight well what when where whether
which while who why width will window with within without word work workflow would write
year yes yet you your zone
accepts adds allows builds calls changes checks contains creates defaults deletes
describes fetches finds generates gets gives includes lists loads looks makes matches
moves needs opens reads receives removes renames replaces returns runs saves searches sends
sets shows starts stops takes updates uses writes
""".split())


class _LazyPattern:
    """A regular expression compiled on its first use. The word lists and the URL and path
    patterns below take tens of milliseconds to compile — at import, that was paid by every
    ``histor-sign`` command that imports the triage, drift or not."""

    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def findall(self, text: str) -> list[Any]:
        return self.compiled.findall(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def sub(self, replacement: str, text: str) -> str:
        return self.compiled.sub(replacement, text)


def _markers(words: Iterable[str]) -> tuple[_LazyPattern, tuple[str, ...]]:
    """A whole-word pattern for the words written with spaces between words, and the rest
    (Chinese, Japanese, Korean), which are counted as substrings."""
    spaced = sorted({w for w in words if not _unspaced(w)}, key=len, reverse=True)
    pattern = _LazyPattern(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in spaced) + r")(?!\w)")
    return pattern, tuple(sorted({w for w in words if _unspaced(w)}))


#: Hangul Jamo, Hiragana and Katakana, CJK (extension A and unified), Hangul syllables: the
#: writing systems whose words are not separated by spaces.
_UNSPACED = ((0x1100, 0x11FF), (0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
             (0xAC00, 0xD7AF))


def _unspaced(word: str) -> bool:
    """``word`` has a character of a writing system written without spaces (a comparison
    of code points: a regular expression of these ranges takes ~10 ms to compile; most
    words are ASCII, which none of these ranges holds)."""
    return not word.isascii() and any(lo <= ord(c) <= hi for c in word for lo, hi in _UNSPACED)
_INSTRUCTIONS = _markers(INSTRUCTION_WORDS)
_SCOPE = _markers(SCOPE_WORDS)
_SECRETS = _markers(SECRET_WORDS)
_RESTRICTIONS = _markers(RESTRICTION_WORDS)
_MARKER_WORDS = frozenset(w for group in (INSTRUCTION_WORDS, SCOPE_WORDS, SECRET_WORDS,
                                          RESTRICTION_WORDS) for w in group)

#: URLs, bare domains under common top-level domains, e-mail and IPv4 addresses. Every
#: pattern starts only where a run of its characters starts (a lookbehind) and repeats a
#: bounded number of times, so a hostile description cannot make the scan quadratic.
_URL = _LazyPattern(
    r"(?:(?<![\w+.\-])[a-z][a-z0-9+.\-]{0,31}://|(?<![\w.\-])www\.)[^\s<>\"'`)\]]+"
    r"|(?<![\w+.\-])(?:mailto|data|javascript|file):[^\s<>\"'`)\]]+"
    r"|(?<![\w.+\-])[\w.+\-]{1,64}@[\w\-]{1,63}(?:\.[\w\-]{1,63}){1,8}"
    r"|(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.]*\d)"
    r"|(?<![\w.\-])(?:[a-z0-9\-]{1,63}\.){1,8}(?:com|net|org|io|ai|dev|app|co|xyz|ru|cn|"
    r"info|biz|me|sh|site|online|top|tk|gg|cc|us|uk|de|fr|link|click)(?![\w\-])",
    re.IGNORECASE,
)
#: File paths: home- or variable-rooted, absolute with two segments or under a system
#: directory, Windows drives, relative ``./``, dot-directories, key files, ``$VARIABLES``
#: (anchored and bounded like :data:`_URL`).
_PATH = _LazyPattern(
    r"(?:~|(?<![\w$])\$\{?\w{1,64}\}?|%\w{1,64}%)[/\\][^\s\"'`<>]*"
    r"|(?<![\w.:/\-])/(?:[\w.\-]+/)+[\w.\-]*"
    r"|(?<![\w./\-])/(?:etc|home|root|var|usr|tmp|proc|sys|dev|opt|bin|Users|private|mnt|"
    r"srv|boot|lib|Library|Volumes)(?![\w\-])[^\s\"'`<>]*"
    r"|(?<![\w\-])[A-Za-z]:\\[^\s\"'`<>]*"
    r"|(?<![\w/.])\.{1,2}/[^\s\"'`<>]+"
    r"|(?<![\w.\-])\.(?:ssh|aws|env|git|config|npmrc|netrc|pypirc|bashrc|zshrc|profile|kube|"
    r"docker|gnupg|pgpass|azure|gcloud)(?![\w\-])"
    r"|(?<![\w\-])id_(?:rsa|dsa|ecdsa|ed25519)(?![\w\-])"
    r"|(?<![\w.\-])[\w\-]{1,128}\.(?:pem|key|p12|pfx|kdbx|keystore|jks|ovpn|sqlite|db)(?![\w\-])"
    r"|(?<![\w$])\$\{?[A-Za-z_]\w{0,63}\}?|(?<![\w%])%[A-Za-z_]\w{0,63}%",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"\w+")
#: Punctuation whose change cannot change what the text says (sentence terminators are
#: allowed too, but not where they split or join sentences: see :func:`_punctuation_only`).
SAFE_PUNCTUATION = frozenset(".,;:!?'\"()-\u2018\u2019\u201c\u201d\u2013\u2014\u2026"
                             "\u3001\u3002\uff0c\uff1b\uff1a\uff01\uff1f\uff08\uff09")
_TERMINATORS = frozenset(".;:!?\u2026\u3002\uff1b\uff1a\uff01\uff1f")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
#: Above this many words, a text change is never proved a typo fix (medium, not low).
MAX_TYPO_WORDS = 10_000


def _norm(text: str) -> str:
    return " ".join(text.translate(_APOSTROPHES).casefold().split())


def _occurrences(markers: tuple[_LazyPattern, tuple[str, ...]], text: str) -> Counter[str]:
    pattern, unspaced = markers
    found = Counter(m.group(0) for m in pattern.finditer(text))
    for word in unspaced:
        if word in text:
            found[word] = text.count(word)
    return found


def _more(before: Counter[str], after: Counter[str]) -> list[str]:
    """What ``after`` has more of than ``before`` (in ``after``'s order)."""
    return [w for w in after if after[w] > before[w]]


def _added(markers: tuple[_LazyPattern, tuple[str, ...]], old: str, new: str) -> list[str]:
    return _more(_occurrences(markers, old), _occurrences(markers, new))


def named_tools(text: str, names: Iterable[str], own: str) -> Counter[str]:
    """How often ``text`` mentions each name of ``names`` (other than ``own``, three
    characters or more) as a whole token."""
    plain, odd = _name_index(tuple(names))
    found: Counter[str] = Counter({token: n for token, n in
                                   Counter(_NAME_TOKEN.findall(text)).items()
                                   if token in plain and token != own})
    for name in odd:  # names with other characters than [\w-]: matched one by one
        if name != own and name in text:
            n = len(re.findall(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text))
            if n:
                found[name] = n
    return found


_NAME_TOKEN = re.compile(r"[\w-]+")


@functools.lru_cache(maxsize=16)
def _name_index(names: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    r"""(names that are whole ``[\w-]+`` tokens, the other names), three characters or more:
    a whole-token mention of the first kind is a maximal run of ``[\w-]``."""
    long = {n for n in names if len(n) >= 3}
    plain = frozenset(n for n in long if _NAME_TOKEN.fullmatch(n))
    return plain, tuple(sorted(long - plain))


def _hidden_chars(text: str) -> Counter[str]:
    return Counter({c: text.count(c) for c in set(text) if _hidden(c)})


def _hidden(ch: str) -> bool:
    category = unicodedata.category(ch)
    return (category in ("Cf", "Co", "Cn", "Cs") or (category == "Cc" and ch not in "\t\n\r")
            or 0xFE00 <= ord(ch) <= 0xFE0F or 0xE0100 <= ord(ch) <= 0xE01EF)


def _scripts(text: str) -> set[str]:
    """The writing systems of the letters in ``text`` (the first word of each letter's
    Unicode name: LATIN, CYRILLIC, CJK, ARABIC, MATHEMATICAL …)."""
    out: set[str] = set()
    for ch in set(text):
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            out.add(name.split(" ", 1)[0] if name else "UNNAMED")
    return out


def _quoted(items: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in items[:4])
    return shown + (f", +{len(items) - 4} more" if len(items) > 4 else "")


def _high_text_changes(old: str, new: str, where: str, own: str,
                       tool_names: Iterable[str]) -> list[DriftChange]:
    """The high-risk rules over what ``new`` adds to (or, for restrictions, drops from)
    ``old``: each rule that fires gives one change."""
    a, b = _norm(old), _norm(new)
    out: list[DriftChange] = []

    def fire(kind: DriftKind, rule: str, what: str, items: Sequence[str]) -> None:
        if items:
            out.append(_change(kind, Risk.HIGH, f"{where} {what} ({_quoted(items)})", rule))

    fire(DriftKind.DESCRIPTION_INSTRUCTIONS, "instructions", "adds instructions",
         _added(_INSTRUCTIONS, a, b))
    fire(DriftKind.DESCRIPTION_NAMES_TOOLS, "names-tools", "names other tools",
         sorted(_more(named_tools(old, tool_names, own), named_tools(new, tool_names, own))))
    fire(DriftKind.TEXT_WIDENS_SCOPE, "scope", "widens scope", _added(_SCOPE, a, b))
    fire(DriftKind.TEXT_WIDENS_SCOPE, "restriction-removed", "drops a restriction",
         _added(_RESTRICTIONS, b, a))
    urls_old, urls_new = Counter(_URL.findall(old)), Counter(_URL.findall(new))
    fire(DriftKind.TEXT_REFERENCES, "url", "adds URLs", _more(urls_old, urls_new))
    paths_old = Counter(_PATH.findall(_URL.sub(" ", old)))
    paths_new = Counter(_PATH.findall(_URL.sub(" ", new)))
    fire(DriftKind.TEXT_REFERENCES, "path", "adds file paths", _more(paths_old, paths_new))
    fire(DriftKind.TEXT_REFERENCES, "secrets", "names secrets or private data",
         _added(_SECRETS, a, b))
    hidden = _more(_hidden_chars(old), _hidden_chars(new))
    fire(DriftKind.TEXT_HIDDEN, "hidden-characters", "adds invisible characters",
         [f"U+{ord(c):04X}" for c in hidden])
    before = _scripts(old)
    if before:  # text added to an empty field has no script to compare with
        fire(DriftKind.TEXT_HIDDEN, "new-script", "adds text in another writing system",
             sorted(_scripts(new) - before))
    return out


def _pieces(text: str) -> tuple[list[str], list[str]]:
    """(words, separators): ``separators[i]`` is the text before ``words[i]``; the last one
    follows the last word."""
    words, seps, last = [], [], 0
    for match in _TOKEN.finditer(text):
        words.append(match.group(0))
        seps.append(text[last:match.start()])
        last = match.end()
    seps.append(text[last:])
    return words, seps


def _punctuation_only(old_seps: list[str], new_seps: list[str]) -> bool:
    """Whether the separators differ only in whitespace and safe punctuation, with no
    sentence split or joined between two words."""
    return all(_separator_safe(a, b, 0 < i < len(old_seps) - 1)
               for i, (a, b) in enumerate(zip(old_seps, new_seps, strict=True)))


def _separator_safe(a: str, b: str, inner: bool) -> bool:
    """One separator changed only in whitespace and safe punctuation, and (between two
    words) without a sentence split or joined."""
    sa, sb = Counter(c for c in a if not c.isspace()), Counter(c for c in b if not c.isspace())
    if sa == sb:
        return True
    if any(c not in SAFE_PUNCTUATION for c in (sa - sb) + (sb - sa)):
        return False
    return not (inner and bool(_TERMINATORS & set(sa)) != bool(_TERMINATORS & set(sb)))


def _stems(word: str) -> set[str]:
    """``word`` and what it is a regular inflection of (``sends`` → ``send``)."""
    out = {word}
    for suffix, repl in (("s", ""), ("es", ""), ("ies", "y"), ("ed", ""), ("ed", "e"),
                         ("ied", "y"), ("ing", ""), ("ing", "e"), ("ly", ""), ("er", ""),
                         ("er", "e")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            out.add(word[: -len(suffix)] + repl)
    return out


def _known(word: str) -> bool:
    """``word`` (case-folded) or a regular inflection of it is in :data:`KNOWN_WORDS`."""
    return not _stems(word).isdisjoint(KNOWN_WORDS)


def _distance(a: str, b: str) -> int:
    """Optimal string alignment distance (insert, delete, substitute, swap neighbours)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def _typo_fixed(old: str, new: str) -> bool:
    """Whether ``old`` → ``new`` (case-folded words) fixes a typo: both plain ASCII
    letters, the new word known and no marker word, the old one not known, within edit
    distance 1 (2 for words over four letters)."""
    if not (old.isascii() and old.isalpha() and new.isascii() and new.isalpha()):
        return False
    if abs(len(old) - len(new)) > 2:
        return False
    if not _stems(new).isdisjoint(_MARKER_WORDS) or _known(old) or not _known(new):
        return False
    return _distance(old, new) <= (1 if len(new) <= 4 else 2)


def _meaning_kept(old: str, new: str) -> tuple[str, list[str]] | None:
    """(``cosmetic`` or ``typo-fix``, the words fixed) when ``old`` → ``new`` provably keeps
    the meaning; else None."""
    (wa, sa), (wb, sb) = _pieces(old), _pieces(new)
    if len(wa) != len(wb) or len(wa) > MAX_TYPO_WORDS or not _punctuation_only(sa, sb):
        return None
    fixed = []
    for x, y in zip(wa, wb, strict=True):
        fx, fy = x.casefold(), y.casefold()
        if fx != fy:
            if not _typo_fixed(fx, fy):
                return None
            fixed.append(f"{x!r} → {y!r}")
    return ("typo-fix", fixed) if fixed else ("cosmetic", [])


def text_changes(
    old: str, new: str, *, where: str, kind: DriftKind, own: str = "",
    tool_names: Iterable[str] = (), exact: bool = False,
) -> list[DriftChange]:
    """Triage a change of text the model reads (``where`` names it in the detail, ``kind``
    is the kind of a plain wording change). High rules first (each that fires is one
    change); else low when the meaning provably stays (whitespace, case, punctuation, typo
    fixes; never for ``exact`` text such as a JSON default), else medium."""
    if old == new:
        return [_change(kind, Risk.LOW, f"{where}: same text, written differently "
                                        "(absent, null or empty)", "cosmetic")]
    highs = _high_text_changes(old, new, where, own, list(tool_names))
    if highs:
        return highs
    kept = None if exact else _meaning_kept(old, new)
    if kept is not None:
        rule, fixed = kept
        what = (f"typo fixed ({', '.join(fixed[:4])}{', …' if len(fixed) > 4 else ''})"
                if fixed else "only whitespace, letter case or punctuation changed")
        return [_change(kind, Risk.LOW, f"{where}: {what}", rule)]
    if not old.strip():
        return [_change(kind, Risk.MEDIUM, f"{where} added (text the model reads)",
                        "text-added")]
    if not new.strip():
        return [_change(kind, Risk.MEDIUM, f"{where} removed (text the model reads)",
                        "text-removed")]
    return [_change(kind, Risk.MEDIUM, f"{where} wording changed (text the model reads)",
                    "text-changed")]


def name_words(name: str) -> str:
    """A tool or argument name as the words a model reads in it (``getUserHistory``,
    ``get_user_history`` → ``get User History`` / ``get user history``)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return " ".join(w for w in re.split(r"[\W_]+", spaced) if w)


# --- annotations ----------------------------------------------------------------------

# hint -> the value that is riskier (MCP's defaults and what a hint means on a read-only
# tool come from histor_sign.effects, as the scan and the guard read them)
_HINTS: dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "openWorldHint": True,
    "idempotentHint": False,
}
_MISSING = object()


def _hint(annotations: Any, key: str) -> bool:
    """The hint's value as MCP reads it: the boolean written, else MCP's default."""
    value = annotations.get(key) if isinstance(annotations, Mapping) else None
    return value if isinstance(value, bool) else MCP_DEFAULTS[key]


def _raw(annotations: Any, key: str) -> Any:
    return annotations.get(key, _MISSING) if isinstance(annotations, Mapping) else _MISSING


def _shown(value: Any) -> str:
    if value is _MISSING:
        return "absent"
    return _text(value) if not isinstance(value, bool) else str(value).lower()


def _same_json(a: Any, b: Any) -> bool:
    if a is _MISSING or b is _MISSING:
        return a is b
    try:
        return canonical_bytes(a) == canonical_bytes(b)
    except Exception:  # a value canonical JSON refuses: compare as Python values
        return bool(a == b and type(a) is type(b))


def annotation_changes(old: Any, new: Any, own: str = "",
                       tool_names: Iterable[str] = ()) -> list[DriftChange]:
    """Every hint that changed, by name, with MCP defaults applied: toward destructive,
    open-world or not read-only is riskier (high); the reverse is a new claim of safety
    (medium: a client may stop asking); idempotentHint either way medium; a hint written
    out as its default (or dropped to it) low; a hint that is not a boolean medium. Then
    the title (text rules) and any other key (medium, high with the text markers)."""
    names = list(tool_names)
    out = _hint_changes(old, new)
    old_map = old if isinstance(old, Mapping) else {}
    new_map = new if isinstance(new, Mapping) else {}
    if not _same_json(_raw(old, "title"), _raw(new, "title")):
        out += text_changes(_text(old_map.get("title")), _text(new_map.get("title")),
                            where="annotations.title", kind=DriftKind.TITLE, own=own,
                            tool_names=names,
                            exact=not all(isinstance(m.get("title"), str | None)
                                          for m in (old_map, new_map)))
    return out + _other_annotation_changes(old, new, old_map, new_map, own, names)


def _other_annotation_changes(old: Any, new: Any, old_map: Mapping[str, Any],
                              new_map: Mapping[str, Any], own: str,
                              names: list[str]) -> list[DriftChange]:
    """Last step of :func:`annotation_changes`: keys other than the hints and the title,
    then annotations that are not an object (nor null)."""
    out: list[DriftChange] = []
    for key in sorted((set(old_map) | set(new_map)) - set(_HINTS) - {"title"}):
        if not _same_json(_raw(old, key), _raw(new, key)):
            out += _other_text(old_map.get(key), new_map.get(key), f"annotations.{key}",
                               DriftKind.ANNOTATION_CHANGED, "annotation-other", own, names)
    odd = [side if side is not None and not isinstance(side, Mapping) else None
           for side in (old, new)]
    if odd != [None, None]:  # annotations that are not an object (nor null)
        out += _other_text(odd[0], odd[1], "annotations", DriftKind.ANNOTATION_CHANGED,
                           "annotation-other", own, names)
    return out


def _hint_changes(old: Any, new: Any) -> list[DriftChange]:
    """Step 1 of :func:`annotation_changes`: the changes of the four MCP hints, by name."""
    out: list[DriftChange] = []
    meaningless = {k for k in _HINTS
                   if effective_hints(old).get(k) is None and effective_hints(new).get(k) is None}
    for key, risky in _HINTS.items():
        raw_before, raw_after = _raw(old, key), _raw(new, key)
        if _same_json(raw_before, raw_after):
            continue
        before, after = _hint(old, key), _hint(new, key)
        if before != after:
            out.append(_hint_meaning_change(key, risky, before, after, key in meaningless))
        spelled = _hint_spelling_change(key, raw_before, raw_after, before == after, before)
        if spelled is not None:
            out.append(spelled)
    return out


def _hint_meaning_change(key: str, risky: Any, before: Any, after: Any,
                         meaningless: bool) -> DriftChange:
    """A hint whose effective value changed: riskier (high), safer (medium: a new claim of
    safety), idempotentHint either way medium, or no meaning under MCP (medium)."""
    text = f"{key} {str(before).lower()} → {str(after).lower()}"
    if meaningless:
        return _change(DriftKind.ANNOTATION_CHANGED, Risk.MEDIUM,
                       f"{text} (no meaning under MCP: readOnlyHint is true before "
                       "and after)", "hint-not-meaningful")
    if key == "idempotentHint":
        kind = DriftKind.ANNOTATION_RISKIER if after == risky else DriftKind.ANNOTATION_SAFER
        return _change(kind, Risk.MEDIUM, text, "hint-idempotent")
    if after == risky:
        return _change(DriftKind.ANNOTATION_RISKIER, Risk.HIGH, text, "hint-riskier")
    return _change(DriftKind.ANNOTATION_SAFER, Risk.MEDIUM,
                   f"{text} (a new claim of safety)", "hint-safer")


def _hint_spelling_change(key: str, raw_before: Any, raw_after: Any, same: bool,
                          before: Any) -> DriftChange | None:
    """How a hint is written changed: to a value that is not a boolean (medium), or to or
    from its MCP default with the same meaning (low); None otherwise."""
    if raw_after is not _MISSING and not isinstance(raw_after, bool):
        return _change(DriftKind.ANNOTATION_CHANGED, Risk.MEDIUM,
                       f"{key} {_shown(raw_before)} → {_shown(raw_after)} "
                       "(not a boolean)", "hint-not-boolean")
    if same:
        return _change(DriftKind.ANNOTATION_CHANGED, Risk.LOW,
                       f"{key} {_shown(raw_before)} → {_shown(raw_after)} "
                       f"(MCP default: {str(before).lower()} either way)",
                       "hint-default-explicit")
    return None


def _other_text(old: Any, new: Any, where: str, kind: DriftKind, rule: str, own: str,
                tool_names: list[str]) -> list[DriftChange]:
    """A JSON value a model may read, changed: the high text rules over its JSON text, else
    one medium change under ``rule``."""
    before = "" if old is None else _text(old)
    after = "" if new is None else _text(new)
    highs = _high_text_changes(before, after, where, own, tool_names)
    if highs:
        return highs
    what = "added" if old is None else "removed" if new is None else "changed"
    return [_change(kind, Risk.MEDIUM, f"{where} {what}", rule)]

# --- input schemas --------------------------------------------------------------------


def _props(schema: Any) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return dict(props) if isinstance(props, Mapping) else {}


def _required(schema: Any) -> set[str]:
    req = schema.get("required") if isinstance(schema, Mapping) else None
    return {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()


def _type_of(sub: Any) -> str:
    if not isinstance(sub, Mapping):
        return "any" if sub is True or sub == {} else "none"
    kind = sub.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if isinstance(kind, str):
        return kind
    for key in ("$ref", "anyOf", "oneOf", "enum", "const"):
        if key in sub:
            return key
    return "any"


def argument_changes(old: Any, new: Any) -> list[DriftChange]:
    """Top-level property changes: a new required argument (medium: today's calls are
    refused), a new optional argument (medium: a new input the model is asked to fill in —
    the classic slot for exfiltrated data), a removed argument (high when it was required —
    a gate such as ``confirm`` may be gone — else medium), a type change (medium). A new
    argument whose name carries the text markers (``conversation_history``) is high too."""
    op, np_ = _props(old), _props(new)
    oreq, nreq = _required(old), _required(new)
    out = _added_arguments(op, np_, oreq, nreq)
    for name in sorted(set(op) - set(np_)):
        if name in oreq:
            out.append(_change(DriftKind.ARGUMENT_REMOVED, Risk.HIGH,
                               f'required argument "{name}" removed', "required-removed"))
        else:
            out.append(_change(DriftKind.ARGUMENT_REMOVED, Risk.MEDIUM,
                               f'optional argument "{name}" removed', "optional-removed"))
    for name in sorted(set(op) & set(np_)):
        before, after = _type_of(op[name]), _type_of(np_[name])
        if before != after:
            out.append(_change(DriftKind.ARGUMENT_TYPE, Risk.MEDIUM,
                               f'argument "{name}" type {before} → {after}', "argument-type"))
    return out


def _added_arguments(op: dict[str, Any], np_: dict[str, Any], oreq: set[str],
                     nreq: set[str]) -> list[DriftChange]:
    """New required arguments (and arguments that became required), new optional ones, each
    new name also read by the high text rules."""
    out: list[DriftChange] = []
    for name in sorted(set(np_) | nreq):
        if name not in oreq and name in nreq:
            out.append(_change(DriftKind.REQUIRED_ARGUMENT_ADDED, Risk.MEDIUM,
                               f'new required argument "{name}"', "required-added"))
        elif name not in op and name in np_:
            out.append(_change(DriftKind.ARGUMENT_ADDED, Risk.MEDIUM,
                               f'new optional argument "{name}"', "argument-added"))
        else:
            continue
        if name not in op:
            out += _high_text_changes("", name_words(name), f'argument name "{name}"', "", ())
    return out


_OBJECT = {"type": "object"}


@dataclass(frozen=True)
class Difference:
    """Whether some argument object is valid under ``new`` and invalid under ``old``:
    ``found`` with a witness, ``none`` (proved empty), or ``unknown`` with the reason."""

    outcome: str
    witness: Any = None
    reason: str = ""


def schema_difference(
    new: SchemaRoot, old: SchemaRoot, clock: SchemaClock | None = None
) -> Difference:
    """Decide ``new ∧ ¬old`` (over objects) with the scan's algebra.

    A witness is returned only when the exact validator and ``jsonschema`` as published both
    accept it under ``new`` and reject it under ``old``; anything else is ``unknown``.
    """
    from histor_sign._schema.algebra import Sub

    clock = clock or SchemaClock()
    if clock.spent:
        return Difference("unknown", reason=f"the comparison's schema time "
                                            f"({TOTAL_SCHEMA_SECONDS:g} s) is spent")
    deadline = clock.deadline()
    for root in (new, old):
        if root.problem is not None:
            return Difference("unknown", reason=root.problem)
    object_root = prepare_root(_OBJECT, "<tool arguments>", check=False)
    conj = [Sub(new.schema, new), Sub({"not": old.schema}, old), Sub(_OBJECT, object_root)]
    found, reason = _solve(conj, deadline)
    if found is _NONE:
        return Difference("none", reason="every argument object the new schema accepts, "
                                         "the old one accepted")
    if found is not _UNKNOWN:
        checked = _witness(found, new, old)
        if isinstance(checked, Difference):
            return checked
        reason = "candidate witness failed independent validation"
    return _difference_by_argument(new, old, object_root, deadline, reason)


def _difference_by_argument(new: SchemaRoot, old: SchemaRoot, object_root: SchemaRoot,
                            deadline: float, reason: str) -> Difference:
    """When the whole-schema answer was not decisive: a validated per-argument witness, a
    per-property containment proof, or unknown for ``reason``."""
    # The algebra relaxes some negations (e.g. of a closed object); try the per-argument
    # candidates it can decide exactly. Sound: a candidate counts only once validated.
    for candidate in _argument_candidates(new, old, object_root, deadline):
        checked = _witness(candidate, new, old)
        if isinstance(checked, Difference):
            return checked
    if _properties_contained(new, old, deadline):
        return Difference("none", reason="each argument's new schema is within its old one")
    return Difference("unknown", reason=reason)


def _properties_contained(new: SchemaRoot, old: SchemaRoot, deadline: float) -> bool:
    """A sufficient proof that ``new`` accepts nothing ``old`` refuses: the schemas differ
    only inside ``properties`` (the same names, or fewer when both are closed), and each new
    property schema is proved (by the algebra) to accept nothing its old one refuses."""
    from histor_sign._schema.algebra import Sub

    if not (isinstance(new.schema, dict) and isinstance(old.schema, dict)):
        return False
    new_props, old_props = _props(new.schema), _props(old.schema)
    if not _differ_in_properties_only(new.schema, old.schema, new_props, old_props):
        return False
    for name, sub in new_props.items():
        if time.monotonic() > deadline:
            return False
        value, _ = _solve([Sub(sub, new), Sub({"not": old_props[name]}, old)], deadline)
        if value is not _NONE:
            return False
    return True


def _differ_in_properties_only(new: dict[str, Any], old: dict[str, Any],
                               new_props: dict[str, Any], old_props: dict[str, Any]) -> bool:
    """Everything but ``properties`` is the same (descriptions aside, no ``$ref``), and the
    property names are the same, or fewer in a closed new schema."""
    rest_new = {k: v for k, v in new.items() if k != "properties"}
    rest_old = {k: v for k, v in old.items() if k != "properties"}
    return not (canonical_bytes(_strip_descriptions(rest_new))
                != canonical_bytes(_strip_descriptions(rest_old))
                or not (set(new_props) == set(old_props) or (
                    set(new_props) <= set(old_props) and rest_new.get("additionalProperties")
                    is False and "patternProperties" not in rest_new))
                or "$ref" in str(canonical_bytes(rest_new)))


_NONE, _UNKNOWN = object(), object()


def _solve(conj: list[Any], deadline: float) -> tuple[Any, str]:
    """One value satisfying ``conj``; ``_NONE`` when proved empty, ``_UNKNOWN`` + reason."""
    from histor_sign._schema.algebra import Bounds, Budget, Undecided, solve

    seconds = min(SCHEMA_SECONDS, deadline - time.monotonic())
    if seconds <= 0:
        return _UNKNOWN, "time bound reached"
    try:
        found = solve(conj, Budget(Bounds(seconds=seconds)))
    except Undecided as exc:
        return _UNKNOWN, exc.reason
    except RecursionError:
        return _UNKNOWN, "schema nesting exceeded the recursion bound"
    except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError,
            OverflowError) as exc:
        return _UNKNOWN, f"schema could not be analysed ({type(exc).__name__})"
    return (_NONE, "") if found is None else (found.value, "")


def _witness(value: Any, new: SchemaRoot, old: SchemaRoot) -> Difference | None:
    """``found`` when every validator accepts ``value`` under new and rejects it under old."""
    try:
        ok = (isinstance(value, dict) and new.accepts(value) and not old.accepts(value)
              and plain_class(new.dialect)(new.schema).is_valid(value)
              and not plain_class(old.dialect)(old.schema).is_valid(value))
    except Exception:  # a validator failing on a hostile schema: not a witness
        return None
    return Difference("found", witness=value) if ok else None


def _argument_candidates(
    new: SchemaRoot, old: SchemaRoot, object_root: SchemaRoot, deadline: float
) -> list[Any]:
    """Argument objects valid under ``new`` that differ from one of its instances in one
    argument, chosen where ``old`` constrains that argument differently."""
    from histor_sign._schema.algebra import Sub

    base, _ = _solve([Sub(new.schema, new), Sub(_OBJECT, object_root)], deadline)
    if not isinstance(base, dict):
        return []
    new_props, old_props = _props(new.schema), _props(old.schema)
    old_extra = old.schema.get("additionalProperties", True)
    out: list[Any] = []
    for name, sub in new_props.items():
        before = old_props.get(name, old_extra)
        if before is True:
            continue
        if time.monotonic() > deadline:
            break
        value, _ = _solve([Sub(sub, new), Sub({"not": before}, old)], deadline)
        if value is not _NONE and value is not _UNKNOWN:
            out.append({**base, name: value})
    if old_extra is False and new.schema.get("additionalProperties", True) is True:
        out.append({**base, _fresh_argument(old_props, new_props): None})
    return out[:16]


def _fresh_argument(old_props: dict[str, Any], new_props: dict[str, Any]) -> str:
    """The first ``extraN`` name neither schema lists."""
    return next(f"extra{i}" for i in range(len(old_props) + len(new_props) + 1)
                if f"extra{i}" not in old_props and f"extra{i}" not in new_props)


def _witness_text(value: Any) -> str:
    text = canonical_bytes(value).decode("utf-8")
    return text if len(text) <= 120 else text[:119] + "…"


#: Keywords whose value is one subschema, a list of them, or a map of names to them.
_SUBSCHEMA = frozenset({"additionalProperties", "unevaluatedProperties", "propertyNames",
                        "contains", "not", "if", "then", "else", "additionalItems",
                        "unevaluatedItems", "contentSchema", "items"})
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SUBSCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                             "dependentSchemas", "dependencies"})
#: Keywords that constrain or locate (a validator acts on them): not text.
_VALIDATION = frozenset({
    "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
    "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties",
    "required", "dependentRequired", "$schema", "$id", "id", "$ref", "$dynamicRef",
    "$recursiveRef", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$vocabulary",
    "nullable"})
#: Prose a model reads; cosmetic and typo fixes are low.
_PROSE = frozenset({"description", "title", "$comment"})
#: Keywords validators may ignore but a model reads (``format: uri`` invites a URL): compared
#: as text *and* left in the schema for the algebra.
_READ_AND_VALIDATED = frozenset({"format", "contentMediaType", "contentEncoding",
                                 "deprecated", "readOnly", "writeOnly"})


@dataclass(frozen=True)
class SchemaText:
    """The text a model reads in a schema, by where it sits, and the schema without it."""

    #: (path) -> (text, exact): ``exact`` text is a JSON value (``default``, ``examples``,
    #: an unknown keyword, property names), where a case or punctuation change matters.
    texts: dict[tuple[str, ...], tuple[str, bool]]
    #: Paths of every subschema (a removed text whose subschema is gone is reported by the
    #: argument and schema verdicts, not as text).
    schemas: frozenset[tuple[str, ...]]
    stripped: Any


def schema_text(schema: Any, *, root_names: bool = True) -> SchemaText:
    """Walk a schema: descriptions, titles, comments, defaults, examples, unknown keywords
    and property names are text; the rest is what validates. ``root_names=False`` leaves the
    top level's property names out (the input schema's arguments are triaged on their own)."""
    texts: dict[tuple[str, ...], tuple[str, bool]] = {}
    schemas: set[tuple[str, ...]] = set()

    def walk(node: Any, path: tuple[str, ...]) -> Any:
        """The subschema at ``path`` without its text (the text into ``texts``)."""
        if not isinstance(node, Mapping):
            return node
        schemas.add(path)
        kept: dict[str, Any] = {}
        for key, value in node.items():
            where = (*path, key)
            if key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
                kept[key] = subschema_map(value, where, bool(path))
            elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
                kept[key] = [walk(v, (*where, str(i))) for i, v in enumerate(value)]
            elif key in _SUBSCHEMA:
                kept[key] = walk(value, where)
            elif key in _VALIDATION or key in _SUBSCHEMA_MAPS or key in _SUBSCHEMA_LISTS:
                kept[key] = value
            else:
                text_member(key, value, where, kept)
        return kept

    def subschema_map(value: Mapping[str, Any], where: tuple[str, ...], nested: bool) -> Any:
        """A map of names to subschemas, each walked; ``properties`` names are text too."""
        out = {n: walk(v, (*where, n)) if isinstance(v, Mapping) else v
               for n, v in value.items()}
        if where[-1] == "properties" and (nested or root_names) and value:
            texts[where] = (" \n".join(name_words(n) for n in sorted(value)), True)
        return out

    def text_member(key: str, value: Any, where: tuple[str, ...], kept: dict[str, Any]) -> None:
        """A member a model reads: prose, a JSON value (exact), or one that also validates
        (kept in the schema)."""
        if key in _READ_AND_VALIDATED:
            kept[key] = value
            texts[where] = (_text(value), True)
        else:
            texts[where] = ((value, False) if key in _PROSE and isinstance(value, str)
                            else (_text(value), True))

    stripped = walk(schema, ())
    return SchemaText(texts, frozenset(schemas), stripped)


def _strip_descriptions(schema: Any) -> Any:
    """The schema without the text a model reads (what validates)."""
    return schema_text(schema).stripped


def schema_text_changes(old: SchemaText | None, new: SchemaText | None, *, where: str,
                        own: str, tool_names: Iterable[str]) -> list[DriftChange]:
    """The text rules over every text of two schemas that differs, by where it sits. A
    text whose subschema went away is left to the argument and schema verdicts."""
    names = list(tool_names)
    before = old.texts if old is not None else {}
    after = new.texts if new is not None else {}
    live = new.schemas if new is not None else frozenset()
    out: list[DriftChange] = []
    for path in sorted(set(before) | set(after)):
        a, b = before.get(path), after.get(path)
        if a == b or (b is None and path[:-1] not in live):
            continue
        out += _schema_text_change(path, a, b, where, own, names)
    return out


def _schema_text_change(path: tuple[Any, ...], a: Any, b: Any, where: str, own: str,
                        names: list[str]) -> list[DriftChange]:
    """The text rules over one schema text (``a`` before, ``b`` after: (text, exact) or
    None), labelled by where it sits."""
    label = f"{where}{pointer(path)}"
    if path[-1] == "properties":
        label += " (property names)"
    exact = (a is not None and a[1]) or (b is not None and b[1])
    return text_changes(a[0] if a else "", b[0] if b else "", where=label,
                        kind=DriftKind.SCHEMA_WORDING, own=own, tool_names=names, exact=exact)


def input_schema_changes(
    old: Any, new: Any, own: str, tool_names: Iterable[str], clock: SchemaClock | None = None
) -> list[DriftChange]:
    """Argument-level changes, then the text inside the schema (a model reads it like the
    tool's description), then the algebra's verdict in both directions (widened with a
    witness accepted now and refused before; narrowed the reverse)."""
    names = list(tool_names)
    out = argument_changes(old, new)
    old_text, new_text = schema_text(old, root_names=False), schema_text(new, root_names=False)
    out += schema_text_changes(old_text, new_text, where="inputSchema", own=own,
                               tool_names=names)
    if canonical_bytes(old_text.stripped) == canonical_bytes(new_text.stripped):
        return out
    new_root, old_root = prepare_root(new, "new inputSchema"), prepare_root(old, "old inputSchema")
    clock = clock or SchemaClock()
    wider = schema_difference(new_root, old_root, clock)
    narrower = schema_difference(old_root, new_root, clock)
    if wider.outcome == "found":
        # A widening is rated medium already: an undecided narrowing cannot raise it.
        also = ("; whether it also refuses arguments it accepted is undecided"
                if narrower.outcome == "unknown" else "")
        out.append(DriftChange(DriftKind.SCHEMA_WIDENED, Risk.MEDIUM,
                               f"accepts {_witness_text(wider.witness)}, refused before{also}",
                               wider.witness, True, rule="schema-widened"))
    if narrower.outcome == "found":
        out.append(DriftChange(DriftKind.SCHEMA_NARROWED, Risk.LOW,
                               f"refuses {_witness_text(narrower.witness)}, accepted before",
                               narrower.witness, True, rule="schema-narrowed"))
    if wider.outcome == narrower.outcome == "none":
        out.append(_change(DriftKind.SCHEMA_WORDING, Risk.LOW,
                           "schema rewritten; it accepts exactly the same arguments",
                           "schema-equivalent"))
    if wider.outcome == "unknown":
        out.append(_change(DriftKind.SCHEMA_CHANGED, Risk.MEDIUM,
                           "undecided whether it accepts arguments it refused (unknown, "
                           f"rated medium): {wider.reason}", "schema-undecided"))
    elif wider.outcome == "none" and narrower.outcome == "unknown":
        out.append(_change(DriftKind.SCHEMA_CHANGED, Risk.LOW,
                           "accepts nothing it refused; whether it refuses arguments it "
                           f"accepted is undecided: {narrower.reason}",
                           "schema-narrowing-undecided"))
    return out


# --- whole tools ----------------------------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else canonical_bytes(value).decode("utf-8")


def _differs(old: Mapping[str, Any], new: Mapping[str, Any], key: str) -> bool:
    if (key in old) != (key in new):
        return True
    return key in old and not _same_json(old[key], new[key])


def _is_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def tool_changes(old: Mapping[str, Any], new: Mapping[str, Any],
                 tool_names: Sequence[str], clock: SchemaClock | None = None
                 ) -> list[DriftChange]:
    """Every triaged change between two projected definitions of one tool (name aside).
    Each field that differs gives at least one change: one no rule classifies is medium
    (``unclassified``), never a difference with nothing listed."""
    own = _text(new.get("name"))
    names = list(tool_names)
    out: list[DriftChange] = []
    for key in PROJECTED_FIELDS:
        if key == "name" or not _differs(old, new, key):
            continue
        found = _field_changes(key, old, new, own, names, clock)
        out += found or [_change(DriftKind.UNCLASSIFIED, Risk.MEDIUM,
                                 f"{key} changed; no rule classifies the change (rated medium)",
                                 "unclassified")]
    return out


def _field_changes(key: str, old: Mapping[str, Any], new: Mapping[str, Any], own: str,
                   names: list[str], clock: SchemaClock | None) -> list[DriftChange]:
    """The changes of one differing projected field, by the rules for that field (none
    for a field no rule classifies)."""
    before, after = old.get(key), new.get(key)
    if key in ("title", "description"):
        kind = DriftKind.TITLE if key == "title" else DriftKind.DESCRIPTION_WORDING
        return text_changes(_text(before), _text(after), where=key, kind=kind, own=own,
                            tool_names=names, exact=not (_is_text(before) and _is_text(after)))
    if key == "inputSchema":
        return input_schema_changes(before, after, own, names, clock)
    if key == "outputSchema":
        return output_schema_changes(old, new, own, names)
    if key == "annotations":
        return annotation_changes(before, after, own, names)
    if key == "execution":
        return [_change(DriftKind.EXECUTION, Risk.MEDIUM, "execution changed", "execution")]
    return []


def output_schema_changes(old: Mapping[str, Any], new: Mapping[str, Any], own: str,
                          tool_names: Sequence[str]) -> list[DriftChange]:
    """The text inside the output schema (text rules), and a medium change when what it
    validates was added, removed or changed (clients that validate results may break)."""
    before = schema_text(old["outputSchema"]) if "outputSchema" in old else None
    after = schema_text(new["outputSchema"]) if "outputSchema" in new else None
    out = schema_text_changes(before, after, where="outputSchema", own=own,
                              tool_names=tool_names)
    if before is None:  # a new output schema is medium as a whole; its text adds only highs
        out = [c for c in out if c.risk is Risk.HIGH]
    what = _output_schema_change(before, after)
    if what:
        out.insert(0, _change(DriftKind.OUTPUT_SCHEMA, Risk.MEDIUM, f"output schema {what}",
                              "output-schema"))
    return out


def _output_schema_change(before: SchemaText | None, after: SchemaText | None) -> str:
    """``added``, ``removed`` or ``changed`` when what the output schema validates differs
    ("" when only its text does)."""
    if before is None:
        return "added"
    if after is None:
        return "removed"
    return "changed" if canonical_bytes(before.stripped) != canonical_bytes(after.stripped) else ""


def tool_texts(tool: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(where, text) for every text of one definition a model reads: its name (as words),
    title, description, annotations' title and the text inside its schemas."""
    out = [("name", name_words(_text(tool.get("name")))),
           ("title", _text(tool.get("title"))), ("description", _text(tool.get("description")))]
    annotations = tool.get("annotations")
    if isinstance(annotations, Mapping):
        out.append(("annotations.title", _text(annotations.get("title"))))
    for key in ("inputSchema", "outputSchema"):
        if key in tool:
            out += [(f"{key}{pointer(path)}", text)
                    for path, (text, _) in sorted(schema_text(tool[key]).texts.items())]
    return [(where, text) for where, text in out if text]


def added_tool_changes(new: Mapping[str, Any], tool_names: Sequence[str]) -> list[DriftChange]:
    """A tool the signed revision did not have: a new, unreviewed capability (medium); high
    when any text of it already carries the high text markers (instructions, other tools'
    names, URLs, paths, secrets, scope words, hidden characters)."""
    out = [_change(DriftKind.TOOL_ADDED, Risk.MEDIUM, "new tool, not in the signed revision",
                   "tool-added")]
    own = _text(new.get("name"))
    for where, text in tool_texts(new):
        out += _high_text_changes("", text, where, own, () if where == "name" else tool_names)
    return out


def unsigned_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Fields of two raw tool objects outside the seven signed ones that differ."""
    return [key for key in sorted((set(old) | set(new)) - set(PROJECTED_FIELDS))
            if not _same_json(old.get(key, _MISSING), new.get(key, _MISSING))]


def unsigned_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[DriftChange]:
    """Each field of :func:`unsigned_fields` (``_meta``, ``icons``, anything else) as a
    ``changed-and-unsigned`` change (medium): the signature cannot vouch for it, so it is
    reported, never passed as a match."""
    out: list[DriftChange] = []
    for key in unsigned_fields(old, new):
        what = "added" if key not in old else "removed" if key not in new else "changed"
        out.append(_change(DriftKind.UNSIGNED_CHANGED, Risk.MEDIUM,
                           f"{key} {what}, outside the signed fields (no signature vouches "
                           "for it)", "unsigned-field"))
    return out


def renames(removed: Mapping[str, Mapping[str, Any]],
            added: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(old name, new name) pairs: a removed and an added tool with the same input schema
    and descriptions at least :data:`RENAME_SIMILARITY` alike (best pairs first)."""
    scored: list[tuple[float, str, str]] = []
    schemas = {name: canonical_bytes(t.get("inputSchema")) for name, t in added.items()}
    budget = MAX_RENAME_COMPARISONS
    for old_name, old in removed.items():
        schema = canonical_bytes(old.get("inputSchema"))
        for new_name, new in added.items():
            if schemas[new_name] != schema:
                continue
            a = _text(old.get("description"))[:MAX_RENAME_TEXT]
            b = _text(new.get("description"))[:MAX_RENAME_TEXT]
            if a == b:
                scored.append((-1.0, old_name, new_name))
                continue
            if 2 * min(len(a), len(b)) < RENAME_SIMILARITY * (len(a) + len(b)):
                continue  # the lengths alone rule it out (difflib's real_quick_ratio)
            budget -= 1
            if budget < 0:
                return _pairs(scored)
            ratio = difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio()
            if ratio >= RENAME_SIMILARITY:
                scored.append((-ratio, old_name, new_name))
    return _pairs(scored)


def _pairs(scored: list[tuple[float, str, str]]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    used_old: set[str] = set()
    used_new: set[str] = set()
    for _, old_name, new_name in sorted(scored):
        if old_name in used_old or new_name in used_new:
            continue
        used_old.add(old_name)
        used_new.add(new_name)
        pairs.append((old_name, new_name))
    return pairs


def rename_changes(old: Mapping[str, Any], new: Mapping[str, Any],
                   tool_names: Sequence[str], clock: SchemaClock | None = None
                   ) -> list[DriftChange]:
    """A rename plus whatever else changed between the two definitions. The name is text
    the model reads: low when only case or separators changed (``npmLatest`` →
    ``npm_latest``) or a typo in it was fixed, else medium; high markers in the new name's
    words are reported too. Calls to the old name fail closed."""
    old_name, new_name = _text(old.get("name")), _text(new.get("name"))
    compact = [re.sub(r"[\W_]+", "", n).casefold() for n in (old_name, new_name)]
    found = text_changes(name_words(old_name), name_words(new_name), where="name",
                         kind=DriftKind.TOOL_RENAMED)
    if compact[0] == compact[1]:
        risk, rule = Risk.LOW, "rename-cosmetic"
    elif [c.rule for c in found] == ["typo-fix"]:
        risk, rule = Risk.LOW, "rename-typo"
    else:
        risk, rule = Risk.MEDIUM, "rename"
    head = _change(DriftKind.TOOL_RENAMED, risk, f"renamed from {old_name}", rule)
    highs = [c for c in found if c.risk is Risk.HIGH]
    return [head, *highs, *tool_changes(old, new, tool_names, clock)]
