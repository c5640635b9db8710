"""What agents store: standing facts with telling keys, and the questions that ask for them.

A development set beside LoCoMo for what reaches the prompt (benchmarks/context.py,
benchmarks/fit_relevance.py). Built on benchmarks/personal_memory.py's families (a friend's
city, a project's stack, the user's editor...): each family has *keyed* questions, which name
the key's topic ("Which editor do I use?"), and *paraphrased* ones, which share no word with
the key or the value ("Which IDE do I prefer?"); a question about a named entity names it, as
a person would ("What does Marta do for a living?"). Facts are written as agents write them:
half with a short value under a telling key (``editor`` = ``Neovim``), half as a sentence
(``Writes code in Neovim.``), in two slots (``user``, ``project``).

Near misses are everywhere: five facts about each friend, one family's fact about forty
people, the same value in several facts. A memory has ``size`` facts: 5, 50 and 500 are drawn
from the families; 5,000 adds LoCoMo's observations and dialog turns (benchmarks/observations.py,
benchmarks/locomo.py) to both slots as the rest of a long-lived memory (keys ``note.N``), none
of them the answer.

The parts: personal_memory.split's halves. The relevance model is fitted on the *dev*
families' questions, leaving one family out at a time to report; the *test* families are
never fitted or tuned on, and their figures are the ones to quote.
"""

from __future__ import annotations

import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import personal_memory as pm

SIZES = (5, 50, 500, 5000)
SLOTS = ("user", "project")

# family -> (keyed questions, paraphrased questions); {E}: the entity's name
QUESTIONS = {
    "friend.city": (("Which city does {E} live in?", "What city is {E} in?"),
                    ("Where is {E} these days?", "In what town did {E} settle?")),
    "friend.job": (("What is {E}'s job?", "What job does {E} have?"),
                   ("What does {E} do for a living?", "What is {E}'s profession?")),
    "friend.birthday": (("When is {E}'s birthday?",),
                        ("When was {E} born?", "On what day does {E} get a year older?")),
    "friend.sport": (("What sport does {E} do?", "Which sport is {E} into?"),
                     ("How does {E} stay fit?", "What does {E} play for exercise?")),
    "friend.partner": (("Who is {E}'s partner?",),
                       ("Who is {E}'s significant other?", "Who is {E} in a relationship with?")),
    "colleague.role": (("What is {E}'s role?", "What role does {E} have?"),
                       ("What is {E}'s position?", "What is {E} responsible for at the company?")),
    "colleague.team": (("Which team is {E} on?",),
                       ("Which group does {E} belong to?", "What squad is {E} part of?")),
    "colleague.office": (("Which office is {E} in?",),
                         ("Where is {E} located?", "Where does {E} sit?")),
    "project.deadline": (("What is the deadline for {E}?",),
                         ("When must {E} be finished?", "By what date do we need {E} done?")),
    "project.stack": (("What is the stack of {E}?", "What stack does {E} use?"),
                      ("What technology is {E} written in?", "Which frameworks power {E}?")),
    "project.status": (("What is the status of {E}?",),
                       ("How far along is {E}?", "What stage is {E} at?")),
    "project.owner": (("Who is the owner of {E}?",),
                      ("Who is responsible for {E}?", "Who leads {E}?")),
    "project.client": (("Who is the client for {E}?",),
                       ("Which customer is {E} for?", "Who pays for {E}?")),
    "family.city": (("Which city does my {E} live in?",),
                    ("Where is my {E} these days?", "Where is my {E} based?")),
    "family.job": (("What job does my {E} have?",),
                   ("What does my {E} do for a living?", "What is my {E}'s profession?")),
    "pet.vet": (("Who is {E}'s vet?",),
                ("Which animal doctor treats {E}?", "Where do I take {E} when sick?")),
    "restaurant.city": (("Which city is {E} in?",),
                        ("Where is {E} located?", "Where would I go to eat at {E}?")),
    "subscription.plan": (("Which plan do I have for {E}?",),
                          ("What tier of {E} am I on?", "What kind of {E} account do I have?")),
    "pet.food": (("What food does {E} get?",),
                 ("What do we feed {E}?", "What goes in {E}'s bowl?")),
    "restaurant.dish": (("What do I order at {E}?",),
                        ("What's my usual at {E}?", "What do I usually get at {E}?")),
    "subscription.price": (("What is the price of {E}?",),
                           ("How much does {E} cost me?", "What is my {E} bill?")),
    "home_city": (("What is my home city?", "Which city is home?"),
                  ("Where do I reside?", "Which town am I based in?")),
    "employer": (("Who is my employer?",),
                 ("Which company am I with?", "Who pays my salary?")),
    "job_title": (("What is my job title?",),
                  ("What do I do for a living?", "What is my profession?")),
    "diet": (("What diet do I follow?",),
             ("What foods do I avoid?", "Is there anything I don't eat?")),
    "coffee_order": (("What is my coffee order?",),
                     ("What do I drink at the cafe?", "What caffeinated drink do I usually get?")),
    "phone": (("What phone do I have?",),
              ("Which mobile device do I carry?", "What smartphone model is mine?")),
    "editor": (("Which editor do I use?",),
               ("What tool do I program with?", "Which IDE do I prefer?")),
    "gym_days": (("What are my gym days?",),
                 ("When do I work out?", "Which days do I exercise?")),
    "car": (("What car do I have?",),
            ("What vehicle do I own?", "What kind of automobile is mine?")),
    "language": (("Which language am I learning?",),
                 ("Which foreign tongue am I studying?", "What new way of speaking am I picking up?")),
    "commute": (("What is my commute?",),
                ("How do I get to the office?", "How do I travel to work?")),
    "instrument": (("Which instrument do I play?",),
                   ("What music do I make?", "Do I make music on anything?")),
    "bank": (("Which bank am I with?",),
             ("Where do I keep my money?", "Who holds my savings account?")),
}  # fmt: skip
SLOT_OF = {"colleague": "project", "project": "project"}

