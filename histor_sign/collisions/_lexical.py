"""Lexical candidate selection: which tool pairs a model could pick one for the other.

A shared token is not confusability (``git_add`` and ``git_create_branch`` share ``git``).
Each tool is read as an **action** (its verb, mapped through a synonym table to an action
class) applied to an **object** (the remaining name words), the way a model reads a tool list
(docs/scan.md, "Candidate selection"):

* the name is split on separators, camelCase and digit boundaries and lowercased; a leading
  word that most tools of the same source start with (``git_``, ``playwright_``) is the
  server's **namespace** and ignored;
* the **action** is the first name word found in :data:`ACTIONS`; a name without one takes the
  description's first word (``git_status``: "Shows the working tree status" → ``get``), and
  a name of nouns with no verb before them asks for that thing (``maps_distance``: ``get``);
* the **object** is the other name words, plural-stripped, without **variant words** that only
  change count, format or extra output (``multiple``, ``all``, ``html``, ``text``, ``tree``) and
  without anything after ``with``/``by``/``from`` (``get_weather_by_city`` is a variant of
  ``get_weather``);
* the **description** tokens (stop words dropped) without the source's boilerplate (a prefix
  or suffix most of its descriptions share, and sentences several of them repeat).

Two tools are candidates when they have the same action class and

1. the same non-empty object (``basis`` ``name``, score 1), or
2. one object extends the other (or one name has none) and description similarity
   (Jaccard) at least the threshold (``basis`` ``description``);

or contrasting or equivalent action classes on one object (:data:`CONTRASTING`,
:data:`EQUIVALENT`: delete vs archive, get-all vs list, …; docs/scan.md).

Candidates are found by grouping (action, object) and, per action, the prefix-filtering
all-pairs algorithm (Bayardo et al., WWW 2007) on description tokens, so no all-pairs loop is
run. Every candidate says which words matched (:meth:`Similarity.why`).
"""

from __future__ import annotations

import heapq
import math
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from itertools import chain
from typing import Any

from histor_sign._limits import DEFAULT_MAX_PARTNERS
from histor_sign.collisions import _lexicon as lexicon
from histor_sign.collisions._caseless import cannot_match
from histor_sign.collisions._domains import SERVICES, canonical_words, word_areas
from histor_sign.collisions._prefix_join import jaccard, similar_pairs

#: Action classes and the words that name them. A model asked to "show" something may call a
#: ``get`` or ``read`` tool, so reading words share one class; writing words that change an
#: existing thing share ``modify``.
ACTION_GROUPS: dict[str, tuple[str, ...]] = lexicon.grouped("ACTION_GROUPS", "class")
#: The action class names (a description token of an action word is its class).
ACTION_CLASSES = frozenset(ACTION_GROUPS)
#: Relation actions: an action class followed by this word is the relation class
#: (``add_issue_to_project``, ``remove_label_from_issue``).
RELATIONS: dict[str, tuple[str, str]] = {"create": ("to", "attach"),
                                         "delete": ("from", "detach")}
#: Action classes a request worded one way can reach both of, with different consequences
#: for the same object ("remove the tag": delete it, or detach it from a task; "end the
#: session": stop and keep it, or clear it; "close" vs "delete"; "archive" vs "delete";
#: "add the label": create it, or attach it). Such a pair is confusable and its effects
#: contradict (TC004), whatever the effect hints say.
CONTRASTING: frozenset[frozenset[str]] = frozenset(frozenset(p) for p in (
    ("delete", "detach"), ("delete", "stop"), ("delete", "archive"), ("create", "attach"),
    # turning a thing off keeps it, deleting it does not ("remove this user's access")
    ("delete", "disable"), ("delete", "deactivate"),
    # to the trash and back, or gone for good ("delete this email": Gmail's trash or delete)
    ("delete", "trash")))
#: Action classes that run the same statement (``read_query`` / ``execute_query``).
STATEMENT_PAIRS: frozenset[frozenset[str]] = frozenset(
    frozenset(p) for p in (("get", "run"), ("modify", "run"), ("exec", "run"), ("get", "exec"),
                           ("modify", "exec")))
#: Action classes that do the same to one object (``add_task_to_section`` moves the task
#: there, as ``move_task`` does).
EQUIVALENT: frozenset[frozenset[str]] = frozenset(frozenset(p) for p in (
    ("attach", "move"),
    # create-or-update ("apply this manifest", "upsert the record") does what a create
    # does to a new object and what an update does to an existing one
    ("upsert", "create"), ("upsert", "modify"),
    # get-all and list return one collection ("show my projects": get_projects or
    # list_projects) — unless one of them reads one identified item (:func:`_one_collection`)
    ("get", "list"),
    # working out a value is getting it ("calculate the distance", a tool named "distance")
    ("calculate", "get")))
ACTIONS: dict[str, str] = {}
for _canon, _words in ACTION_GROUPS.items():
    for _word in _words:
        ACTIONS.setdefault(_word, _canon)

#: What an action class does to data when a tool states no effect hints (docs/scan.md).
ACTION_EFFECTS: dict[str, str] = {
    "get": "read-only", "list": "read-only", "describe": "read-only", "search": "read-only",
    "create": "write", "modify": "write", "send": "write", "run": "write", "exec": "write",
    "stop": "write",
    "move": "write", "copy": "write", "delete": "destructive", "attach": "write",
    "detach": "write", "archive": "write", "upsert": "write",
}

#: Action classes that say little without an object (get what? create what?); any other
#: class names a whole job by its verb alone (``translate``, ``geocode``, ``screenshot``).
BROAD_ACTIONS = lexicon.words("BROAD_ACTIONS")

#: Words that change count, representation or extra output of the same object, not the object.
VARIANT_WORDS = lexicon.words("VARIANT_WORDS")
#: Verbs that lend their noun the action ("take a screenshot", "perform a search"): before
#: the name's action word they are neither action nor object (``take_screenshot``).
LIGHT_VERBS = lexicon.words("LIGHT_VERBS")
#: Interface actions of a browser or UI driver: a tool named by one is about web pages
#: whatever its server calls itself (``browserbase_screenshot``, ``selenium:navigate``).
BROWSER_ACTIONS = lexicon.words("BROWSER_ACTIONS")
#: Prepositions after which name words modify the head noun before them (``code_of_cities``).
POST_WORDS = lexicon.words("POST_WORDS")
#: A qualifier introduced by these words is a filter or source variant (``get_weather_by_city``).
QUALIFIER_STARTS = frozenset({"with", "by", "from", "using", "via", "for"})
#: Qualifiers that name the scope a collection is taken from (``get_tasks_for_project``: the
#: tasks, scoped by a project): the object stays the head noun; two different scopes are two
#: requests, a scope and none are one request ("the tasks in project X").
SCOPE_STARTS = frozenset({"for"})

STOPWORDS = lexicon.words("STOPWORDS")

