"""A synthetic long-lived memory: 500 facts an assistant could hold about one person and their
work, what a conversation says when one of them changes, and facts said twice under two keys.

Used by benchmarks/key_reuse.py and benchmarks/dedupe.py. Everything is drawn from a seeded
``random.Random``: the same seed gives the same memory.

Facts come from *families*: a key pattern, a few ways to phrase the value, a few ways a person
says it has changed (first person, in passing, as people do: "Marta moved to Lisbon", "we
moved last month, Berlin now"), and a way to say the same fact again under another key (what a
flusher that did not reuse a key would write). Some families are about a named entity (a
friend, a project, a pet: the name is in the key and the value), others about the person
alone (home city, employer, diet: nothing but the topic ties a restatement to the fact).

The families are split into two halves (``split``): constants are tuned on ``dev`` and
reported on ``test``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

FIRST = [
    "Marta",
    "Jonas",
    "Priya",
    "Tomasz",
    "Aiko",
    "Lucas",
    "Fatima",
    "Omar",
    "Elena",
    "Sven",
    "Chloe",
    "Ravi",
    "Ingrid",
    "Diego",
    "Hannah",
    "Kofi",
    "Mei",
    "Pavel",
    "Sofia",
    "Yusuf",
    "Clara",
    "Bruno",
    "Leila",
    "Mateo",
    "Nora",
    "Felix",
    "Amara",
    "Hugo",
    "Zara",
    "Emil",
    "Ana",
    "Rafael",
    "Greta",
    "Kenji",
    "Lena",
    "Samir",
    "Olga",
    "Tariq",
    "Beatriz",
    "Anton",
]
CITIES = [
    "Lisbon",
    "Porto",
    "Berlin",
    "Munich",
    "Vienna",
    "Prague",
    "Warsaw",
    "Krakow",
    "Oslo",
    "Bergen",
    "Stockholm",
    "Malmo",
    "Copenhagen",
    "Aarhus",
    "Helsinki",
    "Tallinn",
    "Riga",
    "Dublin",
    "Cork",
    "Glasgow",
    "Leeds",
    "Bristol",
    "Lyon",
    "Nantes",
    "Bordeaux",
    "Ghent",
    "Utrecht",
    "Rotterdam",
    "Basel",
    "Zurich",
    "Turin",
    "Bologna",
    "Valencia",
    "Seville",
    "Bilbao",
    "Athens",
    "Ljubljana",
    "Zagreb",
    "Budapest",
    "Bratislava",
]
JOBS = [
    "nurse",
    "architect",
    "teacher",
    "dentist",
    "pharmacist",
    "translator",
    "chef",
    "journalist",
    "pilot",
    "accountant",
    "electrician",
    "lawyer",
    "physiotherapist",
    "librarian",
    "carpenter",
    "photographer",
    "veterinarian",
    "firefighter",
    "economist",
    "midwife",
]
COMPANIES = [
    "Acme",
    "Globex",
    "Initech",
    "Umbrella",
    "Hooli",
    "Vandelay",
    "Stark",
    "Wayne",
    "Tyrell",
    "Cyberdyne",
    "Soylent",
    "Wonka",
    "Oscorp",
    "Aperture",
    "Gringotts",
    "Monarch",
    "Nakatomi",
    "Prestige",
    "Dunder",
    "Sterling",
]
PROJECTS = [
    "Atlas",
    "Beacon",
    "Comet",
    "Delta",
    "Ember",
    "Falcon",
    "Glacier",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lantern",
    "Meridian",
    "Nimbus",
    "Orchid",
    "Pioneer",
    "Quartz",
    "Raven",
    "Summit",
    "Tundra",
    "Umber",
    "Vertex",
    "Willow",
    "Zephyr",
]
STACKS = """Django and PostgreSQL|FastAPI and SQLite|Rails and MySQL|Go and Redis|Spring Boot and
Oracle|Next.js and Supabase|Elixir and Phoenix|Flask and MongoDB|Rust and Axum|Laravel and
MariaDB|Node.js and DynamoDB|Kotlin and Ktor""".replace("\n", " ").split("|")
STATUSES = ["design", "beta", "code freeze", "maintenance mode", "user testing", "production"]
TEAMS = [
    "payments",
    "search",
    "mobile",
    "platform",
    "growth",
    "security",
    "data",
    "billing",
    "infra",
    "support",
]
ROLES = ["tech lead", "product manager", "designer", "QA engineer", "data scientist",
         "scrum master", "engineering manager", "site reliability engineer"]  # fmt: skip
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
FOODS = ["dry kibble", "wet food", "a grain-free diet", "raw food", "a senior formula"]
PETS = ["Biscuit", "Pepper", "Miso", "Luna", "Oscar", "Tofu", "Mango", "Ziggy"]
DISHES = [
    "ramen",
    "pad-thai",
    "risotto",
    "tacos",
    "pho",
    "falafel",
    "schnitzel",
    "paella",
    "lasagne",
    "curry",
    "dumplings",
    "burrito",
    "gnocchi",
    "shakshuka",
    "pierogi",
]
RESTAURANTS = [
    "Nonna's",
    "Sakura",
    "Taqueria",
    "Bombay",
    "Olive",
    "Saffron",
    "Lotus",
    "Bistro",
    "Koi",
    "Marigold",
    "Fig",
    "Harissa",
    "Cedar",
    "Basil",
    "Tamarind",
    "Juniper",
    "Bramble",
    "Copper",
    "Fennel",
    "Pomelo",
]
SERVICES = [
    "Netflix",
    "Spotify",
    "Audible",
    "Dropbox",
    "iCloud",
    "Duolingo",
    "Headspace",
    "Strava",
    "Notion",
    "Figma",
    "Peloton",
    "Kindle",
    "Patreon",
    "Substack",
    "YouTube",
]
DIETS = ["vegetarian", "vegan", "pescatarian", "gluten-free", "lactose-free", "on a keto diet"]
DRINKS = ["flat white", "oat latte", "double espresso", "green tea", "chai latte", "cortado",
          "americano", "matcha"]  # fmt: skip
PHONES = ["Pixel 8", "iPhone 15", "Galaxy S23", "Fairphone 5", "iPhone 13", "Pixel 6"]
EDITORS = ["Vim", "VS Code", "Emacs", "PyCharm", "Neovim", "Sublime Text", "Zed", "Helix"]
WEEKDAYS = ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays"]
CARS = ["Volvo estate", "Toyota Yaris", "VW Golf", "Tesla Model 3", "Skoda Octavia", "Kia Niro"]
LANGUAGES = ["Spanish", "Japanese", "German", "Italian", "Portuguese", "Korean", "Dutch"]
TRANSPORT = ["bike", "train", "bus", "tram", "car", "scooter"]
INSTRUMENTS = ["piano", "guitar", "cello", "drums", "violin", "ukulele"]
SPORTS = ["running", "climbing", "swimming", "tennis", "yoga", "rowing", "cycling"]
BANKS = ["Monzo", "N26", "Revolut", "ING", "Nordea", "HSBC"]


def _date(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)}"


def _price(rng: random.Random) -> str:
    return f"{rng.randint(3, 25)}.{rng.choice(['00', '49', '99'])} euros"


# Each family: kind (the entity list it is about, or None), key, value phrasings, restatement
# phrasings ({new}), duplicate (another key and phrasing of the same fact), and the values.
# {E}: the entity's name, {e}: its key form, {v}: the value, {new}: the new value.
@dataclass(frozen=True)
class Family:
    name: str
    entity: str | None
    key: str
    values: tuple[str, ...]
    restates: tuple[str, ...]
    dup_key: str
    dup_value: str
    draw: str  # which value list (or generator) to draw from


FAMILIES = [
    # -- about a friend ---------------------------------------------------------------------
    Family("friend.city", "friend", "friend.{e}.city", ("{E} lives in {v}.", "{E} is based in {v}."),
           ("{E} just moved to {new}, can you believe it?", "Oh, {E} relocated to {new} last month.",
            "{E} lives in {new} now, she took a job there."),
           "{e}_home", "{E}'s home is in {v}.", "city"),
    Family("friend.job", "friend", "friend.{e}.job", ("{E} works as a {v}.", "{E} is a {v}."),
           ("{E} retrained and works as a {new} now.", "Did I mention {E} became a {new}?",
            "{E} quit and is a {new} these days."),
           "{e}_occupation", "{E}'s occupation: {v}.", "job"),
    Family("friend.birthday", "friend", "friend.{e}.birthday", ("{E}'s birthday is on {v}.",),
           ("Turns out {E}'s birthday is {new}, not what I told you.",
            "Correction: {E} was born on {new}."),
           "birthday_{e}", "{E} celebrates their birthday on {v}.", "date"),
    Family("friend.sport", "friend", "friend.{e}.sport", ("{E} is into {v}.", "{E} loves {v}."),
           ("{E} gave that up and does {new} now.", "These days {E} is all about {new}."),
           "{e}_hobby", "{E}'s favourite sport is {v}.", "sport"),
    Family("friend.partner", "friend", "friend.{e}.partner", ("{E} is married to {v}.", "{E}'s partner is {v}."),
           ("{E} and her husband split up; she is seeing {new} now.", "{E} got together with {new}."),
           "{e}_spouse", "{E} lives with their partner {v}.", "partner"),
    # -- about a colleague --------------------------------------------------------------------
    Family("colleague.role", "colleague", "colleague.{e}.role", ("{E} is the team's {v}.",),
           ("{E} was promoted, {E} is our {new} now.", "{E} moved into the {new} role."),
           "role_{e}", "{E} works as the {v} on the team.", "role"),
    Family("colleague.team", "colleague", "colleague.{e}.team", ("{E} works on the {v} team.",),
           ("{E} transferred to the {new} team.", "{E} left us for the {new} squad."),
           "{e}_squad", "{E} belongs to the {v} team.", "team"),
    Family("colleague.office", "colleague", "colleague.{e}.office", ("{E} works from the {v} office.",),
           ("{E} relocated to our {new} office.", "{E} is in {new} now, same team."),
           "{e}_location", "{E} is based at the {v} site.", "city"),
    # -- about a project ----------------------------------------------------------------------
    Family("project.deadline", "project", "project.{e}.deadline", ("The {E} project is due on {v}.",),
           ("The {E} deadline slipped to {new}.", "{E} now ships on {new}, they moved it."),
           "{e}_due_date", "{E} must be delivered by {v}.", "date"),
    Family("project.stack", "project", "project.{e}.stack", ("{E} is built with {v}.",),
           ("We rewrote {E} in {new}.", "{E} runs on {new} since the migration."),
           "{e}_tech", "The {E} tech stack is {v}.", "stack"),
    Family("project.status", "project", "project.{e}.status", ("{E} is in {v}.",),
           ("{E} just moved to {new}.", "Heads up, {E} is in {new} as of today."),
           "{e}_phase", "Current phase of {E}: {v}.", "status"),
    Family("project.owner", "project", "project.{e}.owner", ("{v} owns the {E} project.",),
           ("{new} took over {E}.", "{E} belongs to {new} now, ask them."),
           "{e}_lead", "The lead on {E} is {v}.", "first"),
    Family("project.client", "project", "project.{e}.client", ("{E} is built for {v}.",),
           ("The {E} contract moved, the client is {new} now.", "{new} is the customer for {E} now."),
           "{e}_customer", "{E}'s customer is {v}.", "company"),
    # -- about a relative ---------------------------------------------------------------------
    Family("family.city", "relative", "family.{e}.city", ("The user's {E} lives in {v}.",),
           ("My {E} moved to {new}.", "My {E} is in {new} these days."),
           "{e}_lives", "The user's {E} has a home in {v}.", "city"),
    Family("family.job", "relative", "family.{e}.job", ("The user's {E} works as a {v}.",),
           ("My {E} retrained as a {new}.", "My {E} is working as a {new} now."),
           "{e}_work", "The user's {E} is a {v} by profession.", "job"),
    # -- about a pet or a place ----------------------------------------------------------------
    Family("pet.vet", "pet", "pet.{e}.vet", ("{E}'s vet is Dr. {v}.",),
           ("We changed vets, {E} sees Dr. {new} now.", "Dr. {new} is {E}'s vet from now on."),
           "{e}_doctor", "{E} is treated by Dr. {v}.", "first"),
    Family("restaurant.city", "restaurant", "restaurant.{e}.city", ("{E} is a restaurant in {v}.",),
           ("{E} moved to {new}, sadly.", "{E} reopened in {new}."),
           "{e}_where", "The restaurant {E} is located in {v}.", "city"),
    Family("subscription.plan", "service", "subscription.{e}.plan", ("The user has the {v} plan of {E}.",),
           ("I switched {E} to the {new} plan.", "I'm on the {new} plan for {E} now."),
           "{e}_tier", "The user's {E} subscription is the {v} tier.", "plan"),
    Family("pet.food", "pet", "pet.{e}.food", ("{E} the cat eats {v}.",),
           ("The vet put {E} on {new}.", "We switched {E} to {new}."),
           "{e}_diet", "{E} is fed {v}.", "food"),
    Family("restaurant.dish", "restaurant", "restaurant.{e}.order", ("At {E} the user always orders {v}.",),
           ("At {E} I get the {new} now, it's better.", "{E} changed the menu so I order {new} there."),
           "{e}_usual", "The user's usual at {E} is {v}.", "dish"),
    Family("subscription.price", "service", "subscription.{e}.price", ("The user pays {v} a month for {E}.",),
           ("{E} went up to {new} a month, ugh.", "I'm paying {new} for {E} now."),
           "{e}_cost", "{E} costs the user {v} monthly.", "price"),
    # -- about the person alone ---------------------------------------------------------------
    Family("home_city", None, "home_city", ("Lives in {v}.",),
           ("We moved house last month, we're in {new} now.", "Since the move I live in {new}."),
           "residence", "The user's home is in {v}.", "city"),
    Family("employer", None, "employer", ("Works at {v}.",),
           ("I started at {new} this week!", "I left my job, I'm with {new} now."),
           "company", "The user is employed by {v}.", "company"),
    Family("job_title", None, "job_title", ("Works as a {v}.",),
           ("I got retrained, I'm a {new} now.", "My new position is {new}."),
           "occupation", "The user's occupation is {v}.", "job"),
    Family("diet", None, "diet", ("Is {v}.",),
           ("I went {new} in January.", "Food-wise I'm {new} now."),
           "eating_habits", "The user eats {v}.", "diet"),
    Family("coffee_order", None, "coffee_order", ("Orders a {v} every morning.",),
           ("These days my morning drink is a {new}.", "I switched my usual to a {new}."),
           "drink.morning", "Has a {v} each morning.", "drink"),
    Family("phone", None, "phone", ("Uses a {v}.",),
           ("I got a new {new}.", "My phone died so I bought a {new}."),
           "device.mobile", "The user's mobile is a {v}.", "phone"),
    Family("editor", None, "editor", ("Writes code in {v}.",),
           ("I switched to {new} for coding.", "{new} is my editor now."),
           "ide", "The user's preferred editor is {v}.", "editor"),
    Family("gym_days", None, "gym_days", ("Goes to the gym on {v}.",),
           ("My gym days are {new} now.", "I train on {new} these days."),
           "workout_schedule", "Works out on {v}.", "weekday"),
    Family("car", None, "car", ("Drives a {v}.",),
           ("We sold the old car and got a {new}.", "I drive a {new} now."),
           "vehicle", "The user's car is a {v}.", "car"),
    Family("language", None, "language_learning", ("Is learning {v}.",),
           ("I dropped that and started learning {new}.", "I'm studying {new} now."),
           "studying_language", "The user studies {v}.", "language"),
    Family("commute", None, "commute", ("Commutes by {v}.",),
           ("I take the {new} to work lately.", "My commute is by {new} now."),
           "transport.work", "Gets to work by {v}.", "transport"),
    Family("instrument", None, "instrument", ("Plays the {v}.",),
           ("I picked up the {new}.", "I'm taking {new} lessons now."),
           "music.plays", "The user plays {v}.", "instrument"),
    Family("bank", None, "bank", ("Banks with {v}.",),
           ("I moved my account to {new}.", "My bank is {new} now."),
           "banking", "The user's bank is {v}.", "bank"),
]  # fmt: skip

# Partners are not among the friends: "Zara's partner is Felix" beside "Felix is married to
# Zara" would be one fact under two keys, a duplicate the benchmark did not seed.
PARTNERS = ["Alex", "Robin", "Sam", "Kim", "Charlie", "Jamie", "Morgan", "Taylor", "Jordan",
            "Casey", "Riley", "Quinn", "Avery", "Rowan", "Sasha"]  # fmt: skip
SURNAMES = [
    "Adebayo",
    "Bergstrom",
    "Castillo",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ivanova",
    "Jensen",
    "Kowalski",
    "Lindqvist",
    "Moreau",
    "Nakamura",
    "Okafor",
    "Petrov",
    "Quinn",
    "Rossi",
    "Schmidt",
    "Tanaka",
    "Ueda",
    "Varga",
    "Weber",
    "Xu",
    "Yilmaz",
    "Zielinski",
]
RELATIVES = ["sister", "brother", "mother", "father", "aunt", "uncle", "cousin", "grandmother"]
PLANS = ["family", "student", "premium", "basic", "duo", "annual"]
ENTITIES = {
    "friend": FIRST,
    "colleague": SURNAMES,
    "relative": RELATIVES,
    "project": PROJECTS,
    "pet": PETS,
    "restaurant": RESTAURANTS,
    "service": SERVICES,
}
SLOT_OF = {
    None: "user",
    "friend": "user",
    "relative": "user",
    "pet": "user",
    "restaurant": "user",
    "service": "user",
}
DRAWS = {
    "city": CITIES,
    "job": JOBS,
    "sport": SPORTS,
    "role": ROLES,
    "team": TEAMS,
    "stack": STACKS,
    "status": STATUSES,
    "first": FIRST,
    "partner": PARTNERS,
    "food": FOODS,
    "dish": DISHES,
    "company": COMPANIES,
    "diet": DIETS,
    "drink": DRINKS,
    "phone": PHONES,
    "editor": EDITORS,
    "weekday": WEEKDAYS,
    "car": CARS,
    "language": LANGUAGES,
    "transport": TRANSPORT,
    "instrument": INSTRUMENTS,
    "bank": BANKS,
    "plan": PLANS,
    "allergen": ["peanuts", "penicillin", "cat hair", "pollen", "shellfish", "lactose"],
    "hour": ["10pm", "11pm", "midnight", "1am", "9:30pm"],
    "hours": ["9 to 5", "8 to 4", "10 to 6", "7 to 3", "noon to 8"],
    "cuisine": ["Thai", "Ethiopian", "Georgian", "Korean", "Lebanese", "Peruvian", "Sichuan"],
    "book": [
        "Middlemarch",
        "Dune",
        "The Overstory",
        "Piranesi",
        "Anna Karenina",
        "Project Hail Mary",
    ],
    "laptop": ["MacBook Air", "ThinkPad X1", "Dell XPS 13", "Framework 13", "Surface Laptop"],
    "isp": ["Vodafone", "Telia", "Orange", "Comcast", "Virgin Media", "Deutsche Telekom"],
}
FILLER = [
    ("user", "Can you help me draft an email to my landlord about the broken heater?"),
    ("assistant", "Of course. Here is a short, polite draft you can adapt."),
    ("user", "What's a quick dinner I can make with rice, eggs and spinach?"),
    ("assistant", "A spinach and egg fried rice takes about fifteen minutes."),
    ("user", "Summarise the main points of the article I pasted yesterday."),
    ("assistant", "It argues that remote teams need fewer, better meetings."),
    ("user", "Remind me how to undo the last git commit but keep the changes."),
    ("assistant", "Use git reset --soft HEAD~1; your changes stay staged."),
    ("user", "Thanks, that worked. Anyway, quick life update."),
    ("assistant", "Happy to hear it. What's new?"),
    ("user", "Ugh, long week. The weather has been awful too."),
    ("assistant", "Sorry to hear that. Anything I can take off your plate?"),
    ("user", "Can you suggest a birthday present for a ten year old who likes dinosaurs?"),
    ("assistant", "A fossil digging kit or a good illustrated dinosaur encyclopedia."),
    ("user", "How many grams are in a cup of flour?"),
    ("assistant", "About 120 grams, depending on how it is packed."),
    ("user", "Translate 'see you next week' into French please."),
    ("assistant", "A la semaine prochaine."),
    ("user", "Write a haiku about autumn rain."),
    ("assistant", "Cold rain on the roof, / leaves let go without a sound, / the kettle begins."),
]
ACKS = ["Noted, thanks for the update.", "Got it, I'll keep that in mind.", "Good to know!"]


@dataclass
class Fact:
    family: Family
    slot: str
    key: str
    value: str
    entity: str | None
    raw: str  # the value drawn for {v}


@dataclass
class Restatement:
    fact: Fact
    text: str  # what the person says
    new: str  # the new value


@dataclass
class Memory:
    facts: list[Fact] = field(default_factory=list)
    duplicates: list[tuple[Fact, Fact]] = field(default_factory=list)


def split(family: Family, part: str) -> bool:
    """Is ``family`` in ``part`` ("dev", "test" or "all")? Alternate families by their order."""
    if part == "all":
        return True
    index = FAMILIES.index(family)
    return (index % 2 == 0) == (part == "dev")


def _draw(rng: random.Random, draw: str, avoid: str | None = None) -> str:
    if draw == "date":
        value = _date(rng)
    elif draw == "price":
        value = _price(rng)
    else:
        value = rng.choice(DRAWS[draw])
    return value if value != avoid else _draw(rng, draw, avoid)


def _key_form(name: str) -> str:
    return name.lower().replace("'", "")


def _instances(rng: random.Random) -> list[tuple[Family, str | None]]:
    """Every (family, entity) the memory can hold."""
    found = []
    for family in FAMILIES:
        if family.entity is None:
            found.append((family, None))
        else:
            found.extend((family, entity) for entity in ENTITIES[family.entity])
    rng.shuffle(found)
    return found


def _fact(rng: random.Random, family: Family, entity: str | None) -> Fact:
    raw = _draw(rng, family.draw)
    fill = {"E": entity or "", "e": _key_form(entity or ""), "v": raw}
    value = rng.choice(family.values).format(**fill)
    slot = SLOT_OF.get(family.entity, "project")
    return Fact(family, slot, family.key.format(**fill), value, entity, raw)


def memory(seed: int, size: int = 500, duplicates: int = 0, part: str = "all") -> Memory:
    """``size`` facts in all; ``duplicates`` of them say an earlier one again under another key
    (drawn from the families of ``part``)."""
    rng = random.Random(seed)
    found = Memory()
    instances = _instances(rng)
    base = instances[: size - duplicates]
    found.facts = [_fact(rng, family, entity) for family, entity in base]
    candidates = [f for f in found.facts if split(f.family, part)]
    for original in rng.sample(candidates, duplicates):
        fill = {
            "E": original.entity or "",
            "e": _key_form(original.entity or ""),
            "v": original.raw,
        }
        twin = Fact(
            original.family,
            original.slot,
            original.family.dup_key.format(**fill),
            original.family.dup_value.format(**fill),
            original.entity,
            original.raw,
        )
        found.facts.append(twin)
        found.duplicates.append((original, twin))
    return found


def restatements(rng: random.Random, facts: list[Fact], count: int, part: str) -> list[Restatement]:
    """``count`` facts of the families of ``part``, each said again with a new value."""
    chosen = rng.sample([f for f in facts if split(f.family, part)], count)
    found = []
    for fact in chosen:
        new = _draw(rng, fact.family.draw, avoid=fact.raw)
        text = rng.choice(fact.family.restates).format(
            E=fact.entity or "", e=_key_form(fact.entity or ""), new=new
        )
        found.append(Restatement(fact, text, new))
    return found


def transcripts(rng: random.Random, said: list[Restatement], per: tuple[int, int] = (1, 3)):
    """Conversations (lists of {role, content}) carrying the restatements among small talk,
    each with the restatements it carries."""
    found, queue = [], list(said)
    while queue:
        take = [queue.pop() for _ in range(min(len(queue), rng.randint(*per)))]
        turns = [{"role": r, "content": t} for r, t in _filler(rng)]
        for item in take:
            at = rng.randrange(0, len(turns) + 1, 2)
            ack = rng.choice(ACKS)
            turns[at:at] = [
                {"role": "user", "content": item.text},
                {"role": "assistant", "content": ack},
            ]
        found.append((turns, take))
    return found


def _filler(rng: random.Random) -> list[tuple[str, str]]:
    pairs = [FILLER[i : i + 2] for i in range(0, len(FILLER), 2)]
    chosen = rng.sample(pairs, rng.randint(2, 5))
    return [turn for pair in chosen for turn in pair]