# Messages that mention a fact without asking for it ({W}: a word of its value that no other
# fact holds): what a user says in passing ("Can we use FastAPI for this?"). Half the templates
# are for the dev families, half for the test families, so no template is both fitted and quoted.
MENTIONS = {
    "dev": ("Can we use {W} for this?", "Any news about {W}?",
            "I was just thinking about {W}.", "Remind me what we said about {W}."),
    "test": ("Should I upgrade {W}?", "Is {W} still a good choice?",
             "Quick one about {W}.", "{W} came up in the meeting today."),
}  # fmt: skip
WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")


@dataclass(frozen=True)
class Fact:
    slot: str
    key: str
    value: str
    family: str | None  # None: a LoCoMo observation added to reach the size


@dataclass(frozen=True)
class Question:
    text: str
    kind: str  # "keyed", "paraphrased" or "mention"
    family: str
    answer: str  # the key of the fact that answers it


@dataclass
class Memory:
    name: str
    size: int
    facts: list[Fact]
    questions: list[Question]


def family_part(name: str) -> str:
    family = next(f for f in pm.FAMILIES if f.name == name)
    return "dev" if pm.split(family, "dev") else "test"


def memory(seed: int, size: int, padding: list[tuple[str, str]] = ()) -> Memory:
    """A memory of ``size`` facts (``padding``: the texts that fill it past 500) and a keyed
    and a paraphrased question about each drawn fact, of which ``QUESTIONS_PER_FAMILY`` per
    family are kept."""
    rng = random.Random(seed * 7919 + size)
    drawn = pm.memory(seed, min(size, 500))
    facts, questions = [], []
    for fact in drawn.facts:
        slot = SLOT_OF.get(fact.family.entity or "", "user")
        short = rng.random() < 0.5
        facts.append(Fact(slot, fact.key, fact.raw if short else fact.value, fact.family.name))
        keyed, paraphrased = QUESTIONS[fact.family.name]
        for kind, texts in (("keyed", keyed), ("paraphrased", paraphrased)):
            text = rng.choice(texts).format(E=fact.entity or "")
            questions.append(Question(text, kind, fact.family.name, fact.key))
    for i, (slot_hint, value) in enumerate(padding[: max(0, size - len(facts))]):
        facts.append(Fact(SLOTS[i % 2], f"note.{i:04d}", value, None))
    questions += mentions(facts, rng)
    rng.shuffle(questions)
    by_family: dict[str, list[Question]] = {}
    for question in questions:
        by_family.setdefault(question.family, []).append(question)
    chosen = [q for found in by_family.values() for q in found[:QUESTIONS_PER_FAMILY]]
    return Memory(f"seed{seed}-{size}", size, facts, chosen)


QUESTIONS_PER_FAMILY = 6  # per memory: two keyed, two paraphrased and two mentions on average


def mentions(facts: list[Fact], rng: random.Random) -> list[Question]:
    """A mention of each family fact whose value holds a word (of four letters or more) that no
    other fact of the memory holds: its longest such word, in one of its part's templates."""
    holders: dict[str, int] = {}
    for fact in facts:
        for word in {w.lower() for w in WORD.findall(fact.value)}:
            holders[word] = holders.get(word, 0) + 1
    found = []
    for fact in facts:
        if fact.family is None:
            continue
        own = [w for w in WORD.findall(fact.value) if holders[w.lower()] == 1]
        if own:
            word = max(own, key=len)
            template = rng.choice(MENTIONS[family_part(fact.family)])
            found.append(Question(template.format(W=word), "mention", fact.family, fact.key))
    return found


def padding(path=None) -> list[tuple[str, str]]:
    """LoCoMo's observations and dialog turns, as the rest of a long-lived memory."""
    import locomo
    import observations

    path = path or observations.DEFAULT_PATH
    found = [(f.slot, f.value) for m in observations.load(path) for f in m.facts]
    found += [("", text) for c in locomo.load(path) for _, text in c.turns]
    return found


def memories(seeds=(1, 2, 3), path=None) -> list[Memory]:
    pad = padding(path)
    return [memory(seed, size, pad) for seed in seeds for size in SIZES]


def build(mem: Memory, path: Path, embed: bool = True):
    from slotmem import Store

    store = Store(path, create=True)
    store.upsert_many({"slot": f.slot, "key": f.key, "value": f.value} for f in mem.facts)
    if embed:
        store.semantic.reindex()
    return store