_SEPARATORS = re.compile(r"[\s_\-./:]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_WORD = re.compile(r"[A-Za-z]+|[0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_FIRST_WORD = re.compile(r"[A-Za-z]+")

#: A namespace word must start at least this share of a source's names (and 3 of them).
NAMESPACE_SHARE = 0.75
#: A description prefix shared by this share of a source's descriptions is boilerplate ...
BOILERPLATE_SHARE = 0.8
#: ... when it is at least this many words long.
BOILERPLATE_WORDS = 5
#: ... and at most this many words long.
BOILERPLATE_MAX_WORDS = 200


#: Plural endings that add "es" to the singular (``status`` → ``statuses``).
_ES_PLURALS = ("sses", "uses", "shes", "ches", "xes", "zzes")


def singular(token: str) -> str:
    """Lowercase and strip a plural (``entities`` → ``entity``, ``files`` → ``file``)."""
    t = token.lower()
    if len(t) > 4 and t.endswith("ies"):
        return t[:-3] + "y"
    if len(t) > 4 and t.endswith(_ES_PLURALS) and not t.endswith("aches"):
        return t[:-2]  # statuses, addresses, matches, boxes (not caches)
    if len(t) > 3 and t.endswith("s") and not t.endswith(("ss", "us", "is")):
        return t[:-1]
    return t


def normalize_token(token: str) -> str:
    """Singular form, and the action class for an action word (``fetch`` → ``get``)."""
    t = singular(token)
    return ACTIONS.get(token.lower(), ACTIONS.get(t, t))


def split_identifier(name: str) -> list[str]:
    """``getUserHTTPStatus_v2`` → ``['get', 'User', 'HTTP', 'Status', 'v', '2']``."""
    parts: list[str] = []
    for chunk in _SEPARATORS.split(name):
        found = _CAMEL.findall(chunk)
        parts.extend(found if found else ([chunk] if chunk else []))
    return parts


def normalized_name(name: str) -> str:
    """The TC002 key: lowercase with separators removed (``Read-File`` → ``readfile``)."""
    return _SEPARATORS.sub("", name).lower()


def name_tokens(name: str) -> frozenset[str]:
    return frozenset(normalize_token(t) for t in split_identifier(name) if t)


#: Lexical work per tool is bounded: only the first this many characters of a description
#: are read (real tool descriptions are far shorter: the 527-tool corpus tops out near 4 KB)
MAX_DESCRIPTION_CHARS = 16_384
#: and at most this many of its distinct tokens are kept — the ones with the smallest stable
#: hash (a bottom-k sketch: two descriptions keep the same sample of their shared words, so
#: the Jaccard index of the sketches estimates theirs without bias).
MAX_DESCRIPTION_TOKENS = 256


@lru_cache(maxsize=65_536)
def _word_tokens(word: str) -> tuple[str, ...]:
    if _CJK.match(word):
        return tuple(word[i:i + 2] for i in range(max(1, len(word) - 1)))
    out: list[str] = []
    for part in split_identifier(word):
        low = part.lower()
        if low in STOPWORDS or (len(low) < 2 and not low.isdigit()):
            continue
        out.append(normalize_token(low))
    return tuple(out)


def _stable_hash(token: str) -> int:
    return zlib.crc32(token.encode("utf-8", "surrogatepass"))


@lru_cache(maxsize=65_536)
def _chunk_tokens(chunk: str) -> tuple[tuple[int, str], ...]:
    """The tokens of one whitespace-free chunk of text, each keyed by its stable hash (the
    sample's order). A word never spans whitespace, so a description's tokens are the union of
    its distinct chunks' tokens: each repeated chunk ("the", "file,") is read once."""
    return tuple((_stable_hash(t), t) for word in _WORD.findall(chunk)
                 for t in _word_tokens(word))


#: Texts up to this long are remembered with what was read from them (a registry repeats its
#: descriptions: forks and releases), at most :data:`REMEMBERED_TEXTS` of them — a few MB.
REMEMBERED_CHARS = 1024
REMEMBERED_TEXTS = 4096


def description_tokens(text: str) -> frozenset[str]:
    """The description's tokens (stop words dropped, at most :data:`MAX_DESCRIPTION_TOKENS`:
    a bottom-k sample by stable hash); equal short texts give one shared set."""
    if len(text) <= REMEMBERED_CHARS:
        return _remembered_tokens(text)
    return _description_tokens(text)


def _description_tokens(text: str) -> frozenset[str]:
    chunks = set(text[:MAX_DESCRIPTION_CHARS].split())
    keyed: Collection[tuple[int, str]] = set(chain.from_iterable(map(_chunk_tokens, chunks)))
    if len(keyed) > MAX_DESCRIPTION_TOKENS:
        # the bottom-k by (hash, token): a token's hash is the same wherever it occurs
        keyed = sorted(keyed)[:MAX_DESCRIPTION_TOKENS]
    return frozenset(t for _, t in keyed)


_remembered_tokens = lru_cache(maxsize=REMEMBERED_TEXTS)(_description_tokens)


def _prefixed_verb(word: str) -> bool:
    """``unarchive``, ``reopen``, ``deselect``: a known verb behind un-/re-/de-/dis-."""
    return any(word.startswith(p) and word[len(p):] in ACTIONS and len(word) > len(p) + 2
               for p in ("un", "re", "de", "dis"))


def _doer(word: str) -> str:
    """The verb of the table whose doer ``word`` names (reader → read, scraper → scrape,
    extractor → extract), else ``""``."""
    for suffix, back in (("er", ""), ("er", "e"), ("or", ""), ("or", "e")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            verb = word[:-len(suffix)] + back
            if verb in ACTIONS:
                return verb
    return ""


def _verb(word: str) -> str:
    """A description's first word as an action word: ``Shows`` → ``show``, ``Gets`` → ``get``."""
    low = word.lower()
    if low in ACTIONS:
        return low
    for cut in ("es", "s"):
        if low.endswith(cut) and low[: -len(cut)] in ACTIONS:
            return low[: -len(cut)]
    return low[:-1] if low.endswith("s") and not low.endswith("ss") else low


#: Words after which a description's first word is a verb with its object ("Scale a
#: deployment"), not a noun ("Weather of a city").
_DETERMINERS = lexicon.words("_DETERMINERS")
_NEXT_WORD = re.compile(r"\W*([A-Za-z]+)")


def _unlisted_action(words: Sequence[str], verb: str, after: str, nouns: set[str]
                     ) -> tuple[str, str, int]:
    """(action, action word, its position in the name: -1 for none) for a name with no word
    of the synonym table; ``verb`` is the description's first word (as :func:`_verb` reads
    it) and ``after`` the text after it. A name word the description starts with, followed
    by a determiner, is the verb (``kubectl_scale``: "Scale a deployment"). A description
    that starts with no verb at all (none in Latin letters, or the name's own noun:
    "Weather of a city") leaves a name of nouns, which asks for that thing
    (``maps_distance``, ``weather``): a get of all its words. Otherwise the name's first
    word is the action, as written."""
    lows = [w.lower() for w in words]
    nxt = _NEXT_WORD.match(after)
    if verb in lows and nxt is not None and nxt.group(1).lower() in _DETERMINERS:
        at = lows.index(verb)
        return verb, words[at], at
    if (not verb or verb in nouns or verb in lows) and STATEMENTS.isdisjoint(nouns):
        return "get", words[0], -1  # (a statement is run, not read: ``sql``)
    return lows[0], words[0], 0


#: Objects that are statements a tool runs: ``read_query``, ``execute_query`` and a tool named
#: ``query`` all run one; "run this SQL" reaches a read and a run tool (their effects decide:
#: TC004 when one is read-only), a write and a run tool alike — not a read and a write tool,
#: whose verbs split the requests.
STATEMENTS = frozenset({"query", "sql", "statement", "command"})
#: SQL keywords (as a description writes them, in capitals) → the kind of statement.
STATEMENT_KINDS: dict[str, str] = lexicon.mapping("STATEMENT_KINDS", "kind")
#: A description that says so makes a tool read-only when it states no hints.
_READ_ONLY = re.compile(r"\bread[- ]?only\b", re.IGNORECASE)


def _says_read_only(text: str) -> bool:
    return not cannot_match(text, ("read",)) and _READ_ONLY.search(text) is not None

#: Source-name words that say nothing about a tool (``mcp-server-x``).
SOURCE_NOISE = lexicon.words("SOURCE_NOISE")

#: Qualifier words that name the *kind* of argument a tool takes (``…_from_file`` vs
#: ``…_from_url``): a model picks by what the request holds, so two tools whose qualifiers name
#: different kinds are told apart.
ARG_KINDS: dict[str, str] = lexicon.mapping("ARG_KINDS", "kind")
#: Variant words that ask for *now* (``get_current_stock_price``): a request for a date is
#: told apart from one for now.
NOW_WORDS = frozenset({"current", "latest", "today", "now"})
#: Variant words that ask for what is near a place (``search_nearby``, ``around_search``):
#: "cafés near X" reaches it and the plain search alike; they name the argument kind
#: ``place``, so a nearby search is told apart only from a tool whose name names another
#: kind (``…_by_id``).
NEAR_WORDS = frozenset({"nearby", "near", "around"})
#: Descriptions that say a tool returns every item, or one identified item.
_ALL = re.compile(r"\b(all|every|list of)\b", re.IGNORECASE)
_FIRST_SENTENCE = re.compile(r"[^.!?\n]*")
_ONE = re.compile(r"\b(identify|specific|single|by (its )?(id|name|key|gid)|"
                  r"details? (of|for|about) (a|an|one|this))\b", re.IGNORECASE)

#: Words that name a subject area without doubt (:mod:`._domains`), as description tokens.
WORD_AREAS: dict[str, frozenset[str]] = word_areas(singular)


def areas_of(words: frozenset[str]) -> frozenset[str]:
    """The subject areas the words name."""
    out: set[str] = set()
    for word in words:
        found = WORD_AREAS.get(word)
        if found:
            out.update(found)
    return frozenset(out)


#: Description words that name no domain (how tools talk, not what they talk about).
GENERIC_WORDS = lexicon.words("GENERIC_WORDS")
#: A source's domain words are the content words at least this share of its tools use.
DOMAIN_SHARE = 0.25


def _drop_namespace(name: str, namespace: frozenset[str]
                    ) -> tuple[list[str], bool, frozenset[str]]:
    """A name's words in canonical spelling, without its source's namespace word (which
    becomes its domain): (words, namespaced, domain)."""
    words = [w for w in split_identifier(name) if w]
    if len(words) > 1 and words[0].lower() in namespace:
        return canonical_words(words[1:]), True, frozenset({singular(words[0])})
    return canonical_words(words), False, frozenset()


@dataclass(frozen=True, slots=True)
class _Action:
    """A name's action: its class, the word that named it, whether the description gave it,
    and its position among the name's words (-1 when no name word names it)."""

    action: str
    word: str
    inferred: bool
    at: int

    @classmethod
    def of(cls, words: Sequence[str], description: str) -> _Action:
        """The first name word in the synonym table (or a prefixed verb: unarchive), else the
        description's first word, else a name word the description uses as a verb; then a
        relation ("add X to Y" attaches, "remove X from Y" detaches)."""
        found = _name_action(words) or _described_action(words, description)
        action, word, inferred, at = found
        if at >= 0 and action in RELATIONS:
            link, linked = RELATIONS[action]
            if any(w.lower() == link for w in words[at + 1:]):
                action = linked
        return cls(action, word, inferred, at)


def _name_action(words: Sequence[str]) -> tuple[str, str, bool, int] | None:
    for k, word in enumerate(words):
        low = word.lower()
        if low in ACTIONS:
            return ACTIONS[low], word, False, k
        if _prefixed_verb(low):  # unarchive, reopen: a verb of its own class
            return low, word, False, k
    return None


def _described_action(words: Sequence[str], description: str) -> tuple[str, str, bool, int]:
    nouns = {singular(w) for w in words}
    first = _FIRST_WORD.search(description)
    verb = _verb(first.group()) if first and first.start() < 3 else ""
    # a first word that repeats a name noun ("Checks" for monitor_checks) is that noun, not
    # the action
    if verb in ACTIONS and first is not None and verb not in nouns:
        return ACTIONS[verb], first.group(), True, -1
    if words:
        after = description[first.end():first.end() + 40] if first else ""
        action, word, at = _unlisted_action(words, verb, after, nouns)
        return action, word, False, at
    return "", "", False, -1


def _names_domain(k: int, low: str, token: str, description: str,
                  brands: frozenset[str]) -> bool:
    """A name word that names a service, or the server's own brand where it is one."""
    return token in SERVICES or (token in brands and _brand(k, low, description))


def _says_action(act: _Action, token: str) -> bool:
    """A name word that is the description's verb, or its doer (``jina_reader``: "Read …"),
    says the action again, not an object."""
    return act.inferred and act.action in (ACTIONS.get(token), ACTIONS.get(_doer(token)))


@dataclass(slots=True)
class _NameObjects:
    """What a name's words other than its action say, read word by word: the object words and
    head noun, variant words, argument kinds, and domain words (services, the brand)."""

    domain: frozenset[str]
    objects: list[str] = field(default_factory=list)
    variants: set[str] = field(default_factory=set)
    kinds: set[str] = field(default_factory=set)
    head: str = ""
    plural: bool = False
    qualified: bool = False  # past a qualifier (with / by / from / for …)
    scoped: bool = False  # the qualifier names a scope (for a task)
    post: bool = False  # past "of": the head noun came before

    def add(self, k: int, word: str, act: _Action, count: int, description: str,
            brands: frozenset[str]) -> None:
        """Read the ``k``-th of ``count`` name words."""
        low = word.lower()
        if k == act.at or (k < act.at and low in LIGHT_VERBS):
            return  # "take a screenshot": the noun is the action, "take" says nothing
        self._mark_position(k, low, act)
        if self.qualified or low in STOPWORDS:
            self._qualifier(low)
            return
        self._content_word(k, low, act, count, description, brands)

    def _mark_position(self, k: int, low: str, act: _Action) -> None:
        """Note a qualifier (with / by / from / for …) or "of" that starts at this word."""
        if low in QUALIFIER_STARTS and (self.objects or k == act.at + 1) \
                and act.action != "detach":
            # (right after the verb it says how: ``search_with_bing``, ``get_by_id``; what a
            # tool detaches from is its container, an object)
            self.qualified = True
            self.scoped = low in SCOPE_STARTS
        if low in POST_WORDS and self.objects:
            self.post = True  # "code of cities": the head noun came before "of"

    def _content_word(self, k: int, low: str, act: _Action, count: int, description: str,
                      brands: frozenset[str]) -> None:
        """A word before any qualifier: a domain, a URL kind, a variant, or an object."""
        token = singular(low)
        if count > 1 and _names_domain(k, low, token, description, brands):
            # where the action happens (a service, the server's own name), not its object
            self.domain = self.domain | {token}
        elif token in ("url", "uri"):
            self.variants.add(low)
            self.kinds.add("url")
        elif token in VARIANT_WORDS or low in VARIANT_WORDS or token.isdigit():
            self._variant(low, token)
        elif not _says_action(act, token) and token not in self.objects:
            self._object(k, low, token, act.at)

    def _qualifier(self, low: str) -> None:
        self.variants.add(low)
        kind = ARG_KINDS.get(singular(low))
        if self.qualified and kind is not None:
            self.kinds.add(kind)
        elif self.scoped and low not in STOPWORDS and low not in QUALIFIER_STARTS:
            # "tags for a task" vs "tags for a workspace": two scopes, two requests
            self.kinds.add(f"in {singular(low)}")

    def _variant(self, low: str, token: str) -> None:
        self.variants.add(low)
        if token in NOW_WORDS:
            self.kinds.add("now")
        elif token in NEAR_WORDS:
            self.kinds.add("place")

    def _object(self, k: int, low: str, token: str, at: int) -> None:
        self.objects.append(token)
        # a participle ("diff staged", "issues closed") modifies, it is no head
        if not (self.post or (token.endswith("ed") and len(token) > 4)):
            # a plural before the verb names the resource type (``pods_get``: one pod), after
            # it the items asked for (``get_projects``)
            self.head, self.plural = token, low != token and k > at


def _brand(k: int, low: str, description: str) -> bool:
    """A name word in the server's own name is a brand (a domain word, not an object) when it
    leads the name, or the description never writes it in lower case as a noun."""
    return k == 0 or not re.search(rf"\b{re.escape(low)}", description[:MAX_DESCRIPTION_CHARS])


def _statement_object(objects: list[str], head: str, act: _Action, description: str
                      ) -> tuple[list[str], str, str]:
    """(objects, head, action) once statements are read: a tool named "query" has the noun
    as its object and the description's verb as its action; "query the database" runs one."""
    action = act.action
    if act.word.lower() in STATEMENTS and not objects:
        first = _FIRST_WORD.search(description)
        verb = _verb(first.group()) if first and first.start() < 3 else ""
        objects, head = [singular(act.word.lower())], singular(act.word.lower())
        action = ACTIONS.get(verb, "run")
    if STATEMENTS.intersection(objects) and action == "list":
        action = "run"  # "query the database" runs a statement
    return objects, head, action


def _statement_kinds(head: str, head_text: str) -> set[str]:
    """The kinds of statement a statement tool's first sentence names in capitals ("Execute a
    SELECT query" vs "Execute an INSERT, UPDATE, or DELETE query"): two tools that split
    statements by kind are told apart by the statement a request holds."""
    if head not in STATEMENTS:
        return set()
    return {f"statement {STATEMENT_KINDS[w]}" for w in _WORD.findall(head_text)
            if w in STATEMENT_KINDS}


def _cardinality(variants: set[str], kinds: set[str], head_text: str) -> str:
    """How many items a tool returns as its name and first sentence say: all, one or ''."""
    many = bool({"list", "all"} & variants) or bool(_ALL.search(head_text))
    one = "id" in kinds or bool(_ONE.search(head_text))
    return "all" if many and not one else "one" if one and not many else ""


@dataclass(frozen=True, slots=True)
class Profile:
    """How a model reads one tool: action word and class, object words, description tokens,
    and what tells it apart from a same-named tool elsewhere: the domain its name or source
    names, and the argument kind its name names."""

    action: str  # the action class, else the name's first word ("" for an empty name)
    action_word: str  # the word that named it, as written ("fetch", "Shows")
    inferred_action: bool  # the action came from the description, not the name
    objects: frozenset[str]  # core object words
    variants: frozenset[str]  # ignored variant/qualifier words
    description: frozenset[str]
    namespaced: bool = False  # a namespace word was dropped from the name
    source: str = ""  # where the tool came from (a namespace names a domain across sources)
    head: str = ""  # the head noun of the object (its last word: "project update" → update)
    domain: frozenset[str] = frozenset()  # the namespace word(s) dropped from the name
    kinds: frozenset[str] = frozenset()  # argument kinds the name's qualifiers name
    #: the source's domain words, and those of them this tool's description names
    domain_words: frozenset[str] = frozenset()
    context: frozenset[str] = frozenset()
    #: the subject areas its description, name and namespace name (else its source's: its
    #: domain words and its name)
    areas: frozenset[str] = frozenset()
    #: the effect its verb or description states where the action class does not say it
    #: (``read_query``: read-only, though it runs a statement)
    stated: str | None = None
    #: how many items it returns, as the name and description say: "all", "one", or ""
    cardinality: str = ""
    #: the name writes its head noun in the plural (``get_projects``: a collection)
    plural: bool = False

    @classmethod
    def of(cls, name: str, description: str, namespace: frozenset[str] = frozenset(),
           boilerplate: Boilerplate = ((), ()), brands: frozenset[str] = frozenset(),
           repeated: frozenset[str] = frozenset()) -> Profile:
        words, namespaced, domain = _drop_namespace(name, namespace)
        act = _Action.of(words, description)
        read = _NameObjects(domain=domain)
        for k, word in enumerate(words):
            read.add(k, word, act, len(words), description, brands)
        objects, head, action = _statement_object(read.objects, read.head, act, description)
        text = _FIRST_SENTENCE.match(description.strip()[:400])
        head_text = text.group() if text else ""  # what the tool does, before the details
        if action in ("run", "exec") and not objects:
            # a bare ``execute``: what it runs is what its first sentence names ("Execute a
            # SQL query"): the statement is its object, as in ``execute_sql``
            said = next((w for w in map(singular, canonical_words(_WORD.findall(head_text)))
                         if w in STATEMENTS), None)
            if said is not None:
                objects, head = [said], said
        kinds = read.kinds | _statement_kinds(head, head_text)
        desc = description_tokens(drop_sentences(_strip(description, boilerplate), repeated))
        stated = "read-only" if _says_read_only(description[:MAX_DESCRIPTION_CHARS]) else None
        return cls(action, act.word, act.inferred, frozenset(objects),
                   frozenset(read.variants), desc, namespaced,
                   head=head, domain=read.domain, kinds=frozenset(kinds), stated=stated,
                   cardinality=_cardinality(read.variants, kinds, head_text),
                   plural=read.plural)

    @property
    def effect(self) -> str | None:
        """The effect the verb or description states, else the one the action class implies
        (``read-only``/``write``/``destructive``)."""
        return self.stated or ACTION_EFFECTS.get(self.action)


@dataclass(frozen=True, slots=True)
class Similarity:
    """Why two tools are confusable: the shared action, object words, description words."""

    basis: str  # "name" (same action and object) or "description"
    action: str
    action_words: tuple[str, str]
    objects: tuple[str, ...]
    description: float
    shared_words: tuple[str, ...]
    inferred: tuple[bool, bool] = (False, False)  # action word taken from the description
    variants: tuple[str, ...] = ()  # name words ignored as variants where the names differ
    #: two contrasting action classes (:data:`CONTRASTING`) on the same object
    contrasting: bool = False
    #: one of two tools that change data does it to every item (``mark_all_todos_done`` vs
    #: ``mark_todo_done``): a request for one item reaching it changes items nobody named
    bulk: bool = False
    #: the JSON view once built (:meth:`to_json`); not part of the value
    _view: dict[str, object] | None = field(default=None, compare=False, repr=False)

    @property
    def score(self) -> float:
        return 1.0 if self.basis == "name" else self.description

    def why(self) -> str:
        """Which words matched, for the finding's message."""
        wa, wb = self.action_words
        verb = (f"action {wa!r}" if wa.lower() == wb.lower()
                else f"action {wa!r} ~ {wb!r} ({self.action})")
        if any(self.inferred):
            verb += " (read from the description)"
        differ = (f", differing only in {', '.join(repr(v) for v in self.variants)}"
                  if self.variants else "")
        if self.contrasting:  # two actions a request reaches both of, one object
            return (f"contrasting {verb} on the same object {' '.join(self.objects)!r}"
                    f"{differ}")
        if self.basis == "name" and self.objects:
            return f"same {verb} on the same object {' '.join(self.objects)!r}{differ}"
        if self.basis == "name":
            return f"same {verb} and no other name words{differ}"
        words = ", ".join(self.shared_words[:6])
        return (f"same {verb} and similar descriptions ({self.description:.2f}: "
                f"{words})")

    def to_json(self) -> dict[str, object]:
        """The JSON view, built once and shared by every finding that reports this object
        (read it, never change it): a registry-scale scan has hundreds of thousands of
        candidate pairs but few distinct similarities (forks repeat them, and candidate
        selection gives equal ones one object). Its arrays are this object's own tuples."""
        if self._view is None:
            view = self._json()
            if self.contrasting:
                view["contrastingActions"] = True
            if self.bulk:
                view["bulk"] = True
            object.__setattr__(self, "_view", view)  # a cache, not part of the value
            return view
        return self._view

    def _json(self) -> dict[str, object]:
        return {
            "action": self.action,
            "actionWords": self.action_words,
            "inferredAction": self.inferred,
            "variants": self.variants,
            "basis": self.basis,
            "description": round(self.description, 4),
            "objects": self.objects,
            "score": round(self.score, 4),
            "sharedWords": self.shared_words,
        }


Boilerplate = tuple[tuple[str, ...], tuple[str, ...]]


def _strip(description: str, boilerplate: Boilerplate) -> str:
    """The description without the source's boilerplate prefix and suffix (where present)."""
    prefix, suffix = boilerplate
    if not prefix and not suffix:
        return description
    words = description.split()
    if prefix and tuple(words[:len(prefix)]) == prefix:
        words = words[len(prefix):]
    if suffix and len(words) > len(suffix) and tuple(words[-len(suffix):]) == suffix:
        words = words[:-len(suffix)]
    return " ".join(words)


#: A sentence (a run of text up to ``.``, ``;``, ``!``, ``?`` or a line break) is a source's
#: boilerplate when this many of its descriptions repeat it word for word ...
REPEATED_SENTENCE_TOOLS = 3
#: ... and it has at least this many words (a template's usage note, not "Returns JSON.").
REPEATED_SENTENCE_WORDS = 5
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+|\n+")


def _sentences(description: str) -> tuple[str, ...]:
    if len(description) <= REMEMBERED_CHARS:
        return _remembered_sentences(description)
    return _split_sentences(description)


def _split_sentences(description: str) -> tuple[str, ...]:
    text = description[:MAX_DESCRIPTION_CHARS]
    if not any(end in text for end in ".;!?\n"):  # one sentence: the split has no place
        return (" ".join(text.split()),)
    return tuple(" ".join(s.split()) for s in _SENTENCE_END.split(text))


_remembered_sentences = lru_cache(maxsize=REMEMBERED_TEXTS)(_split_sentences)


def repeated_sentences(descriptions: Sequence[str]) -> frozenset[str]:
    """Sentences that :data:`REPEATED_SENTENCE_TOOLS` or more of a source's descriptions
    repeat word for word (a framework's template: "Use this for the specific operation
    described; choose a sibling tool …"): they say nothing about what one tool does, and
    shared they make unrelated tools look alike. Boilerplate anywhere in the description,
    where :func:`source_context` finds it only at the start or end."""
    counts: Counter[str] = Counter()
    for d in descriptions:
        # (a sentence's words are joined by single spaces)
        counts.update({s for s in _sentences(d)
                       if s.count(" ") + 1 >= REPEATED_SENTENCE_WORDS and s})
    return frozenset(s for s, c in counts.items() if c >= REPEATED_SENTENCE_TOOLS)


def drop_sentences(description: str, repeated: frozenset[str]) -> str:
    """The description without the source's repeated sentences (where it has any)."""
    if not repeated:
        return description
    return " ".join(s for s in _sentences(description) if s not in repeated)


def _common_prefix(split: Sequence[Sequence[str]], need: int) -> tuple[str, ...]:
    """The longest word prefix at least ``need`` of the word lists start with (and go on)."""
    prefix: tuple[str, ...] = ()
    longest = min(BOILERPLATE_MAX_WORDS, max((len(w) for w in split), default=0))
    for n in range(1, longest + 1):
        counts = Counter(tuple(w[:n]) for w in split if len(w) > n)
        best, count = counts.most_common(1)[0] if counts else ((), 0)
        if count < need:
            break
        prefix = best
    return prefix if len(prefix) >= BOILERPLATE_WORDS else ()


def source_context(names: Sequence[str], descriptions: Sequence[str]
                   ) -> tuple[frozenset[str], Boilerplate]:
    """A source's namespace words (the leading name word of most of its tools, or of each
    prefix group: ``jira_get_issue`` and ``confluence_get_page`` in one server) and its
    boilerplate: the longest word prefix and suffix most of its descriptions share (BFCL's
    "This tool belongs to the ... system.", a server's repeated usage notes). Only sources of
    3 or more tools have either."""
    if len(names) < 3:
        return frozenset(), ((), ())
    return _namespace_words(names), _boilerplate(descriptions)


def _namespace_words(names: Sequence[str]) -> frozenset[str]:
    """Step 1 of :func:`source_context`: the leading name words of most tools, or of each
    prefix group."""
    split = [split_identifier(n) for n in names]
    leads = Counter(w[0].lower() for w in split if w)
    floor = max(3, math.ceil(NAMESPACE_SHARE * len(names)))
    namespace = {w for w, c in leads.items() if c >= floor and w not in ACTIONS}
    return frozenset(namespace | _prefix_groups(split, leads))


def _prefix_groups(split: list[list[str]], leads: Counter[str]) -> set[str]:
    """The lead words of prefix groups in one source's split names."""
    # A prefix group (``jira_`` and ``confluence_`` in one server): a lead word of 3 or more
    # names that, in most of them, is followed by an action word and an object — unlike
    # ``pods_list`` or ``stories-get-by-id``, where the lead word is what the action acts
    # on: a lead word that 3 names end on a verb after (or a qualifier) is a resource.
    prefixed: Counter[str] = Counter()
    bare: Counter[str] = Counter()
    for w in split:
        if len(w) > 1 and w[1].lower() in ACTIONS and w[0].lower() not in ACTIONS:
            (bare if _ends_on_verb(w) else prefixed)[w[0].lower()] += 1
    return {w for w, c in prefixed.items()
            if c >= 3 and c >= NAMESPACE_SHARE * leads[w] and bare[w] < 3}


def _ends_on_verb(words: list[str]) -> bool:
    """A name whose second word is its verb ends there (or goes on with a qualifier)."""
    after = words[2].lower() if len(words) > 2 else ""
    return not after or after in STOPWORDS or after in QUALIFIER_STARTS


def _boilerplate(descriptions: Sequence[str]) -> Boilerplate:
    """Step 2 of :func:`source_context`: the longest word prefix and suffix most of the
    descriptions share."""
    need = max(3, math.ceil(BOILERPLATE_SHARE * len(descriptions)))
    # Only the first and last BOILERPLATE_MAX_WORDS + 1 words can matter (a prefix must go
    # on after it): splitting whole descriptions held every word of a catalog at once.
    keep = BOILERPLATE_MAX_WORDS + 1
    prefix = _common_prefix([d.split(None, keep)[:keep] for d in descriptions], need)
    suffix = _common_prefix([d.rsplit(None, keep)[-keep:][::-1] for d in descriptions],
                            need)[::-1]
    return prefix, suffix


def _domain_words(profiles: Sequence[Profile]) -> frozenset[str]:
    """The content words (not actions, not generic) at least :data:`DOMAIN_SHARE` of a
    source's tools name in their description or name: what the server is about ("calendar",
    "kubernetes", "pubmed"). Sources of fewer than 3 tools have none (too little evidence)."""
    if len(profiles) < 3:
        return frozenset()
    counts: Counter[str] = Counter()
    for p in profiles:
        counts.update(p.description | p.objects | p.domain)
    floor = max(2, math.ceil(DOMAIN_SHARE * len(profiles)))
    return frozenset(w for w, c in counts.items()
                     if c >= floor and w not in GENERIC_WORDS and w not in ACTION_GROUPS
                     and w not in ACTIONS and not w.isdigit() and len(w) > 2)


_WEB = frozenset({"web"})


def profiles_of(tools: Sequence[tuple[str, str, str]]) -> list[Profile]:
    """Profiles of (source, name, description) triples, each read in its source's context:
    its namespace words, boilerplate and domain words."""
    by_source: dict[str, list[int]] = defaultdict(list)
    for i, (source, _, _) in enumerate(tools):
        by_source[source].append(i)
    out: list[Profile] = [Profile("", "", False, frozenset(), frozenset(), frozenset())
                          ] * len(tools)
    shared: dict[frozenset[str], frozenset[str]] = {}
    for source, idx in by_source.items():
        for i, p in zip(idx, _source_profiles(source, [tools[i] for i in idx], shared),
                        strict=True):
            out[i] = p
    return out


def _source_profiles(source: str, tools: list[tuple[str, str, str]],
                     shared: dict[frozenset[str], frozenset[str]]) -> list[Profile]:
    """The profiles of one source's tools, read in its context (namespace, boilerplate,
    brands, repeated sentences, domain words and subject areas)."""
    namespace, boilerplate = source_context([t[1] for t in tools], [t[2] for t in tools])
    named, brands = _source_names(source)
    repeated = repeated_sentences([t[2] for t in tools])
    mine = [Profile.of(t[1], t[2], namespace, boilerplate, brands, repeated) for t in tools]
    words = _domain_words(mine)
    source_areas = areas_of(words | named)
    return [_in_context(p, source, words, source_areas, shared) for p in mine]


def _source_names(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """The words of a source's name (a server slug, a file name: it says what the source is
    about), and those of them that may be its brand."""
    named = frozenset(singular(w) for w in split_identifier(source) if len(w) > 1)
    return named, frozenset(w for w in named if w not in SOURCE_NOISE and w not in ACTIONS)


def _in_context(p: Profile, source: str, words: frozenset[str], source_areas: frozenset[str],
                shared: dict[frozenset[str], frozenset[str]]) -> Profile:
    """One profile with its source, domain words, context words and subject areas (its
    word sets shared with equal ones seen before)."""
    context = (p.description | p.domain) & words
    areas = areas_of(p.description | p.objects | p.domain) | source_areas
    if p.action in BROWSER_ACTIONS:
        areas |= _WEB
    return replace(p, source=source, **_shared_sets(
        p, shared, domain_words=words, context=context, areas=areas))


def _shared_sets(profile: Profile, shared: dict[frozenset[str], frozenset[str]],
                 **sets: frozenset[str]) -> dict[str, Any]:
    """``profile``'s word sets, with ``sets`` in place of its own, each replaced by the equal
    set seen first: forks and releases repeat names and descriptions, so a registry's
    profiles share most of their sets (the 100,000-tool realistic mirror has 3,152 distinct
    description sets)."""
    for name in _WORD_SETS:
        value = sets.get(name, getattr(profile, name))
        sets[name] = shared.setdefault(value, value)
    return sets


#: The :class:`Profile` fields that hold word sets.
_WORD_SETS = tuple(f.name for f in fields(Profile) if str(f.type).startswith("frozenset"))


#: Same object words with a namespace dropped from one name only, across sources
#: (``excel_create_table`` vs a slide server's ``add_table``), also need this description
#: similarity unless the other tool names the namespace: the namespace named the domain.
NAMESPACED_FLOOR = 0.35
#: Description similarity needed when one object narrows the other with the same head noun
#: (``interline tickets`` vs ``tickets``, ``diff staged`` vs ``diff``): a variant a common
#: request fits, so only descriptions that share next to nothing tell them apart.
NARROWING_FLOOR = 0.25
#: Description similarity needed when one name has no object words (``git_show``).
EMPTY_OBJECT_FLOOR = 0.45


def other_domains(a: Profile, b: Profile, threshold: float) -> bool:
    """True when two tools of different sources are about different things.

    The subject areas of the lexicon (:mod:`._domains`) decide where it knows both sides:
    areas that do not meet (calendar vs Kubernetes events, spreadsheet vs slide tables) are
    different; areas that meet (a Jira and a Linear issue: "tracker") are one domain, two
    backends a request need not name. Where it does not, descriptions less similar than
    ``threshold`` besides the action and object words, each naming a domain word of its own
    source (a word many of its tools use, or its namespace) that the other tool's source and
    description never use, of sources that share no domain word besides the pair's object,
    are different. A tool whose description names no domain word is told apart by nothing."""
    if a.source == b.source:
        return False
    if a.areas and b.areas:  # the lexicon knows what both are about
        return a.areas.isdisjoint(b.areas)
    shared = a.objects | b.objects
    ca, cb = a.context - shared, b.context - shared
    if not ca or not cb:
        return False
    if not (ca.isdisjoint(b.description | b.domain_words | b.domain)
            and cb.isdisjoint(a.description | a.domain_words | a.domain)):
        return False
    # two servers about overlapping things (two trackers, two git hosts) are backends of
    # the same domain: a request need not name either
    if (a.domain_words & b.domain_words) - shared:
        return False
    # what the descriptions say besides the action and the object they share
    common = shared | ACTION_CLASSES
    return jaccard(a.description - common, b.description - common) < threshold


#: The read actions that return a collection when neither reads one identified item.
COLLECTION = frozenset(("get", "list"))


#: The verbs of the get class that ask for items, not for their content (``read_file``,
#: ``open_page`` read what is inside one).
COLLECTION_VERBS = frozenset(("get", "fetch", "retrieve", "obtain", "getter"))


def _one_collection(a: Profile, b: Profile) -> bool:
    """A get and a list on the same object return the same collection when the get asks for
    items in the plural or all of them (``get_projects``; not ``get_issue`` by id, not
    ``read_file``: its content) and neither reads one identified item. Where one object
    narrows the other (same head noun), the get must be the narrower one: a list or search
    takes filters, so it reaches a request for part of its collection ("my completed tasks",
    "the target languages"); a get of a whole collection does not reach a list of part of it
    (``get_projects`` vs ``list_group_projects``)."""
    get, other = (a, b) if a.action == "get" else (b, a)
    return (other.objects <= get.objects and "one" not in (a.cardinality, b.cardinality)
            and get.action_word.lower() in COLLECTION_VERBS
            and (get.plural or get.cardinality == "all"))


def _one_object(a: Profile, b: Profile, threshold: float) -> bool:
    """Both act on one object in one domain: the same head noun, one object inside the
    other, no different domains, no different argument kinds named."""
    if not a.objects or a.head != b.head or \
            not (a.objects <= b.objects or b.objects <= a.objects) or \
            other_domains(a, b, threshold):
        return False
    return not (a.kinds and b.kinds and a.kinds.isdisjoint(b.kinds))


def _contrasting(a: Profile, b: Profile, threshold: float) -> Similarity | None:
    """Two contrasting action classes (:data:`CONTRASTING`) on the same object (one object
    narrows the other with the same head noun: the tag of ``remove_tag_from_task`` is the tag
    of ``delete_tag``), in one domain: confusable, with effects that contradict."""
    pair = frozenset((a.action, b.action))
    statement = (a.head in STATEMENTS and pair in STATEMENT_PAIRS) or pair in EQUIVALENT
    if (pair not in CONTRASTING and not statement) or not _one_object(a, b, threshold):
        return None
    if pair == COLLECTION and not _one_collection(a, b):
        return None
    return Similarity("name", f"{a.action}|{b.action}", (a.action_word, b.action_word),
                      tuple(sorted(a.objects)), jaccard(a.description, b.description),
                      tuple(sorted(a.description & b.description)),
                      (a.inferred_action, b.inferred_action),
                      tuple(sorted(a.variants ^ b.variants)), contrasting=not statement)


#: Name words that ask for the details of one identified item (``search_detail``: the POI a
#: search found, by its id).
DETAIL_WORDS = frozenset({"detail", "details"})


def _search_vs_one(a: Profile, b: Profile) -> bool:
    """A search (list class) vs a tool of the same class whose name says it reads one
    identified item — its details, or by id: a search request and a "details of this one"
    request differ. (A search "by name" is a filter, not an identity.)"""
    def one(p: Profile) -> bool:
        return "id" in p.kinds or bool(DETAIL_WORDS & p.variants)
    return a.action == "list" and one(a) != one(b)


def _told_apart(a: Profile, b: Profile, threshold: float) -> bool:
    """Step 1 of :func:`similarity` (same action class): what the names say tells the two
    apart — argument kinds, every item vs one, the current one vs an identified one, or
    different domains."""
    if a.kinds and b.kinds and a.kinds.isdisjoint(b.kinds):
        return True
    if {a.cardinality, b.cardinality} == {"all", "one"} or _search_vs_one(a, b):
        return True  # every item vs one identified item: the request says which
    if ("now" in a.kinds and b.cardinality == "one") or ("now" in b.kinds and
                                                         a.cardinality == "one"):
        return True  # the current one (mine, today's) vs one the request identifies
    return other_domains(a, b, threshold)


def _same_name(a: Profile, b: Profile, same_area: bool) -> bool:
    """Step 2 of :func:`similarity`: the same object words, or (in one server) names that
    differ only in variant words (``fetch_html`` / ``fetch_markdown``; not ``ls`` /
    ``grep``: one class, two verbs), or a verb that names the whole job in any server
    (``translate``, ``translate_text``; not ``ticket_login`` vs ``message_login``: each name
    says whose login it is)."""
    return bool(a.objects == b.objects and a.head == b.head and (a.objects or same_area or (
            a.source == b.source and a.action_word.lower() == b.action_word.lower()) or (
            _verb_names_job(a, b))))


def _verb_names_job(a: Profile, b: Profile) -> bool:
    """The shared verb names the whole job (not a broad or inferred action), and the names
    do not each say whose it is (disjoint domains)."""
    return a.action not in BROAD_ACTIONS and not (a.inferred_action or b.inferred_action) \
        and not (a.domain and b.domain and a.domain.isdisjoint(b.domain))


def _name_score(a: Profile, b: Profile, same_area: bool) -> float | None:
    """Step 3a of :func:`similarity`: the description score of a same-name pair, or None
    when only one side names a domain its descriptions never mention."""
    score = jaccard(a.description, b.description)
    one_sided = a.source != b.source and (bool(a.domain) != bool(b.domain))
    if one_sided and score < NAMESPACED_FLOOR and not same_area and \
            (a.domain | b.domain).isdisjoint(a.description | b.description):
        return None
    return score


def _description_score(a: Profile, b: Profile, threshold: float) -> float | None:
    """Step 3b of :func:`similarity`: the description score of a pair with different names
    when it reaches the floor that fits their objects, else None."""
    if not a.objects or not b.objects:
        need = max(threshold, EMPTY_OBJECT_FLOOR)
    elif a.head == b.head and (a.objects <= b.objects or b.objects <= a.objects):
        need = min(threshold, NARROWING_FLOOR)
    else:
        return None
    score = jaccard(a.description, b.description)
    if score < need - 1e-12:
        return None
    return score


def similarity(a: Profile, b: Profile, threshold: float) -> Similarity | None:
    """The confusability of two profiles, or None when a model would tell them apart.

    Same action class required, and neither different domains (:func:`other_domains`) nor
    different argument kinds named in the names (``from_file`` vs ``from_url``); then the
    same object words (``name``), or description similarity of at least ``threshold`` when
    the objects have the same head noun (``open issues`` vs ``issues``), or at least
    :data:`EMPTY_OBJECT_FLOOR` when one name has no object (``description``). Objects with
    different head nouns are different things (``project update`` is not a ``project``) and
    never confusable on descriptions alone.
    """
    if not a.action:
        return None
    if a.action != b.action:
        return _contrasting(a, b, threshold)
    if _told_apart(a, b, threshold):
        return None
    same_area = a.source != b.source and bool(a.areas & b.areas)
    if _same_name(a, b, same_area):
        score = _name_score(a, b, same_area)
        basis, objects = "name", a.objects
    else:
        score = _description_score(a, b, threshold)
        basis, objects = "description", a.objects & b.objects
    if score is None:
        return None
    # What the finding shows is built only for pairs that are confusable.
    bulk = (("all" in a.variants) != ("all" in b.variants) and bool(objects)
            and a.effect not in (None, "read-only") and b.effect not in (None, "read-only"))
    return Similarity(basis, a.action, (a.action_word, b.action_word), tuple(sorted(objects)),
                      score, tuple(sorted(a.description & b.description)),
                      (a.inferred_action, b.inferred_action),
                      tuple(sorted(a.variants ^ b.variants)), bulk=bulk)


#: Partners per tool (docs/scan.md, "Scale"); partners beyond it are reported, not dropped.
MAX_PARTNERS_PER_TOOL = DEFAULT_MAX_PARTNERS


@dataclass(frozen=True)
class Candidates:
    """Confusable pairs, and the tools whose candidate search the per-tool bound cut short."""

    pairs: dict[tuple[int, int], Similarity]
    #: tool → (this many same-name partners were not examined, one of them)
    cut: dict[int, tuple[int, int]]
    #: tools whose description probe skipped list entries (a frequent token's older sets;
    #: most of them differ in object words and could never be candidates)
    probes_cut: int = 0


@lru_cache(maxsize=REMEMBERED_TEXTS)  # (forks share their description sets)
def _sketch(tokens: frozenset[str]) -> tuple[int, ...]:
    """Bottom-4 hashes of a description: tools with similar words sort next to each other."""
    return tuple(heapq.nsmallest(4, (_stable_hash(t) for t in tokens)))


def _neighbourhood(members: Sequence[int], profiles: Sequence[Profile], per_tool: int,
                   keys: set[tuple[int, int]], cut: dict[int, tuple[int, int]]) -> None:
    """Pairs within one same-name group: all of them, or for a group too large, each tool
    with its ``per_tool`` nearest in description order (the sorted-neighbourhood method of
    record linkage, Hernández and Stolfo, SIGMOD 1995)."""
    size = len(members)
    if size <= per_tool + 1:
        keys.update((x, y) for n, x in enumerate(members) for y in members[n + 1:])
        return
    order = sorted(members, key=lambda i: (_sketch(profiles[i].description), i))
    width = per_tool // 2
    for p, i in enumerate(order):
        near = _near(order, p, width)
        for j in near:
            keys.add((min(i, j), max(i, j)))
        first = next(j for j in order if j != i and j not in near)
        count, _ = cut.get(i, (0, first))
        cut[i] = (count + size - 1 - len(near), first)


_GroupKey = tuple[str, frozenset[str], str]


def _group_by_name(
    profiles: Sequence[Profile],
) -> tuple[dict[_GroupKey, list[int]], dict[str, list[int]], dict[int, _GroupKey]]:
    """Step 1: the same-name groups (action, objects, and the source when there are no
    objects), the tools per action, and each tool's group."""
    groups: dict[_GroupKey, list[int]] = defaultdict(list)
    by_action: dict[str, list[int]] = defaultdict(list)
    group_of: dict[int, _GroupKey] = {}
    for i, p in enumerate(profiles):
        if not p.action:
            continue
        by_action[p.action].append(i)
        group_of[i] = (p.action, p.objects, p.source if not p.objects else "")
        groups[group_of[i]].append(i)
    return groups, by_action, group_of


def _same_name_pairs(groups: dict[_GroupKey, list[int]], profiles: Sequence[Profile],
                     per_tool: int | None, keys: set[tuple[int, int]],
                     cut: dict[int, tuple[int, int]]) -> dict[tuple[str, str], list[int]]:
    """Step 2: pairs within each same-name group; returns the groups' representatives per
    (action, head noun) for the narrowing step."""
    heads: dict[tuple[str, str], list[int]] = defaultdict(list)
    for members in groups.values():
        _neighbourhood(members, profiles, per_tool if per_tool is not None else len(members),
                       keys, cut)
        seen: set[str] = set()
        for i in members:  # a group's members may name their head in different places
            p = profiles[i]
            if p.head and p.head not in seen:
                seen.add(p.head)
                heads[(p.action, p.head)].append(i)
    return heads


def _area_pairs(profiles: Sequence[Profile], per_tool: int | None,
                keys: set[tuple[int, int]]) -> None:
    """Step 3: tools whose names carry no object words, across sources: the subject areas
    their descriptions name decide (two web searches), so they meet per (action, area)."""
    by_area: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, p in enumerate(profiles):
        if p.action and not p.objects:
            for area in sorted(p.areas):
                by_area[(p.action, area)].append(i)
            if p.action not in BROAD_ACTIONS and not p.inferred_action:
                by_area[(p.action, "")].append(i)  # the verb names the job: any area
    for members in by_area.values():
        if len(members) > 1:
            _neighbourhood(members, profiles,
                           per_tool if per_tool is not None else len(members), keys, {})


def _contrasts(kx: _GroupKey, ky: _GroupKey, head: str) -> bool:
    """Whether two groups' action classes contrast (or are equivalent) on one head noun."""
    pair = frozenset((kx[0], ky[0]))
    return pair in CONTRASTING or pair in EQUIVALENT or (
        pair in STATEMENT_PAIRS and head in STATEMENTS)


def _keys_by_head(groups: dict[_GroupKey, list[int]],
                  profiles: Sequence[Profile]) -> dict[str, set[_GroupKey]]:
    """The keys of the groups with object words, per head noun their members name."""
    by_head: dict[str, set[_GroupKey]] = defaultdict(set)
    for key, members in groups.items():
        if key[1]:
            for i in members:
                by_head[profiles[i].head].add(key)
    return by_head


def _contrast_pairs(groups: dict[_GroupKey, list[int]], profiles: Sequence[Profile],
                    per_tool: int | None, keys: set[tuple[int, int]]) -> None:
    """Step 4: contrasting actions on one object (delete vs detach, close vs delete): group
    keys by head noun, then pair the groups whose action classes contrast."""
    by_head = _keys_by_head(groups, profiles)
    bound = per_tool if per_tool is not None else len(profiles)
    for heads_found in by_head.values():
        keyed = sorted(heads_found, key=lambda k: (k[0], sorted(k[1])))
        for n, kx in enumerate(keyed):
            for ky in keyed[n + 1:]:
                if _contrasts(kx, ky, profiles[groups[kx][0]].head):
                    for i in groups[kx][:bound]:
                        for j in groups[ky][:bound]:
                            keys.add((min(i, j), max(i, j)))


def _narrowing_pairs(heads: dict[tuple[str, str], list[int]],
                     groups: dict[_GroupKey, list[int]], group_of: dict[int, _GroupKey],
                     profiles: Sequence[Profile], per_tool: int | None,
                     keys: set[tuple[int, int]]) -> None:
    """Step 5: narrowing pairs (same head noun, one object inside the other): one
    representative per object group meets the others' representatives; its group mates then
    pair the same way."""
    narrow: set[tuple[int, int]] = set()
    for reps in heads.values():
        if len(reps) > 1:
            _neighbourhood(reps, profiles, per_tool if per_tool is not None else len(reps),
                           narrow, {})
    for x, y in narrow:
        for i in groups[group_of[x]][:(per_tool or len(groups[group_of[x]]))]:
            for j in groups[group_of[y]][:(per_tool or len(groups[group_of[y]]))]:
                keys.add((min(i, j), max(i, j)))


def _description_pairs(by_action: dict[str, list[int]], group_of: dict[int, _GroupKey],
                       profiles: Sequence[Profile], threshold: float, per_tool: int | None,
                       keys: set[tuple[int, int]]) -> int:
    """Step 6: same-action pairs whose descriptions reach ``threshold`` (prefix-filtered per
    action); returns how many tools' probes were cut short."""
    probes_cut = 0
    for members in by_action.values():
        local: dict[int, tuple[int, int]] = {}
        found = similar_pairs([profiles[i].description for i in members], threshold,
                              max_postings=per_tool,
                              cut=local)
        # a same-group pair is the group's to choose (all of it, or the neighbourhood)
        keys.update((members[x], members[y]) for x, y in found
                    if group_of[members[x]] != group_of[members[y]])
        probes_cut += len(local)
    return probes_cut


def _confusable(keys: set[tuple[int, int]], profiles: Sequence[Profile],
                threshold: float) -> dict[tuple[int, int], Similarity]:
    """Step 7: the candidate keys that :func:`similarity` finds confusable, in key order."""
    out: dict[tuple[int, int], Similarity] = {}
    shared: dict[Similarity, Similarity] = {}  # forks repeat pairs: one object per value
    for i, j in sorted(keys):
        sim = similarity(profiles[i], profiles[j], threshold)
        if sim is not None:
            out[(i, j)] = shared.setdefault(sim, sim)
    return out


def _near(order: list[int], p: int, width: int) -> list[int]:
    """The tools within ``width`` places of place ``p`` in description order (with no width:
    its neighbour in twos)."""
    size = len(order)
    if width:
        return [order[q] for q in range(max(0, p - width), min(p + 1 + width, size)) if q != p]
    return [order[p ^ 1]] if p ^ 1 < size else []  # one partner: neighbours in twos


def bounded_candidate_pairs(
    profiles: Sequence[Profile], threshold: float, per_tool: int | None = MAX_PARTNERS_PER_TOOL
) -> Candidates:
    """All confusable pairs: same (action, object) groups, plus same-action pairs whose
    descriptions reach ``threshold`` (prefix-filtered per action, never all pairs) — with at
    most ``per_tool`` partners per tool from a same-name group and ``per_tool`` entries and
    partners per description probe (``None``: exact, and quadratic in the largest group)."""
    keys: set[tuple[int, int]] = set()
    cut: dict[int, tuple[int, int]] = {}
    groups, by_action, group_of = _group_by_name(profiles)
    heads = _same_name_pairs(groups, profiles, per_tool, keys, cut)
    _area_pairs(profiles, per_tool, keys)
    _contrast_pairs(groups, profiles, per_tool, keys)
    _narrowing_pairs(heads, groups, group_of, profiles, per_tool, keys)
    probes_cut = _description_pairs(by_action, group_of, profiles, threshold, per_tool, keys)
    return Candidates(_confusable(keys, profiles, threshold), dict(sorted(cut.items())),
                      probes_cut)


def candidate_pairs(
    profiles: Sequence[Profile], threshold: float
) -> dict[tuple[int, int], Similarity]:
    """Every confusable pair, exactly (no per-tool bound): the reference the bounded
    selection is tested against."""
    return bounded_candidate_pairs(profiles, threshold, None).pairs
